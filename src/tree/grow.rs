use std::sync::atomic::AtomicBool;

use super::frontier::Frontier;
use super::grown::{prune_cost_complexity, FoundSplit, GrownNode};
use super::limits::TreeLimits;
use super::{goes_left, Leaves, Tree};
use crate::atoms::{AtomSampler, AtomSet};
use crate::data::{Feature, Rows};
use crate::rng::Rng;
use crate::runtime::control::is_cancelled;
use crate::split::{
    best_split, LocalSamples, NodeTargets, SplitCriterion, SplitRule, SplitScratch,
};

/// Resolved stopping and split settings of one forest tree.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GrowSettings {
    pub rule: SplitRule,
    /// Its depth and leaves; with a leaf limit it grows best first.
    pub limits: TreeLimits,
    pub min_samples_split: usize,
    pub min_impurity_decrease: f64,
    /// Least weight of a leaf, as a fraction of the weight of the tree's sample.
    pub min_weight_fraction_leaf: f64,
    pub n_atoms: usize,
    /// Cost-complexity pruning's alpha; 0 prunes nothing.
    pub ccp_alpha: f64,
}

/// The rows split search reads: X itself (or an exact copy of it), or per row the
/// running sums of X ([`Rows::running_sums`]), read through atoms rewritten by
/// [`AtomSet::to_running_sums`]. Either gives the same projections and so the same tree.
#[derive(Clone, Copy)]
pub(crate) struct SearchRows<'a, T: Clone> {
    pub rows: &'a Rows<'a, T>,
    pub running_sums: bool,
}

impl<'a, T: Clone> SearchRows<'a, T> {
    /// X itself, or an exact copy.
    pub fn direct(rows: &'a Rows<'a, T>) -> Self {
        SearchRows {
            rows,
            running_sums: false,
        }
    }

    /// The running sums of X's rows.
    pub fn running_sums(rows: &'a Rows<'a, T>) -> Self {
        SearchRows {
            rows,
            running_sums: true,
        }
    }
}

/// Grows one tree on `local` (all of whose weights are positive): depth first, or best
/// first up to `settings.limits.max_leaves` leaves; then prunes it by cost complexity
/// (`settings.ccp_alpha`) and fills `leaves` (empty, of the kind `criterion` predicts)
/// with the values of the samples that reach them. `scratch` and `node` only lend
/// buffers: their contents never change the tree. `None` once `cancel` is set, which
/// is looked at before every node: a node is short next to a whole deep tree.
#[allow(clippy::too_many_arguments)]
pub(crate) fn grow_tree<C: SplitCriterion, T: Feature>(
    criterion: &C,
    leaves: Leaves,
    search: SearchRows<'_, T>,
    local: &LocalSamples,
    settings: &GrowSettings,
    sampler: &mut dyn AtomSampler,
    rng: &mut Rng,
    scratch: &mut SplitScratch,
    node: &mut NodeTargets,
    cancel: &AtomicBool,
) -> Option<Tree> {
    let root_weight: f64 = local.weight_of.iter().sum();
    let mut grower = Grower {
        criterion,
        search,
        local,
        settings,
        rule: SplitRule {
            min_weight_leaf: settings.min_weight_fraction_leaf * root_weight,
            ..settings.rule
        },
        root_weight,
        sampler,
        rng,
        scratch,
        targets: node,
        samples: (0..local.row_of.len() as u32).collect(),
        atoms: AtomSet::default(),
        search_atoms: AtomSet::default(),
        atom_indices: Vec::new(),
        atom_weights: Vec::new(),
        nodes: Vec::new(),
    };
    match settings.limits.max_leaves {
        None => grower.grow_depth_first(cancel)?,
        Some(max_leaves) => grower.grow_best_first(max_leaves, cancel)?,
    }
    if settings.ccp_alpha > 0.0 {
        prune_cost_complexity(&mut grower.nodes, settings.ccp_alpha, root_weight);
    }
    Some(grower.lay_out(leaves))
}

/// One tree's growth: its samples, put in order node by node so that each node's
/// samples are `samples[start..end]`, and the nodes grown so far.
pub(super) struct Grower<'a, C, T: Clone> {
    pub(super) criterion: &'a C,
    search: SearchRows<'a, T>,
    pub(super) local: &'a LocalSamples,
    settings: &'a GrowSettings,
    /// The settings' rule, with the least leaf weight of this tree's sample.
    rule: SplitRule,
    pub(super) root_weight: f64,
    sampler: &'a mut dyn AtomSampler,
    rng: &'a mut Rng,
    scratch: &'a mut SplitScratch,
    targets: &'a mut NodeTargets,
    pub(super) samples: Vec<u32>,
    /// The candidate atoms of the node being grown, and as split search reads them.
    atoms: AtomSet,
    search_atoms: AtomSet,
    /// The atoms of the splits found, one after the other.
    pub(super) atom_indices: Vec<u32>,
    pub(super) atom_weights: Vec<f32>,
    /// The nodes in the order they were grown, children after their parents.
    pub(super) nodes: Vec<GrownNode>,
}

impl<C: SplitCriterion, T: Feature> Grower<'_, C, T> {
    /// Grows every node that may be split, depth first and left first: the order of
    /// the flat layout, and of the atoms' random draws.
    fn grow_depth_first(&mut self, cancel: &AtomicBool) -> Option<()> {
        // (start, end, depth, the split whose right child it is)
        let mut stack = vec![(0, self.samples.len(), 0, None::<usize>)];
        while let Some((start, end, depth, right_of)) = stack.pop() {
            if is_cancelled(cancel) {
                return None;
            }
            let id = self.add_node(start, end, depth, true);
            if let Some(parent) = right_of {
                // The left child was grown right after its parent.
                self.nodes[parent].children = Some((parent + 1, id));
            }
            if let Some(split) = self.nodes[id].split {
                // Right is pushed first so the left child is grown next.
                stack.push((split.mid, end, depth + 1, Some(id)));
                stack.push((start, split.mid, depth + 1, None));
            }
        }
        Some(())
    }

    /// Grows best first, as scikit-learn does with `max_leaf_nodes`: of the leaves
    /// with a split, the one whose split decreases the weighted impurity most is split
    /// next, until the tree has `max_leaves` leaves or no leaf has a split. A node's
    /// best split is searched when it is grown, its left child before its right.
    fn grow_best_first(&mut self, max_leaves: usize, cancel: &AtomicBool) -> Option<()> {
        if is_cancelled(cancel) {
            return None;
        }
        let mut open = Frontier::default();
        let root = self.add_node(0, self.samples.len(), 0, max_leaves > 1);
        self.open(root, &mut open);
        let mut n_leaves = 1;
        while n_leaves < max_leaves {
            let Some(id) = open.pop() else {
                break;
            };
            n_leaves += 1;
            // The children of a split that fills the tree stay leaves: no search.
            let room = n_leaves < max_leaves;
            let GrownNode {
                start, end, depth, ..
            } = self.nodes[id];
            let mid = self.nodes[id].split.expect("open nodes have a split").mid;
            let mut children = [0; 2];
            for (child, (start, end)) in children.iter_mut().zip([(start, mid), (mid, end)]) {
                if is_cancelled(cancel) {
                    return None;
                }
                *child = self.add_node(start, end, depth + 1, room);
            }
            self.nodes[id].children = Some((children[0], children[1]));
            for child in children {
                self.open(child, &mut open);
            }
        }
        Some(())
    }

    /// Puts node `id` among the `open` nodes if it has a split.
    fn open(&self, id: usize, open: &mut Frontier) {
        if let Some(split) = self.nodes[id].split {
            open.push(id, split.decrease);
        }
    }

    /// Grows the node of the samples `samples[start..end]` at `depth`: with
    /// `may_split` and where the stopping rules allow, finds its best split and puts
    /// its samples in order for it, those going left first. Its id.
    fn add_node(&mut self, start: usize, end: usize, depth: usize, may_split: bool) -> usize {
        let settings = self.settings;
        let node_samples = &mut self.samples[start..end];
        self.criterion
            .gather(self.local, node_samples, self.targets);
        let node = &*self.targets;
        let n = node_samples.len();
        let may_split = may_split
            && !node.pure
            && settings.limits.may_deepen(depth)
            && n >= settings.min_samples_split
            && n >= 2 * self.rule.min_samples_leaf
            && node.weight >= 2.0 * self.rule.min_weight_leaf;
        let weight = node.weight;
        let split = if may_split {
            self.find_split(start, end)
        } else {
            None
        };
        self.nodes.push(GrownNode {
            start,
            end,
            depth,
            weight,
            split,
            children: None,
        });
        self.nodes.len() - 1
    }

    /// The best split of the node of `samples[start..end]`, whose targets are
    /// gathered, on atoms drawn for it; its samples going left are put first.
    fn find_split(&mut self, start: usize, end: usize) -> Option<FoundSplit> {
        let settings = self.settings;
        let rows = self.search.rows;
        let row_of = &self.local.row_of;
        self.sampler
            .sample_node(self.rng, settings.n_atoms, &mut self.atoms);
        // The atoms as split search reads them; the tree stores `atoms` themselves.
        let split_atoms = if self.search.running_sums {
            self.atoms.to_running_sums(&mut self.search_atoms);
            &self.search_atoms
        } else {
            &self.atoms
        };
        let node_samples = &mut self.samples[start..end];
        let candidate = best_split(
            self.criterion,
            rows,
            row_of,
            node_samples,
            self.targets,
            split_atoms,
            self.rule,
            self.scratch,
        )
        .filter(|candidate| {
            // scikit-learn's test, with its tolerance for rounding; a threshold that is
            // not finite (X written during the fit, or projections that overflow) would
            // make a tree that cannot be saved, so the node stays a leaf.
            candidate.impurity_decrease / self.root_weight + 1e-7 >= settings.min_impurity_decrease
                && candidate.threshold.is_finite()
        })?;
        let missing_left = candidate.missing_left.unwrap_or(false);
        let n = node_samples.len();
        // The search's own projections on the chosen atom, in the node's order: the
        // sample at `i` has not moved yet when its turn comes (swaps reach back only).
        let values = self.scratch.projections(candidate.atom, n);
        let mut left_end = 0;
        for (i, &value) in values.iter().enumerate() {
            if goes_left(value, candidate.threshold, missing_left) {
                node_samples.swap(i, left_end);
                left_end += 1;
            }
        }
        if left_end == 0 || left_end == n {
            // Every search parts the samples it was given; should one not, the node
            // stays a leaf rather than be grown again as its own child.
            return None;
        }
        let atom = self.atoms.get(candidate.atom);
        let atom_start = self.atom_indices.len();
        self.atom_indices.extend_from_slice(atom.indices);
        self.atom_weights.extend_from_slice(atom.weights);
        Some(FoundSplit {
            threshold: candidate.threshold,
            // Where no sample had a missing projection, missing ones will follow the
            // larger side (ties go right, as in scikit-learn).
            missing_left: candidate.missing_left.unwrap_or(left_end > n - left_end),
            atom_start,
            atom_len: atom.indices.len(),
            window: atom.window.copied(),
            mid: start + left_end,
            decrease: candidate.impurity_decrease,
        })
    }
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;

    use super::*;
    use crate::atoms::AtomKind;
    use crate::split::{Gini, SplitRule};

    #[test]
    fn a_set_cancel_flag_stops_growth_inside_the_tree() {
        let x = Array2::from_shape_fn((30, 2), |(i, j)| ((i * 5 + j) % 7) as f32);
        let rows = Rows::from_view(x.view()).unwrap();
        let local = LocalSamples {
            row_of: (0..30).collect(),
            class_of: (0..30).map(|i| (i % 2) as u32).collect(),
            weight_of: vec![1.0; 30],
            values_of: Vec::new(),
        };
        let settings = GrowSettings {
            rule: SplitRule {
                min_samples_leaf: 1,
                min_weight_leaf: 0.0,
                whole_range: None,
                missing_values: false,
                max_bins: None,
            },
            limits: TreeLimits::new(None, None),
            min_samples_split: 2,
            min_impurity_decrease: 0.0,
            min_weight_fraction_leaf: 0.0,
            n_atoms: 2,
            ccp_alpha: 0.0,
        };
        let grow = |cancel: bool, max_leaf_nodes| {
            grow_tree(
                &Gini { n_classes: 2 },
                Leaves::classes(2),
                SearchRows::direct(&rows),
                &local,
                &GrowSettings {
                    limits: TreeLimits::new(None, max_leaf_nodes),
                    ..settings
                },
                AtomKind::AxisAligned.sampler(2).as_mut(),
                &mut Rng::new(0, 1),
                &mut SplitScratch::default(),
                &mut NodeTargets::default(),
                &AtomicBool::new(cancel),
            )
        };
        for max_leaf_nodes in [None, Some(4)] {
            assert!(grow(false, max_leaf_nodes).is_some_and(|tree| tree.nodes().len() > 1));
            assert!(grow(true, max_leaf_nodes).is_none());
        }
    }
}
