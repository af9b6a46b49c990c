use crate::error::{MorfError, Result};

/// Unit weights when none are given; otherwise checks they are finite, non-negative
/// and not all zero, and divides them by the largest. Splits and leaves depend only on
/// ratios of weights, so the trees are the same; sums of squared class weights (Gini)
/// and node totals then stay finite whatever finite weights were given.
pub(crate) fn check_sample_weight(
    sample_weight: Option<&[f64]>,
    n_samples: usize,
) -> Result<Vec<f64>> {
    let Some(weights) = sample_weight else {
        return Ok(vec![1.0; n_samples]);
    };
    if weights.len() != n_samples {
        return Err(MorfError::ShapeMismatch {
            what: "length of sample_weight (one per row of X)",
            expected: n_samples,
            got: weights.len(),
        });
    }
    if let Some((index, &value)) = weights
        .iter()
        .enumerate()
        .find(|(_, w)| !(w.is_finite() && **w >= 0.0))
    {
        return Err(MorfError::InvalidSampleWeight { index, value });
    }
    let largest = weights.iter().copied().fold(0.0, f64::max);
    if largest <= 0.0 {
        return Err(MorfError::ZeroTotalWeight);
    }
    Ok(weights.iter().map(|&weight| weight / largest).collect())
}
