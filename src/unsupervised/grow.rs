//! One unsupervised tree: grown depth first on a sample of rows, each node split where
//! an [`UnsupervisedCriterion`] finds its projected values fall best into two groups,
//! then laid out flat as every other tree ([`lay_out`]).
//!
//! [`UnsupervisedCriterion`]: crate::split::UnsupervisedCriterion

use std::sync::atomic::AtomicBool;

use crate::atoms::{Atom, AtomSampler, AtomSet, MissingCells, Window};
use crate::data::{Feature, Rows};
use crate::rng::Rng;
use crate::runtime::control::is_cancelled;
use crate::split::{best_unsupervised_split, AtomCosts, UnsupervisedScratch};
use crate::tree::{goes_left, lay_out, GrownSplit, GrownTree, Leaves, Tree, TreeLimits};

/// The stopping rules of one unsupervised tree.
#[derive(Debug, Clone, Copy)]
pub(super) struct UnsupervisedGrowth {
    pub limits: TreeLimits,
    pub min_samples_split: usize,
    pub min_samples_leaf: usize,
    /// Candidate atoms per node.
    pub n_atoms: usize,
    /// Whether projections on atoms of whole weights are exact whole numbers.
    pub whole_values: bool,
}

/// The rows a tree learns from: each row of X it holds, and its weight (its bootstrap
/// count).
pub(super) struct TreeRows {
    pub row_of: Vec<u32>,
    pub weight_of: Vec<f64>,
}

/// One grown tree, with the leaf each of its sample's rows was put in where scoring
/// is sure to send the row there too.
pub(super) struct GrownUnsupervisedTree {
    pub tree: Tree,
    /// Per row of X, the id of its leaf in `tree`; `None` where the tree does not
    /// hold every row, or where a projection was not exact (floats, or atoms of
    /// fractional weights), so that the scoring walk might round it to the other side.
    pub training_leaves: Option<Vec<u32>>,
}

/// A split found, its atom stored in the grower's buffers.
#[derive(Debug, Clone, Copy)]
struct NodeSplit {
    threshold: f32,
    atom_start: usize,
    atom_len: usize,
    window: Option<Window>,
    decrease: f64,
    /// Where the node's samples going right start.
    mid: usize,
}

/// A grown node: its samples `samples[start..end]`, their weight, and its split.
#[derive(Debug, Clone, Copy)]
struct GrownNode {
    start: usize,
    end: usize,
    weight: f64,
    split: Option<NodeSplit>,
    children: Option<(usize, usize)>,
}

/// Grows one tree on `sample` (all weights positive) with `criterion`, drawing
/// candidate atoms from `sampler` with `rng`; `None` once `cancel` is set. Each leaf
/// holds one value: the share of the tree's sample weight that reached it.
#[allow(clippy::too_many_arguments)]
pub(super) fn grow_unsupervised_tree<C: AtomCosts, T: Feature>(
    criterion: &C,
    rows: &Rows<'_, T>,
    sample: &TreeRows,
    growth: &UnsupervisedGrowth,
    sampler: &mut dyn AtomSampler,
    rng: &mut Rng,
    scratch: &mut UnsupervisedScratch,
    cancel: &AtomicBool,
) -> Option<GrownUnsupervisedTree> {
    let mut grower = Grower {
        criterion,
        rows,
        sample,
        growth,
        sampler,
        rng,
        scratch,
        samples: (0..sample.row_of.len() as u32).collect(),
        atoms: AtomSet::default(),
        atom_indices: Vec::new(),
        atom_weights: Vec::new(),
        nodes: Vec::new(),
        root_weight: sample.weight_of.iter().sum(),
        leaf_share: [0.0],
        exact_sides: growth.whole_values,
    };
    grower.grow(cancel)?;
    // Local samples are rows of X only where the tree holds every row.
    let holds_every_row = sample.row_of.len() == rows.n_samples;
    let training_leaves = (grower.exact_sides && holds_every_row).then(|| grower.leaf_of_samples());
    let mut leaves = Leaves::values(1);
    leaves.set_prior(&[1.0], 1.0);
    Some(GrownUnsupervisedTree {
        tree: lay_out(&mut grower, leaves),
        training_leaves,
    })
}

struct Grower<'a, C, T: Clone> {
    criterion: &'a C,
    rows: &'a Rows<'a, T>,
    sample: &'a TreeRows,
    growth: &'a UnsupervisedGrowth,
    sampler: &'a mut dyn AtomSampler,
    rng: &'a mut Rng,
    scratch: &'a mut UnsupervisedScratch,
    /// Local sample ids, put in order node by node.
    samples: Vec<u32>,
    atoms: AtomSet,
    atom_indices: Vec<u32>,
    atom_weights: Vec<f32>,
    nodes: Vec<GrownNode>,
    root_weight: f64,
    /// The value of the leaf being laid out.
    leaf_share: [f64; 1],
    /// Whether every split's projections were exact, so that scoring sends each
    /// sample to the side it was put on.
    exact_sides: bool,
}

impl<C: AtomCosts, T: Feature> Grower<'_, C, T> {
    /// Grows every node that may be split, depth first and left first: the order of
    /// the flat layout, and of the atoms' random draws.
    fn grow(&mut self, cancel: &AtomicBool) -> Option<()> {
        // (start, end, depth, the split whose right child it is)
        let mut stack = vec![(0, self.samples.len(), 0, None::<usize>)];
        while let Some((start, end, depth, right_of)) = stack.pop() {
            if is_cancelled(cancel) {
                return None;
            }
            let id = self.add_node(start, end, depth);
            if let Some(parent) = right_of {
                self.nodes[parent].children = Some((parent + 1, id));
            }
            if let Some(split) = self.nodes[id].split {
                stack.push((split.mid, end, depth + 1, Some(id)));
                stack.push((start, split.mid, depth + 1, None));
            }
        }
        Some(())
    }

    /// Grows the node of `samples[start..end]` at `depth`, splitting it where the
    /// stopping rules allow and a split exists; its id.
    fn add_node(&mut self, start: usize, end: usize, depth: usize) -> usize {
        let growth = self.growth;
        let n = end - start;
        let weight = self.samples[start..end]
            .iter()
            .map(|&s| self.sample.weight_of[s as usize])
            .sum();
        let split = (growth.limits.may_deepen(depth)
            && n >= growth.min_samples_split
            && n >= 2 * growth.min_samples_leaf)
            .then(|| self.find_split(start, end))
            .flatten();
        self.nodes.push(GrownNode {
            start,
            end,
            weight,
            split,
            children: None,
        });
        self.nodes.len() - 1
    }

    /// The best split of the node of `samples[start..end]` on atoms drawn for it; its
    /// samples going left are put first.
    fn find_split(&mut self, start: usize, end: usize) -> Option<NodeSplit> {
        self.sampler
            .sample_node(self.rng, self.growth.n_atoms, &mut self.atoms);
        let row_of = &self.sample.row_of;
        let node_samples = &mut self.samples[start..end];
        let candidate = best_unsupervised_split(
            self.criterion,
            self.rows,
            row_of,
            &self.sample.weight_of,
            node_samples,
            &self.atoms,
            self.growth.min_samples_leaf,
            self.growth.whole_values,
            self.scratch,
        )
        .filter(|candidate| candidate.threshold.is_finite())?;
        let atom = self.atoms.get(candidate.atom);
        self.exact_sides &= atom.has_integer_weights();
        // Sample `i` is still at `i` when its turn comes: the swaps move only those
        // before it.
        let projections = self.scratch.projections(candidate.atom, node_samples.len());
        let mut left_end = 0;
        for (i, &projection) in projections.iter().enumerate() {
            if goes_left(projection, candidate.threshold, false) {
                node_samples.swap(i, left_end);
                left_end += 1;
            }
        }
        let atom_start = self.atom_indices.len();
        self.atom_indices.extend_from_slice(atom.indices);
        self.atom_weights.extend_from_slice(atom.weights);
        Some(NodeSplit {
            threshold: candidate.threshold,
            atom_start,
            atom_len: atom.indices.len(),
            window: atom.window.copied(),
            decrease: candidate.impurity_decrease,
            mid: start + left_end,
        })
    }
}

impl<C, T: Clone> Grower<'_, C, T> {
    /// Each local sample's leaf, by the id [`lay_out`] gives it: nodes are grown in
    /// the order they are laid out, depth first and left first.
    fn leaf_of_samples(&self) -> Vec<u32> {
        let mut leaf_of = vec![0; self.samples.len()];
        for (id, node) in self.nodes.iter().enumerate() {
            if node.split.is_none() {
                for &sample in &self.samples[node.start..node.end] {
                    leaf_of[sample as usize] = id as u32;
                }
            }
        }
        leaf_of
    }
}

impl<C, T: Clone> GrownTree for Grower<'_, C, T> {
    fn size(&self, id: usize) -> (u32, f32) {
        let node = &self.nodes[id];
        ((node.end - node.start) as u32, node.weight as f32)
    }

    fn split(&self, id: usize) -> Option<GrownSplit<'_>> {
        let node = &self.nodes[id];
        let split = node.split.as_ref()?;
        let (left, right) = node.children.expect("a split node has children");
        let range = split.atom_start..split.atom_start + split.atom_len;
        Some(GrownSplit {
            atom: Atom {
                indices: &self.atom_indices[range.clone()],
                weights: &self.atom_weights[range],
                window: split.window.as_ref(),
                missing: MissingCells::RescaledPresent,
            },
            threshold: split.threshold,
            // No projection is missing in training; an unseen missing one goes the
            // way of the larger side.
            missing_left: split.mid - node.start > node.end - split.mid,
            // Fast-BIC's children may cost more than their node (its ranking is not
            // a decrease of one impurity); importances count no such split.
            decrease: split.decrease.max(0.0) / self.root_weight,
            left,
            right,
        })
    }

    fn leaf(&mut self, id: usize) -> (&[f64], f64) {
        self.leaf_share = [self.nodes[id].weight];
        (&self.leaf_share, self.root_weight)
    }
}
