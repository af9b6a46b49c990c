//! The limits on a tree's shape that forests' trees and boosted trees share; each
//! grower keeps beside them only what is its own (split rules, pruning, shrinkage).

/// How deep and how wide one tree may grow.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TreeLimits {
    /// Deepest a leaf may be.
    pub max_depth: usize,
    /// Most leaves, grown best first; `None` for no limit (forests then grow depth
    /// first).
    pub max_leaves: Option<usize>,
}

impl TreeLimits {
    /// The limits of the parameters `max_depth` and `max_leaf_nodes`, `None` for none.
    pub fn new(max_depth: Option<usize>, max_leaf_nodes: Option<usize>) -> Self {
        TreeLimits {
            max_depth: max_depth.unwrap_or(usize::MAX),
            max_leaves: max_leaf_nodes,
        }
    }

    /// Whether a node at `depth` may have children.
    pub fn may_deepen(&self, depth: usize) -> bool {
        depth < self.max_depth
    }

    /// Whether a tree of `n_leaves` leaves may split one more.
    pub fn has_room(&self, n_leaves: usize) -> bool {
        self.max_leaves.is_none_or(|max| n_leaves < max)
    }
}
