use std::borrow::Cow;
use std::sync::OnceLock;

use ndarray::ArrayView2;
use rayon::prelude::*;

use super::bits::BitRows;
use super::feature::{non_finite_error, Feature};
use super::huge_pages::advise_huge_pages;
use crate::error::{MorfError, Result};

/// Row-major samples: row `i` is `values[i * n_features..(i + 1) * n_features]`.
pub struct Rows<'a, T: Clone> {
    values: Cow<'a, [T]>,
    /// Number of rows.
    pub n_samples: usize,
    /// Number of features per row.
    pub n_features: usize,
    /// Per row, whether it holds a missing value, and whether any does; worked out on
    /// first use.
    rows_with_missing: OnceLock<(Vec<bool>, bool)>,
    /// The same values column by column; copied on first use.
    columns: OnceLock<Vec<T>>,
    /// The same values as bits, where a fit asked for them ([`Self::with_bits`]).
    bits: Option<BitRows>,
}

impl<'a, T: Feature> Rows<'a, T> {
    /// Borrows a standard-layout view; copies only views in another layout.
    pub fn from_view(x: ArrayView2<'a, T>) -> Result<Self> {
        let (n_samples, n_features) = x.dim();
        if n_samples == 0 || n_features == 0 {
            return Err(MorfError::EmptyData {
                n_samples,
                n_features,
            });
        }
        let values = match x.to_slice() {
            Some(slice) => Cow::Borrowed(slice),
            None => Cow::Owned(x.iter().copied().collect()),
        };
        Ok(Rows {
            values,
            n_samples,
            n_features,
            rows_with_missing: OnceLock::new(),
            columns: OnceLock::new(),
            bits: None,
        })
    }

    /// Rows held in `values`, `n_features` per row (`values` must hold whole rows).
    pub(crate) fn from_slice(values: &'a [T], n_features: usize) -> Self {
        debug_assert!(n_features > 0 && values.len().is_multiple_of(n_features));
        Rows {
            n_samples: values.len() / n_features,
            n_features,
            values: Cow::Borrowed(values),
            rows_with_missing: OnceLock::new(),
            columns: OnceLock::new(),
            bits: None,
        }
    }

    /// Rejects infinity and finite values beyond float32's range, naming the first
    /// offending cell; returns whether X has missing values (NaN), which are allowed.
    pub fn check_values(&self) -> Result<bool> {
        let mut has_missing = false;
        match self.first_invalid(|| has_missing = true) {
            None => {
                if !has_missing {
                    // Known now: no row need be searched for one later.
                    let _ = self
                        .rows_with_missing
                        .set((vec![false; self.n_samples], false));
                }
                Ok(has_missing)
            }
            Some(flat) => Err(non_finite_error(flat, self.n_features, self.values[flat])),
        }
    }

    /// Flat index of the first value that is neither finite
    /// ([`Feature::is_finite_value`]) nor missing; calls `on_missing` for the
    /// blocks of values before it that hold a missing value.
    pub(crate) fn first_invalid(&self, mut on_missing: impl FnMut()) -> Option<usize> {
        // Blocks without early exits inside, so that the test vectorises; only a block
        // that fails it (a missing or invalid value) is searched value by value, so
        // X without missing values pays nothing for them.
        const BLOCK: usize = 256;
        for (block, values) in self.values.chunks(BLOCK).enumerate() {
            if values.iter().fold(true, |all, v| all & v.is_finite_value()) {
                continue;
            }
            match values
                .iter()
                .position(|v| !v.is_finite_value() && !v.is_missing())
            {
                Some(position) => return Some(block * BLOCK + position),
                None => on_missing(),
            }
        }
        None
    }

    /// The smallest and largest value of X when every value is a whole number small
    /// enough that any sum of a row's values with whole coefficients of magnitude at
    /// most `max_weight` is an exact `f32`: `max|x| * n_features * max_weight <= 2^24`.
    /// Projections on atoms with such weights are then whole numbers whatever the order
    /// of summation, and so are their partial sums. (Fits ask [`Self::whole_values`]
    /// with their own bound; the tests and kernel benchmarks ask this.)
    #[cfg(any(test, feature = "bench-internals"))]
    pub fn whole_range(&self, max_weight: u32) -> Option<(f32, f32)> {
        self.whole_values()
            .filter(|&range| sums_stay_exact(range, self.n_features, max_weight))
    }

    /// The smallest and largest value of X when every value is a whole number (NaN is
    /// not: X with missing values has none).
    pub fn whole_values(&self) -> Option<(f32, f32)> {
        // Adding and taking away 2^23 rounds a smaller magnitude to a whole number, and
        // every larger f32 is whole already.
        const ROUNDING: f32 = (1u32 << 23) as f32;
        // Eight lanes of bounds and tests, which the compiler keeps in vector
        // registers: a single running minimum of floats does not vectorise.
        const LANES: usize = 8;
        #[inline(always)]
        fn take<T: Feature>(
            values: &[T],
            whole: &mut [bool; LANES],
            low: &mut [f32; LANES],
            high: &mut [f32; LANES],
        ) {
            for (lane, value) in values.iter().enumerate() {
                let value = value.to_f32();
                let magnitude = value.abs();
                whole[lane] &=
                    (magnitude >= ROUNDING) | ((magnitude + ROUNDING) - ROUNDING == magnitude);
                // Compare-and-select (no NaN here), unlike f32::min.
                low[lane] = if value < low[lane] { value } else { low[lane] };
                high[lane] = if value > high[lane] {
                    value
                } else {
                    high[lane]
                };
            }
        }
        let (mut low, mut high) = ([f32::INFINITY; LANES], [f32::NEG_INFINITY; LANES]);
        let mut whole = [true; LANES];
        // Chunks without early exits inside, so that the test vectorises.
        for chunk in self.values.chunks(4096) {
            let lanes = chunk.chunks_exact(LANES);
            let rest = lanes.remainder();
            for group in lanes {
                take(group, &mut whole, &mut low, &mut high);
            }
            take(rest, &mut whole, &mut low, &mut high);
            if whole.contains(&false) {
                return None;
            }
        }
        let low = low.into_iter().fold(f32::INFINITY, f32::min);
        let high = high.into_iter().fold(f32::NEG_INFINITY, f32::max);
        Some((low, high))
    }

    /// A copy with every value as a byte, for X whose [`Self::whole_values`] lie in
    /// `0..=255`, where it gives the same projections as `self`.
    /// X of bytes is borrowed, not copied. Blocks of values are converted in parallel
    /// on the current thread pool: fits make this copy while no tree grows.
    pub fn to_bytes(&self) -> Rows<'_, u8> {
        // Blocks large enough that handing them out costs little beside converting.
        const BLOCK: usize = 1 << 16;
        let values = match T::as_bytes(&self.values) {
            Some(bytes) => Cow::Borrowed(bytes),
            None => {
                let mut bytes = Vec::with_capacity(self.values.len());
                advise_huge_pages(&bytes);
                bytes.resize(self.values.len(), 0);
                let blocks = bytes
                    .par_chunks_mut(BLOCK)
                    .zip(self.values.par_chunks(BLOCK));
                blocks.for_each(|(bytes, values)| {
                    for (byte, value) in bytes.iter_mut().zip(values) {
                        *byte = value.to_f32() as u8;
                    }
                });
                Cow::Owned(bytes)
            }
        };
        Rows {
            values,
            n_samples: self.n_samples,
            n_features: self.n_features,
            rows_with_missing: OnceLock::new(),
            columns: OnceLock::new(),
            bits: None,
        }
    }

    /// Per row, the running sums of its values: cell `j` holds `x[0] + ... + x[j]`.
    /// Through them an atom reads a run of neighbouring cells in two places
    /// ([`AtomSet::to_running_sums`]). For X of [`Self::whole_values`] whose sums
    /// [stay exact](sums_stay_exact) every sum is exact; the copy is held in bytes when
    /// they all lie in `0..=255`, else in `f32`.
    ///
    /// [`AtomSet::to_running_sums`]: crate::atoms::AtomSet::to_running_sums
    pub fn running_sums(&self) -> RunningSums {
        // A first pass finds the sums' range, so that bytes are written directly rather
        // than through an f32 copy four times their size.
        let (mut low, mut high) = (0.0f32, 0.0f32);
        for i in 0..self.n_samples {
            let mut sum = 0.0f32;
            for value in self.row(i) {
                sum += value.to_f32();
                low = low.min(sum);
                high = high.max(sum);
            }
        }
        if low >= 0.0 && high <= u8::MAX as f32 {
            RunningSums::Bytes(self.running_sums_as(|sum| sum as u8))
        } else {
            RunningSums::Floats(self.running_sums_as(|sum| sum))
        }
    }

    fn running_sums_as<S: Clone>(&self, convert: impl Fn(f32) -> S) -> Rows<'static, S> {
        let mut values = Vec::with_capacity(self.n_samples * self.n_features);
        advise_huge_pages(&values);
        for i in 0..self.n_samples {
            let mut sum = 0.0f32;
            values.extend(self.row(i).iter().map(|value| {
                sum += value.to_f32();
                convert(sum)
            }));
        }
        Rows {
            values: Cow::Owned(values),
            n_samples: self.n_samples,
            n_features: self.n_features,
            rows_with_missing: OnceLock::new(),
            columns: OnceLock::new(),
            bits: None,
        }
    }

    /// The same rows, also held as bits where every value is 0 or 1 ([`BitRows`]):
    /// split search then projects atoms of weights ±1 by counting bits, with the same
    /// values.
    pub(crate) fn with_bits(mut self) -> Self {
        self.bits = BitRows::of(&self);
        self
    }

    /// The rows as bits, where [`Self::with_bits`] found them binary.
    #[inline(always)]
    pub fn bits(&self) -> Option<&BitRows> {
        self.bits.as_ref()
    }

    /// Row `i`.
    #[inline(always)]
    pub fn row(&self, i: usize) -> &[T] {
        &self.values[i * self.n_features..(i + 1) * self.n_features]
    }

    /// Per row, whether it holds a missing value (NaN), worked out once for these rows
    /// on first use: projections take the slower path that rescales missing cells only
    /// for the rows that have one.
    pub fn rows_with_missing(&self) -> &[bool] {
        &self.missing_rows().0
    }

    /// Whether any row holds a missing value (NaN), worked out with
    /// [`Self::rows_with_missing`].
    pub fn has_missing(&self) -> bool {
        self.missing_rows().1
    }

    fn missing_rows(&self) -> &(Vec<bool>, bool) {
        self.rows_with_missing.get_or_init(|| {
            let per_row: Vec<bool> = self
                .values
                .chunks_exact(self.n_features)
                // A fold without early exit, so that the test vectorises.
                .map(|row| row.iter().fold(false, |any, v| any | v.is_missing()))
                .collect();
            let any = per_row.contains(&true);
            (per_row, any)
        })
    }

    /// The values column by column, copied once on first use: column `j` is
    /// `columns()[j * n_samples..(j + 1) * n_samples]`. Split search reads it where a
    /// large node's atoms are single cells (see `split::cell_columns`); the copy costs
    /// as much memory as X.
    pub(crate) fn columns(&self) -> &[T] {
        self.columns.get_or_init(|| {
            let mut columns = Vec::with_capacity(self.values.len());
            advise_huge_pages(&columns);
            for feature in 0..self.n_features {
                columns.extend(
                    self.values[feature..]
                        .iter()
                        .step_by(self.n_features)
                        .cloned(),
                );
            }
            columns
        })
    }

    /// Rows `range` alone.
    pub(crate) fn slice(&self, range: std::ops::Range<usize>) -> Rows<'_, T> {
        let n = self.n_features;
        Rows::from_slice(&self.values[range.start * n..range.end * n], n)
    }
}

/// Whether every sum of `n_terms` whole values in `low..=high` with whole coefficients
/// of magnitude at most `max_weight` stays within 2^24, where `f32` holds every whole
/// number exactly.
pub fn sums_stay_exact((low, high): (f32, f32), n_terms: usize, max_weight: u32) -> bool {
    const EXACT_F32_INTEGERS: f64 = (1u32 << 24) as f64;
    let largest = low.abs().max(high.abs()) as f64;
    largest * n_terms as f64 * max_weight as f64 <= EXACT_F32_INTEGERS
}

/// The running sums of X's rows ([`Rows::running_sums`]), in the narrowest type that
/// holds them exactly.
pub enum RunningSums {
    /// Every running sum lies in `0..=255`.
    Bytes(Rows<'static, u8>),
    /// Whole numbers of at most 2^24 in magnitude.
    Floats(Rows<'static, f32>),
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;

    use super::*;

    fn whole_range_of(values: Vec<f32>, n_features: usize) -> Option<(f32, f32)> {
        let x = Array2::from_shape_vec((values.len() / n_features, n_features), values).unwrap();
        Rows::from_view(x.view()).unwrap().whole_range(1)
    }

    #[test]
    fn missing_values_are_found_per_row_and_in_all() {
        let mut x = Array2::from_elem((70, 3), 1.0f32);
        let rows = Rows::from_view(x.view()).unwrap();
        assert!(!rows.has_missing() && !rows.rows_with_missing().contains(&true));
        let rows = Rows::from_view(x.view()).unwrap();
        assert!(!rows.check_values().unwrap() && !rows.has_missing());
        assert_eq!(rows.rows_with_missing(), [false; 70]);
        x[(66, 2)] = f32::NAN;
        let rows = Rows::from_view(x.view()).unwrap();
        assert!(rows.check_values().unwrap() && rows.has_missing());
        let rows_with_missing = rows.rows_with_missing();
        assert!((0..70).all(|i| rows_with_missing[i] == (i == 66)));
    }

    #[test]
    fn running_sums_are_bytes_only_while_every_sum_fits_in_one() {
        let x = Array2::from_shape_vec((2, 3), vec![1.0f32, 0.0, 2.0, 200.0, 55.0, 0.0]).unwrap();
        let RunningSums::Bytes(sums) = Rows::from_view(x.view()).unwrap().running_sums() else {
            panic!("sums in 0..=255 are bytes");
        };
        assert_eq!(
            (sums.row(0), sums.row(1)),
            (&[1, 1, 3][..], &[200, 255, 255][..])
        );
        for values in [
            vec![1.0f32, 0.0, 2.0, 200.0, 56.0, 0.0],
            vec![-1.0, 1.0, 2.0, 0.0, 0.0, 0.0],
        ] {
            let x = Array2::from_shape_vec((2, 3), values.clone()).unwrap();
            let RunningSums::Floats(sums) = Rows::from_view(x.view()).unwrap().running_sums()
            else {
                panic!("{values:?}: a sum outside 0..=255 needs floats");
            };
            assert_eq!(sums.row(1)[1], values[3] + values[4]);
        }
    }

    #[test]
    fn whole_values_find_the_bounds_and_a_fraction_in_any_lane() {
        // Lengths around the eight lanes and the chunks of 4,096, the bounds and a
        // fraction placed at every position in turn.
        for len in [1, 7, 8, 9, 23, 4_097] {
            for at in (0..len).step_by(len / 13 + 1).chain([len - 1]) {
                let mut values = vec![3.0f32; len];
                values[at] = -5.0;
                values[(at + 1) % len] = 9.0;
                let x = Array2::from_shape_vec((len, 1), values.clone()).unwrap();
                let expected = if len == 1 { (9.0, 9.0) } else { (-5.0, 9.0) };
                let rows = Rows::from_view(x.view()).unwrap();
                assert_eq!(rows.whole_values(), Some(expected), "{len}, {at}");
                values[at] = 0.5;
                let x = Array2::from_shape_vec((len, 1), values).unwrap();
                let rows = Rows::from_view(x.view()).unwrap();
                assert_eq!(rows.whole_values(), None, "{len}, {at}");
            }
        }
    }

    #[test]
    fn whole_range_needs_whole_values_whose_sums_stay_exact() {
        assert_eq!(
            whole_range_of(vec![0.0, 3.0, -2.0, 255.0], 2),
            Some((-2.0, 255.0))
        );
        assert_eq!(whole_range_of(vec![0.0, 3.0, -2.0, 0.5], 2), None);
        assert_eq!(whole_range_of(vec![1e-30, 0.0], 1), None);
        // A fraction far from the start, past the first chunk that is tested.
        let mut many = vec![1.0; 10_000];
        many[9_999] = 1.25;
        assert_eq!(whole_range_of(many, 4), None);
        // Two features of up to 2^23 sum to at most 2^24, the last whole number every
        // f32 sum reaches exactly; three could pass it.
        assert_eq!(
            whole_range_of(vec![8_388_608.0, 1.0], 2),
            Some((1.0, 8_388_608.0))
        );
        assert_eq!(whole_range_of(vec![8_388_608.0, 1.0, 1.0], 3), None);
    }

    #[test]
    fn missing_values_pass_the_check_and_infinity_does_not() {
        // Several blocks of the check, with missing values before the infinite one.
        let mut x = Array2::from_elem((300, 3), 1.0f32);
        let check = |x: &Array2<f32>| Rows::from_view(x.view()).unwrap().check_values();
        assert_eq!(check(&x), Ok(false));
        x[[10, 1]] = f32::NAN;
        x[[250, 0]] = -f32::NAN;
        assert_eq!(check(&x), Ok(true));
        assert_eq!(Rows::from_view(x.view()).unwrap().whole_values(), None);
        x[[200, 2]] = f32::NEG_INFINITY;
        x[[260, 0]] = f32::INFINITY;
        assert_eq!(
            check(&x),
            Err(MorfError::NonFiniteInput {
                row: 200,
                column: 2
            })
        );
    }

    #[test]
    fn larger_weights_need_smaller_values() {
        let x = Array2::from_shape_vec((1, 4), vec![0.0f32, 1.0, 2.0, 1_048_576.0]).unwrap();
        let rows = Rows::from_view(x.view()).unwrap();
        // 2^20 * 4 features * 4 = 2^24, the last exact whole number; weights of 5 pass it.
        assert_eq!(rows.whole_range(4), Some((0.0, 1_048_576.0)));
        assert_eq!(rows.whole_range(5), None);
        assert_eq!(rows.whole_values(), Some((0.0, 1_048_576.0)));
        assert!(sums_stay_exact((-3.0, 2.0), 10, 100));
        assert!(!sums_stay_exact((-3.0, 2.0), 10, 600_000));
    }
}
