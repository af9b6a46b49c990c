//! Where do a round's trees start? Every output's tree (a class each) holds all of the
//! round's positions at its root, binned the same way, so the root histograms of all
//! outputs are built here before the trees grow, two outputs at a time: each
//! position's bins are then read once for both ([`build_root_pair`]).

use rayon::prelude::*;

use super::binning::{BinnedAtoms, GROUP};
use super::histogram::{build, build_root_pair, Bin, Samples, Slot, SLOT};

/// The root histograms of a round's outputs, kept from round to round: one slot per
/// atom and output (3 KB each), which each tree takes in exchange for a buffer of its
/// own as large.
#[derive(Debug, Default)]
pub(crate) struct RootHistograms {
    per_output: Vec<Vec<Slot>>,
    /// Outputs of the last build: the first of `per_output`.
    n_outputs: usize,
}

/// One parallel task: a group of atoms for one output, or for two.
enum Task<'a> {
    One {
        group: usize,
        slots: &'a mut [Slot],
        g: &'a [f32],
        h: &'a [f32],
    },
    Two {
        group: usize,
        slots: [&'a mut [Slot]; 2],
        g: [&'a [f32]; 2],
        h: [&'a [f32]; 2],
    },
}

impl RootHistograms {
    /// Builds every output's root histograms over all positions of `binned`, output
    /// `k`'s from `gradients[k]` and `hessians[k]` (one per position). Parallel over
    /// groups of atoms and pairs of outputs; the sums do not depend on either.
    pub fn build(&mut self, binned: &BinnedAtoms, gradients: &[Vec<f32>], hessians: &[Vec<f32>]) {
        let n_atoms = binned.n_atoms();
        // Kept at the largest batch, so that a smaller last batch frees nothing.
        self.n_outputs = gradients.len();
        if self.per_output.len() < self.n_outputs {
            self.per_output.resize_with(self.n_outputs, Vec::new);
        }
        for slots in &mut self.per_output[..self.n_outputs] {
            slots.resize(n_atoms, [Bin::default(); SLOT]);
        }
        let mut tasks = Vec::new();
        let pairs = self.per_output[..self.n_outputs]
            .chunks_mut(2)
            .zip(gradients.chunks(2).zip(hessians.chunks(2)));
        for (outputs, (g, h)) in pairs {
            match outputs {
                [first, second] => {
                    let groups = first.chunks_mut(GROUP).zip(second.chunks_mut(GROUP));
                    for (group, (a, b)) in groups.enumerate() {
                        tasks.push(Task::Two {
                            group,
                            slots: [a, b],
                            g: [&g[0], &g[1]],
                            h: [&h[0], &h[1]],
                        });
                    }
                }
                [only] => {
                    for (group, slots) in only.chunks_mut(GROUP).enumerate() {
                        tasks.push(Task::One {
                            group,
                            slots,
                            g: &g[0],
                            h: &h[0],
                        });
                    }
                }
                _ => unreachable!("chunks of at most two outputs"),
            }
        }
        tasks.into_par_iter().for_each(|task| {
            let group = match &task {
                Task::One { group, .. } | Task::Two { group, .. } => *group,
            };
            let atoms = group * GROUP..((group + 1) * GROUP).min(n_atoms);
            let n_bins: Vec<usize> = atoms.map(|a| binned.n_bins(a)).collect();
            let (words, counts) = (binned.group(group), binned.counts(group));
            match task {
                Task::One { slots, g, h, .. } => {
                    build(slots, &n_bins, words, Samples::All { counts }, g, h)
                }
                Task::Two { slots, g, h, .. } => {
                    build_root_pair(slots, &n_bins, words, counts, g, h)
                }
            }
        });
    }

    /// Each output's root histograms (one slot per atom), for its tree to take.
    pub fn per_output_mut(&mut self) -> &mut [Vec<Slot>] {
        &mut self.per_output[..self.n_outputs]
    }
}
