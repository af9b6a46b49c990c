//! Feature importances: split counts and impurity decreases per feature.

use super::Forest;

impl Forest {
    /// The seeds' feature importance (section 3.3): how often each feature takes part
    /// in a chosen split atom, normalised to sum 1 (all zeros when no tree split).
    pub fn split_count_importances(&self) -> Vec<f64> {
        let mut counts = vec![0.0; self.n_features];
        let mut unused = vec![0.0; self.n_features];
        for tree in &self.trees {
            tree.add_importances(&mut counts, &mut unused);
        }
        normalised(counts)
    }

    /// Impurity-weighted importance: each split's weighted impurity decrease shared
    /// equally among its atom's features, normalised per tree, averaged over trees and
    /// normalised to sum 1 (scikit-learn's `feature_importances_` for axis atoms).
    pub fn impurity_importances(&self) -> Vec<f64> {
        let mut total = vec![0.0; self.n_features];
        let mut counts = vec![0.0; self.n_features];
        let mut decreases = vec![0.0; self.n_features];
        for tree in &self.trees {
            decreases.fill(0.0);
            tree.add_importances(&mut counts, &mut decreases);
            for (acc, share) in total.iter_mut().zip(normalised(decreases.clone())) {
                *acc += share;
            }
        }
        normalised(total)
    }
}

/// `values` scaled to sum 1, or left as zeros.
fn normalised(mut values: Vec<f64>) -> Vec<f64> {
    let total: f64 = values.iter().sum();
    if total > 0.0 {
        values.iter_mut().for_each(|v| *v /= total);
    }
    values
}
