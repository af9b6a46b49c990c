//! The rows each isolation tree grows on: drawn without replacement, uniformly or,
//! given sample weights, as scikit-learn's `IsolationForest` draws them, in
//! proportion to the weights (`numpy.random.choice(n, k, replace=False, p=w /
//! w.sum())`: each next row drawn in proportion to its weight among those left).

use std::collections::HashSet;

use crate::error::{invalid, Result};
use crate::rng::Rng;

/// Where a tree's rows come from.
#[derive(Debug)]
pub(super) enum RowDraw {
    /// Uniformly among `rows` (`None`: every row of X): no weights, or equal ones.
    Uniform {
        n_rows: usize,
        rows: Option<Vec<u32>>,
    },
    /// In proportion to `weights` among `rows`, the rows of positive weight.
    Weighted { rows: Vec<u32>, weights: Vec<f64> },
}

impl RowDraw {
    /// How the trees draw from `n_samples` rows of weights `sample_weight`: a row of
    /// weight 0 is never drawn (as if it were not in X), and weights all equal draw
    /// as no weights do, the same trees bit for bit.
    pub(super) fn new(n_samples: usize, sample_weight: Option<&[f64]>) -> Result<RowDraw> {
        let Some(weights) = sample_weight else {
            return Ok(RowDraw::Uniform {
                n_rows: n_samples,
                rows: None,
            });
        };
        if weights.len() != n_samples {
            return Err(invalid(
                "sample_weight",
                format!(
                    "must hold one weight per row of X ({n_samples}), got {}",
                    weights.len()
                ),
            ));
        }
        if let Some(bad) = weights.iter().find(|w| !(w.is_finite() && **w >= 0.0)) {
            return Err(invalid(
                "sample_weight",
                format!("must be finite and non-negative, got {bad}"),
            ));
        }
        let rows: Vec<u32> = (0..n_samples as u32)
            .filter(|&i| weights[i as usize] > 0.0)
            .collect();
        let Some(&first) = rows.first() else {
            return Err(invalid(
                "sample_weight",
                "every row has weight 0; give at least one row a positive weight",
            ));
        };
        let first = weights[first as usize];
        if rows.iter().all(|&i| weights[i as usize] == first) {
            let all = rows.len() == n_samples;
            return Ok(RowDraw::Uniform {
                n_rows: rows.len(),
                rows: (!all).then_some(rows),
            });
        }
        let weights = rows.iter().map(|&i| weights[i as usize]).collect();
        Ok(RowDraw::Weighted { rows, weights })
    }

    /// Rows a tree can draw: those of positive weight.
    pub(super) fn n_rows(&self) -> usize {
        match self {
            RowDraw::Uniform { n_rows, .. } => *n_rows,
            RowDraw::Weighted { rows, .. } => rows.len(),
        }
    }

    /// `k` distinct rows (at most [`n_rows`](Self::n_rows)), ascending so that a tree
    /// reads X forwards.
    pub(super) fn draw(&self, rng: &mut Rng, k: usize) -> Vec<u32> {
        match self {
            RowDraw::Uniform { n_rows, rows } => {
                let mut drawn = uniform_subsample(rng, *n_rows, k);
                if let Some(rows) = rows {
                    drawn.iter_mut().for_each(|i| *i = rows[*i as usize]);
                }
                drawn
            }
            RowDraw::Weighted { rows, weights } => weighted_subsample(rng, rows, weights, k),
        }
    }
}

/// `k` distinct rows of `0..n`, drawn uniformly without replacement and sorted:
/// Floyd's algorithm, whose work and memory are of `k` whatever `n`.
fn uniform_subsample(rng: &mut Rng, n: usize, k: usize) -> Vec<u32> {
    if k >= n {
        return (0..n as u32).collect();
    }
    let mut chosen = HashSet::with_capacity(k);
    let mut rows = Vec::with_capacity(k);
    for j in n - k..n {
        let drawn = rng.below(j + 1);
        let row = if chosen.insert(drawn) {
            drawn
        } else {
            chosen.insert(j);
            j
        };
        rows.push(row as u32);
    }
    rows.sort_unstable();
    rows
}

/// `k` distinct `rows`, each next one drawn in proportion to its weight among those
/// left: the `k` largest keys `ln(u) / w` with `u` uniform in (0, 1] (Efraimidis and
/// Spirakis, 2006), which needs one draw per row and is unchanged when every weight
/// is scaled alike.
fn weighted_subsample(rng: &mut Rng, rows: &[u32], weights: &[f64], k: usize) -> Vec<u32> {
    if k >= rows.len() {
        return rows.to_vec();
    }
    let mut keyed: Vec<(f64, u32)> = rows
        .iter()
        .zip(weights)
        .map(|(&row, &w)| ((1.0 - rng.unit()).ln() / w, row))
        .collect();
    keyed.select_nth_unstable_by(k - 1, |a, b| b.0.total_cmp(&a.0));
    let mut drawn: Vec<u32> = keyed[..k].iter().map(|&(_, row)| row).collect();
    drawn.sort_unstable();
    drawn
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subsamples_are_distinct_rows_each_equally_likely() {
        let (n, k, draws) = (10, 3, 30_000);
        let mut counts = [0usize; 10];
        let mut rng = Rng::new(5, 0);
        for _ in 0..draws {
            let rows = uniform_subsample(&mut rng, n, k);
            assert_eq!(rows.len(), k);
            assert!(rows.windows(2).all(|w| w[0] < w[1]), "{rows:?}");
            rows.iter().for_each(|&r| counts[r as usize] += 1);
        }
        let expected = (draws * k / n) as f64;
        for count in counts {
            assert!(
                (count as f64 - expected).abs() < 0.05 * expected,
                "{counts:?}"
            );
        }
    }

    #[test]
    fn weighted_draws_follow_successive_sampling() {
        // Weights 1, 2, 3, 0 drawing 2 rows: the chance row i is in the draw is
        // p_i + sum_{j != i} p_j p_i / (1 - p_j), p = w / 6 (row 3 never).
        let weights = [1.0, 2.0, 3.0, 0.0];
        let draw = RowDraw::new(4, Some(&weights)).unwrap();
        let mut rng = Rng::new(9, 0);
        let draws = 60_000;
        let mut counts = [0usize; 4];
        for _ in 0..draws {
            let rows = draw.draw(&mut rng, 2);
            assert!(rows.windows(2).all(|w| w[0] < w[1]), "{rows:?}");
            rows.iter().for_each(|&r| counts[r as usize] += 1);
        }
        let p = [1.0 / 6.0, 2.0 / 6.0, 3.0 / 6.0];
        for i in 0..3 {
            let others: f64 = (0..3)
                .filter(|&j| j != i)
                .map(|j| p[j] * p[i] / (1.0 - p[j]))
                .sum();
            let expected = (p[i] + others) * draws as f64;
            let got = counts[i] as f64;
            assert!((got - expected).abs() < 0.02 * expected, "{counts:?}");
        }
        assert_eq!(counts[3], 0);
    }

    #[test]
    fn equal_weights_draw_as_no_weights_and_zero_weights_as_absent_rows() {
        let ones = [2.5; 50];
        let (mut a, mut b) = (Rng::new(1, 0), Rng::new(1, 0));
        let unweighted = RowDraw::new(50, None).unwrap().draw(&mut a, 10);
        let weighted = RowDraw::new(50, Some(&ones)).unwrap().draw(&mut b, 10);
        assert_eq!(unweighted, weighted);
        let mut some_zero = [1.0; 50];
        some_zero[..5].fill(0.0);
        let draw = RowDraw::new(50, Some(&some_zero)).unwrap();
        assert_eq!(draw.n_rows(), 45);
        let mut c = Rng::new(1, 0);
        let shifted: Vec<u32> = RowDraw::new(45, None)
            .unwrap()
            .draw(&mut c, 10)
            .iter()
            .map(|r| r + 5)
            .collect();
        assert_eq!(draw.draw(&mut Rng::new(1, 0), 10), shifted);
    }

    #[test]
    fn bad_weights_are_refused() {
        assert!(RowDraw::new(3, Some(&[1.0, 2.0])).is_err());
        assert!(RowDraw::new(2, Some(&[1.0, -1.0])).is_err());
        assert!(RowDraw::new(2, Some(&[1.0, f64::NAN])).is_err());
        assert!(RowDraw::new(2, Some(&[0.0, 0.0])).is_err());
    }
}
