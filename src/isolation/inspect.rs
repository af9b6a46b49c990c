//! The isolation forest's trees as [`Inspect`](crate::Inspect) walks them.

use super::IsolationForest;
use crate::scoring::{Inspected, ScoringTrees};
use crate::tree::Tree;

impl Inspected for IsolationForest {
    fn inspected_trees(&self) -> &[Tree] {
        &self.trees
    }

    fn inspected_layout(&self) -> &ScoringTrees {
        &self.scoring_layout().layout
    }

    fn inspected_features(&self) -> usize {
        self.n_features
    }
}
