"""Sphinx configuration of the morf_rs documentation (built by scripts/docs.sh)."""

import os
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
# The package of this checkout where its extension was built in place (a developer's
# tree); otherwise the installed one (CI documents the wheel it tests).
if any((ROOT / "python" / "morf_rs").glob("_core*.so")):
    sys.path.insert(0, str(ROOT / "python"))

import morf_rs  # noqa: E402

project = "morf_rs"
author = "the morf_rs developers"
copyright = "the morf_rs developers, MIT licence"
release = morf_rs.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "numpydoc",
    "sphinx_gallery.gen_gallery",
]

templates_path = ["_templates"]
exclude_patterns = ["_build"]
root_doc = "index"

# API pages: one per public name, generated from the docstrings (api.rst).
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"inherited-members": True}
autodoc_typehints = "none"
numpydoc_show_class_members = False
# Short names in signatures and in the page's table of contents.
add_module_names = False
toc_object_entries_show_parents = "hide"

# MORF_DOCS_FAST=1 (what CI runs) executes only the quick examples; the others are
# shown as code without their figures.
FAST = os.environ.get("MORF_DOCS_FAST", "") not in ("", "0")
QUICK_EXAMPLES = r"plot_[0-9]_(forest_quickstart|booster_quickstart|missing_values)\.py"

sphinx_gallery_conf = {
    "examples_dirs": str(ROOT / "examples" / "gallery"),
    "gallery_dirs": "auto_examples",
    "filename_pattern": QUICK_EXAMPLES if FAST else r"plot_",
    "ignore_pattern": r"__init__\.py",
    "download_all_examples": False,
    "remove_config_comments": True,
    "abort_on_example_error": True,
    "matplotlib_animations": False,
    "within_subsection_order": "sphinx_gallery.sorting.FileNameSortKey",
}

html_theme = "pydata_sphinx_theme"
html_title = "morf_rs"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "header_links_before_dropdown": 4,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_show_sourcelink = False
html_static_path = ["_static"]
html_css_files = ["custom.css"]

# Methods inherited from scikit-learn keep their docstrings, whose cross-references
# point into scikit-learn's own site: shown as plain text here. Its metadata-routing
# methods (set_fit_request and the like) are left out of the pages.
_SKLEARN_REFERENCE = re.compile(r":(?:ref|term):`([^`<]*?)\s*(?:<[^>]*>)?`")
_METADATA_ROUTING = re.compile(r"set_\w+_request|get_metadata_routing")


def _plain_sklearn_references(app, what, name, obj, options, lines):
    if getattr(obj, "__module__", "").startswith("sklearn"):
        lines[:] = [_SKLEARN_REFERENCE.sub(r"\1", line) for line in lines]


def _skip_metadata_routing(app, what, name, obj, skip, options):
    return True if _METADATA_ROUTING.fullmatch(name) else None


def setup(app):
    app.connect("autodoc-process-docstring", _plain_sklearn_references)
    app.connect("autodoc-skip-member", _skip_metadata_routing)
