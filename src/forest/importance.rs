//! Feature importances: split counts and impurity decreases per feature.

use super::Forest;
use crate::error::{try_filled, Result};
use crate::tree::normalised;

impl Forest {
    /// The seeds' feature importance (section 3.3): how often each feature takes part
    /// in a chosen split atom, normalised to sum 1 (all zeros when no tree split).
    /// Fails only when the memory for one value per feature cannot be had.
    pub fn split_count_importances(&self) -> Result<Vec<f64>> {
        let mut counts = self.per_feature()?;
        let mut unused = self.per_feature()?;
        for tree in &self.trees {
            tree.add_importances(&mut counts, &mut unused);
        }
        Ok(normalised(counts))
    }

    /// Impurity-weighted importance: each split's weighted impurity decrease shared
    /// equally among its atom's features, normalised per tree, averaged over trees and
    /// normalised to sum 1 (scikit-learn's `feature_importances_` for axis atoms).
    /// Fails only when the memory for one value per feature cannot be had.
    pub fn impurity_importances(&self) -> Result<Vec<f64>> {
        let mut total = self.per_feature()?;
        let mut counts = self.per_feature()?;
        let mut decreases = self.per_feature()?;
        for tree in &self.trees {
            decreases.fill(0.0);
            tree.add_importances(&mut counts, &mut decreases);
            for (acc, share) in total.iter_mut().zip(normalised(decreases.clone())) {
                *acc += share;
            }
        }
        Ok(normalised(total))
    }

    /// Zeros, one per feature.
    fn per_feature(&self) -> Result<Vec<f64>> {
        try_filled(self.n_features, 1, 0.0, "one importance per feature")
    }
}
