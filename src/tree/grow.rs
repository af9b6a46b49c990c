use std::sync::atomic::{AtomicBool, Ordering};

use super::{goes_left, Leaves, Node, Tree};
use crate::atoms::{AtomSampler, AtomSet};
use crate::data::{Feature, Rows};
use crate::rng::Rng;
use crate::split::{
    best_split, LocalSamples, NodeTargets, SplitCriterion, SplitRule, SplitScratch,
};

/// Resolved stopping and split settings of one tree.
#[derive(Debug, Clone, Copy)]
pub(crate) struct GrowSettings {
    pub rule: SplitRule,
    pub max_depth: usize,
    pub min_samples_split: usize,
    pub min_impurity_decrease: f64,
    /// Least weight of a leaf, as a fraction of the weight of the tree's sample.
    pub min_weight_fraction_leaf: f64,
    pub n_atoms: usize,
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

/// A node waiting to be grown: its samples are `samples[start..end]`.
struct Pending {
    start: usize,
    end: usize,
    depth: usize,
    /// The split node whose right child this is; left children need no link, being
    /// the node right after their parent.
    right_of: Option<usize>,
}

/// Grows one tree depth-first on `local` (all of whose weights are positive), filling
/// `leaves` (empty, of the kind `criterion` predicts) with the values of the samples
/// that reach them. `scratch` and `node` only lend buffers: their contents never
/// change the tree. `None` once `cancel` is set, which is looked at before every node:
/// a node is short next to a whole deep tree.
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
    let mut tree = Tree::empty(leaves);
    let mut samples: Vec<u32> = (0..local.row_of.len() as u32).collect();
    let root_weight: f64 = local.weight_of.iter().sum();
    let rule = SplitRule {
        min_weight_leaf: settings.min_weight_fraction_leaf * root_weight,
        ..settings.rule
    };
    let rows = search.rows;
    let mut atoms = AtomSet::default();
    let mut search_atoms = AtomSet::default();
    let mut leaf_sums = vec![0.0; criterion.n_entries()];
    for sample in 0..local.row_of.len() {
        criterion.leaf_entries(local, sample, |entry, amount| leaf_sums[entry] += amount);
    }
    tree.leaves.set_prior(&leaf_sums, root_weight);
    let mut stack = vec![Pending {
        start: 0,
        end: samples.len(),
        depth: 0,
        right_of: None,
    }];

    while let Some(Pending {
        start,
        end,
        depth,
        right_of,
    }) = stack.pop()
    {
        if cancel.load(Ordering::Relaxed) {
            return None;
        }
        let id = tree.nodes.len();
        if let Some(parent) = right_of {
            tree.nodes[parent].set_right(id as u32);
        }
        let node_samples = &mut samples[start..end];
        criterion.gather(local, node_samples, node);
        let n = node_samples.len();
        tree.node_samples.push(n as u32);
        tree.node_weights.push(node.weight as f32);
        let may_split = !node.pure
            && depth < settings.max_depth
            && n >= settings.min_samples_split
            && n >= 2 * rule.min_samples_leaf
            && node.weight >= 2.0 * rule.min_weight_leaf;

        let split = if may_split {
            sampler.sample_node(rng, settings.n_atoms, &mut atoms);
            // The atoms as split search reads them; the tree stores `atoms` themselves.
            let split_atoms = if search.running_sums {
                atoms.to_running_sums(&mut search_atoms);
                &search_atoms
            } else {
                &atoms
            };
            best_split(
                criterion,
                rows,
                &local.row_of,
                node_samples,
                node,
                split_atoms,
                rule,
                scratch,
            )
            .filter(|candidate| {
                // scikit-learn's test, with its tolerance for rounding.
                candidate.impurity_decrease / root_weight + 1e-7 >= settings.min_impurity_decrease
            })
            .map(|candidate| (candidate, split_atoms.get(candidate.atom)))
        } else {
            None
        };

        match split {
            None => {
                let value = tree.leaves.next_offset();
                tree.nodes.push(Node::Leaf { value: Some(value) });
                tree.impurity_decreases.push(0.0);
                leaf_sums.fill(0.0);
                let mut weight = 0.0;
                for &sample in node_samples.iter() {
                    weight += local.weight_of[sample as usize];
                    criterion.leaf_entries(local, sample as usize, |entry, amount| {
                        leaf_sums[entry] += amount
                    });
                }
                tree.leaves.push(&leaf_sums, weight);
            }
            Some((candidate, search_atom)) => {
                let atom = atoms.get(candidate.atom);
                let missing_left = candidate.missing_left.unwrap_or(false);
                let mut left_end = 0;
                for i in 0..n {
                    let row = rows.row(local.row_of[node_samples[i] as usize] as usize);
                    let value = search_atom.project(row);
                    if goes_left(value, candidate.threshold, missing_left) {
                        node_samples.swap(i, left_end);
                        left_end += 1;
                    }
                }
                // Where no sample had a missing projection, missing ones will follow
                // the larger side (ties go right, as in scikit-learn).
                let missing_left = candidate.missing_left.unwrap_or(left_end > n - left_end);
                tree.push_split(atom, candidate.threshold, missing_left);
                tree.impurity_decreases
                    .push((candidate.impurity_decrease / root_weight) as f32);
                let mid = start + left_end;
                // Right is pushed first so the left child is grown next, as node id + 1.
                stack.push(Pending {
                    start: mid,
                    end,
                    depth: depth + 1,
                    right_of: Some(id),
                });
                stack.push(Pending {
                    start,
                    end: mid,
                    depth: depth + 1,
                    right_of: None,
                });
            }
        }
    }
    tree.shrink_to_fit();
    Some(tree)
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
            },
            max_depth: usize::MAX,
            min_samples_split: 2,
            min_impurity_decrease: 0.0,
            min_weight_fraction_leaf: 0.0,
            n_atoms: 2,
        };
        let grow = |cancel: bool| {
            grow_tree(
                &Gini { n_classes: 2 },
                Leaves::classes(2),
                SearchRows::direct(&rows),
                &local,
                &settings,
                AtomKind::AxisAligned.sampler(2).as_mut(),
                &mut Rng::new(0, 1),
                &mut SplitScratch::default(),
                &mut NodeTargets::default(),
                &AtomicBool::new(cancel),
            )
        };
        assert!(grow(false).is_some_and(|tree| tree.nodes().len() > 1));
        assert!(grow(true).is_none());
    }
}
