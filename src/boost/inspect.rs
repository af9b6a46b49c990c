//! The boosted model's trees as [`Inspect`](crate::Inspect) walks them.

use super::Booster;
use crate::scoring::{Inspected, ScoringTrees};
use crate::tree::Tree;

impl Inspected for Booster {
    fn inspected_trees(&self) -> &[Tree] {
        &self.trees
    }

    fn inspected_layout(&self) -> &ScoringTrees {
        self.scoring_layout().layout()
    }

    fn inspected_features(&self) -> usize {
        self.n_features
    }
}
