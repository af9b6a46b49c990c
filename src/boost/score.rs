//! What boosted trees' leaves add to rows' raw scores, through the shared scoring
//! engine ([`crate::scoring`]).

use std::ops::Range;
use std::sync::atomic::AtomicBool;

use super::model::tree_value;
use crate::data::{Feature, Rows};
use crate::scoring::ScoringTrees;
use crate::tree::Tree;

/// Boosted trees laid out for scoring, each leaf's slot the index of its value.
#[derive(Debug, Clone)]
pub(super) struct BoostScoring {
    layout: ScoringTrees,
    leaf_values: Vec<f64>,
}

impl BoostScoring {
    /// The layout of a model's `trees` of `n_features` features.
    pub(super) fn new(trees: &[Tree], n_features: usize) -> BoostScoring {
        let mut leaf_values = Vec::new();
        let layout = ScoringTrees::new(trees, n_features, |t, id| {
            leaf_values.push(tree_value(&trees[t], id));
            (leaf_values.len() - 1) as u32
        });
        BoostScoring {
            layout,
            leaf_values,
        }
    }

    /// Most rows to score together.
    pub(super) fn chunk_rows(&self) -> usize {
        self.layout.chunk_rows()
    }

    /// The trees' layout, for the engine's walks that need no leaf value (apply).
    pub(super) fn layout(&self) -> &ScoringTrees {
        &self.layout
    }

    /// Adds to `out` (`k_out` raw scores per row, zeroed or holding earlier sums) the
    /// leaf value of each of trees `trees` (tree `t` adds to output `t % k_out`) for
    /// every row of `rows`, tree after tree, as a walk of the trees one by one sums
    /// them. Stops early once `cancel` is set.
    pub(super) fn add_leaf_values<T: Feature>(
        &self,
        trees: Range<usize>,
        k_out: usize,
        rows: &Rows<'_, T>,
        out: &mut [f64],
        cancel: &AtomicBool,
    ) {
        self.layout.visit_leaves(trees, rows, cancel, |leaf| {
            let value = self.leaf_values[leaf.slot as usize];
            let output = leaf.tree % k_out;
            leaf.for_each_row(|r| out[r * k_out + output] += value);
        });
    }
}
