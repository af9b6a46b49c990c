//! One scoring engine for every model made of trees: the trees laid out once for
//! scoring ([`layout`]), rows sent down them a block at a time as bit masks
//! ([`walk`]) or row by row through compact nodes ([`row_walk`]), a split's side for
//! all of a block's rows in vector lanes ([`lanes`]).
//! What a leaf adds to a row (a boosted tree's value, a forest tree's class
//! distribution or mean values) is the model's: the engine says which rows reached
//! which leaf ([`inspect`] hands those leaves, and the rows' paths, to users).

mod bytes;
mod inspect;
mod lanes;
mod layout;
mod row_walk;
mod walk;

use std::sync::OnceLock;

pub(crate) use inspect::sealed::Inspected;
pub use inspect::{Inspect, NO_NODE};
pub(crate) use lanes::has_avx2;
pub(crate) use layout::ScoringTrees;

/// A value derived from a model on first use, such as its [`ScoringTrees`]. It is no
/// part of the model's value: models compare equal whether or not theirs is built.
#[derive(Debug, Clone)]
pub(crate) struct Derived<V>(OnceLock<V>);

impl<V> Default for Derived<V> {
    fn default() -> Self {
        Derived(OnceLock::new())
    }
}

impl<V> PartialEq for Derived<V> {
    fn eq(&self, _: &Derived<V>) -> bool {
        true
    }
}

impl<V> Derived<V> {
    /// The value, computed by `make` on first use.
    pub(crate) fn get_or_init(&self, make: impl FnOnce() -> V) -> &V {
        self.0.get_or_init(make)
    }
}
