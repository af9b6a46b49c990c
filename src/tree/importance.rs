//! Feature importances of trees, shared by forests and boosted models: per feature,
//! the split atoms that use it and the decreases (or gains) of their splits.

use super::Tree;

impl Tree {
    /// Adds, per feature, how many split atoms use it (`counts`) and the splits'
    /// impurity decreases shared equally among their atoms' features (`decreases`); a
    /// pooled atom uses every feature some shift of its base atom reads.
    pub(crate) fn add_importances(&self, counts: &mut [f64], decreases: &mut [f64]) {
        for (id, &impurity_decrease) in self.impurity_decreases.iter().enumerate() {
            let Some(atom) = self.split_atom(id) else {
                continue;
            };
            // Plain atoms share among all their terms, pooled ones among the features
            // their window covers.
            let (features, n_shares): (Vec<u32>, usize) = match atom.window {
                Some(window) => {
                    let covered = window.covered(atom.indices);
                    let n = covered.len();
                    (covered, n)
                }
                None => (
                    atom.indices
                        .iter()
                        .zip(atom.weights)
                        .filter(|&(_, &weight)| weight != 0.0)
                        .map(|(&feature, _)| feature)
                        .collect(),
                    atom.indices.len(),
                ),
            };
            let share = impurity_decrease / n_shares as f64;
            for feature in features {
                counts[feature as usize] += 1.0;
                decreases[feature as usize] += share;
            }
        }
    }
}

/// `values` scaled to sum 1, or left as zeros.
pub(crate) fn normalised(mut values: Vec<f64>) -> Vec<f64> {
    let total: f64 = values.iter().sum();
    if total > 0.0 {
        values.iter_mut().for_each(|v| *v /= total);
    }
    values
}
