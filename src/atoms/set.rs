//! Atoms as sparse vectors, and the flat buffers a node's candidate atoms live in.

use super::pooled_response::project_pooled;
use super::window::Window;
use super::MissingCells;
use crate::data::Feature;

/// A borrowed sparse atom.
#[derive(Debug, Clone, Copy)]
pub struct Atom<'a> {
    /// Feature indices, ascending and distinct.
    pub indices: &'a [u32],
    /// One weight per index.
    pub weights: &'a [f32],
    /// For a pooled atom, its window of shifts; `indices` and `weights` are then the
    /// base atom.
    pub window: Option<&'a Window>,
    /// What the projection is when some cells are missing: the rule of the tree the
    /// atom splits in.
    pub missing: MissingCells,
}

impl<'a> Atom<'a> {
    /// Whether every weight is +1 or -1.
    pub fn has_unit_weights(&self) -> bool {
        self.weights.iter().all(|&weight| weight.abs() == 1.0)
    }

    /// Whether every weight is a whole number: then projections of whole-valued rows
    /// are whole, and exact while their partial sums stay within 2^24
    /// (the bound fits check on X).
    pub fn has_integer_weights(&self) -> bool {
        // Adding and taking away 2^23 rounds a smaller magnitude to a whole number, and
        // every larger f32 is whole already: `trunc` without a call to the C library
        // (x86-64 has no rounding instruction before SSE4.1).
        const ROUNDING: f32 = (1u32 << 23) as f32;
        self.weights.iter().all(|&weight| {
            let magnitude = weight.abs();
            magnitude >= ROUNDING || (magnitude + ROUNDING) - ROUNDING == magnitude
        })
    }

    /// The projection `a · x` of one row, summed in index order (the same order at
    /// training and scoring time, so both see identical values), missing cells
    /// treated by [`Self::missing`]; for a pooled atom, the reduction of the shifted
    /// atom's responses ([`Window`]).
    #[inline]
    pub fn project<T: Feature>(&self, row: &[T]) -> f32 {
        if let Some(window) = self.window {
            return project_pooled(self.indices, self.weights, window, self.missing, row);
        }
        // Single-feature atoms (all of an axis-aligned forest's) skip the loop and its
        // hard-to-predict exit branch; either rule makes them missing with their cell.
        if let ([index], [weight]) = (self.indices, self.weights) {
            return 0.0 + weight * row[*index as usize].to_f32();
        }
        let mut sum = 0.0f32;
        for (&index, &weight) in self.indices.iter().zip(self.weights) {
            sum += weight * row[index as usize].to_f32();
        }
        self.missing.resolve(sum, self.terms(row))
    }

    /// The `(weight, value)` terms of a plain atom on `row`, in the atom's order.
    #[inline]
    pub fn terms<'r, T: Feature>(&self, row: &'r [T]) -> impl Iterator<Item = (f32, f32)> + 'r
    where
        'a: 'r,
    {
        let (indices, weights) = (self.indices, self.weights);
        indices
            .iter()
            .zip(weights)
            .map(|(&index, &weight)| (weight, row[index as usize].to_f32()))
    }
}

/// The candidate atoms of one node, stored flat so that sampling allocates nothing
/// once the buffers have grown.
#[derive(Debug, Clone)]
pub struct AtomSet {
    offsets: Vec<usize>,
    indices: Vec<u32>,
    weights: Vec<f32>,
    /// Per atom, its window if it is pooled.
    windows: Vec<Option<Window>>,
    /// Per atom, whether it was pushed with every weight one ([`Self::push_unit`]).
    unit_weights: Vec<bool>,
}

impl Default for AtomSet {
    /// An empty set, ready for atoms to be pushed.
    fn default() -> Self {
        AtomSet {
            offsets: vec![0],
            indices: Vec::new(),
            weights: Vec::new(),
            windows: Vec::new(),
            unit_weights: Vec::new(),
        }
    }
}

impl AtomSet {
    /// Removes all atoms, keeping the buffers.
    pub fn clear(&mut self) {
        self.offsets.clear();
        self.offsets.push(0);
        self.indices.clear();
        self.weights.clear();
        self.windows.clear();
        self.unit_weights.clear();
    }

    /// Appends an atom given as unsorted (index, weight) pairs with distinct indices.
    pub fn push_pairs(&mut self, pairs: &mut [(u32, f32)]) {
        // Ascending indices make the gather walk each row forwards.
        pairs.sort_unstable_by_key(|&(index, _)| index);
        for &(index, weight) in pairs.iter() {
            self.indices.push(index);
            self.weights.push(weight);
        }
        self.offsets.push(self.indices.len());
        self.windows.push(None);
        self.unit_weights.push(false);
    }

    /// Appends an atom whose weights are all one.
    pub fn push_unit(&mut self, indices: &mut [u32]) {
        indices.sort_unstable();
        self.indices.extend_from_slice(indices);
        self.weights.extend(std::iter::repeat_n(1.0, indices.len()));
        self.offsets.push(self.indices.len());
        self.windows.push(None);
        self.unit_weights.push(true);
    }

    /// Appends a copy of `atom`, pooled or not.
    pub fn push(&mut self, atom: Atom<'_>) {
        self.indices.extend_from_slice(atom.indices);
        self.weights.extend_from_slice(atom.weights);
        self.offsets.push(self.indices.len());
        self.windows.push(atom.window.copied());
        self.unit_weights.push(false);
    }

    /// Whether atom `i` was pushed by [`Self::push_unit`], every weight one: what its
    /// weights say is then known without reading them.
    #[inline(always)]
    pub(crate) fn has_unit_weights(&self, i: usize) -> bool {
        self.unit_weights[i]
    }

    /// Appends the plain atom `base` pooled over `window`.
    pub fn push_pooled(&mut self, base: Atom<'_>, window: Window) {
        self.push(Atom {
            window: Some(&window),
            ..base
        });
    }

    /// Whether some atom of the set is pooled.
    pub fn has_pooled(&self) -> bool {
        self.windows.iter().any(Option::is_some)
    }

    /// Number of atoms.
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Whether the set holds no atom.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Atom `i`.
    #[inline(always)]
    pub fn get(&self, i: usize) -> Atom<'_> {
        let range = self.offsets[i]..self.offsets[i + 1];
        // Candidate atoms are drawn for new trees, which follow the current rule.
        Atom {
            indices: &self.indices[range.clone()],
            weights: &self.weights[range],
            window: self.windows[i].as_ref(),
            missing: MissingCells::RescaledPresent,
        }
    }

    /// Rewrites every atom as an atom over the rows' running sums
    /// (`Rows::running_sums`), `S[j] = x[0] + ... + x[j]`. With `w` the atom's weight
    /// per feature (0 off the atom), `a · x = sum_j (w[j] - w[j + 1]) S[j]`: a run of
    /// neighbouring features of equal weight costs two terms however long it is, and
    /// two runs that touch share one (a unit patch row `s..=e` becomes `-1` at `s - 1`
    /// and `+1` at `e`; +1 cells next to -1 cells become `+2` at the border).
    ///
    /// Both atoms project to the same value bit for bit on whole-valued X whose
    /// whole-number bound covers the weights' spread `max(0, max w) -
    /// min(0, min w)` (`spread * n_features * max|x| <= 2^24`): a partial sum of the
    /// rewritten atom up to `S[J]` equals `sum_{k <= J} (w[k] - w[J + 1]) x[k]`, whose
    /// coefficients are at most the spread, so every addition of either form is exact.
    ///
    /// Pooled atoms have no running-sum form (a shift crosses the rows' seams); split
    /// search reads X itself where the dictionary pools ([`AtomKind::pools`]).
    ///
    /// [`AtomKind::pools`]: super::AtomKind::pools
    pub fn to_running_sums(&self, out: &mut AtomSet) {
        debug_assert!(!self.has_pooled(), "pooled atoms over running sums");
        out.clear();
        for i in 0..self.len() {
            let atom = self.get(i);
            // The previous feature of the atom and its weight, while its run is open.
            let mut previous: Option<(u32, f32)> = None;
            for (&index, &weight) in atom.indices.iter().zip(atom.weights) {
                match previous {
                    Some((last, last_weight)) if last + 1 == index => {
                        if last_weight != weight {
                            // Two runs meet: one term carries both weight changes.
                            out.push_term(last, last_weight - weight);
                        }
                    }
                    _ => {
                        if let Some((last, last_weight)) = previous {
                            out.push_term(last, last_weight);
                        }
                        if index > 0 {
                            out.push_term(index - 1, -weight);
                        }
                    }
                }
                previous = Some((index, weight));
            }
            if let Some((last, last_weight)) = previous {
                out.push_term(last, last_weight);
            }
            out.offsets.push(out.indices.len());
            out.windows.push(None);
            out.unit_weights.push(false);
        }
    }

    fn push_term(&mut self, index: u32, weight: f32) {
        self.indices.push(index);
        self.weights.push(weight);
    }
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;
    use proptest::prelude::*;

    use super::*;
    use crate::data::{Rows, RunningSums};

    proptest! {
        #[test]
        fn sparse_projection_equals_dense_dot_product(
            row in prop::collection::vec(-100.0f32..100.0, 1..40),
            picks in prop::collection::vec((any::<prop::sample::Index>(), -2.0f32..2.0), 1..10),
        ) {
            let mut pairs: Vec<(u32, f32)> = picks.iter().map(|(i, w)| (i.index(row.len()) as u32, *w)).collect();
            pairs.sort_by_key(|p| p.0);
            pairs.dedup_by_key(|p| p.0);
            let mut set = AtomSet::default();
            set.clear();
            set.push_pairs(&mut pairs.clone());
            let mut dense = vec![0.0f64; row.len()];
            for &(i, w) in &pairs {
                dense[i as usize] = w as f64;
            }
            let exact: f64 = dense.iter().zip(&row).map(|(a, x)| a * *x as f64).sum();
            let sparse = set.get(0).project(&row) as f64;
            prop_assert!((sparse - exact).abs() <= 1e-4 * (1.0 + exact.abs()));
        }
    }

    /// X (whole numbers, times `scale`) and its rows' running sums, as f32 arrays
    /// (read from bytes where the sums fit in them).
    fn with_running_sums(
        rows: &[Vec<i32>],
        n_features: usize,
        scale: i32,
    ) -> (Array2<f32>, Array2<f32>) {
        let x: Vec<f32> = rows
            .iter()
            .flat_map(|row| row[..n_features].iter().map(|&v| (v * scale) as f32))
            .collect();
        let x = Array2::from_shape_vec((rows.len(), n_features), x).unwrap();
        let direct = Rows::from_view(x.view()).unwrap();
        let sums: Vec<f32> = match direct.running_sums() {
            RunningSums::Bytes(sums) => (0..sums.n_samples)
                .flat_map(|i| sums.row(i).iter().map(|&v| v as f32).collect::<Vec<_>>())
                .collect(),
            RunningSums::Floats(sums) => (0..sums.n_samples)
                .flat_map(|i| sums.row(i).to_vec())
                .collect(),
        };
        let sums = Array2::from_shape_vec((rows.len(), n_features), sums).unwrap();
        (x, sums)
    }

    proptest! {
        #[test]
        fn atoms_over_running_sums_project_as_the_atoms_do_bit_for_bit(
            n_features in 1usize..60,
            rows in prop::collection::vec(prop::collection::vec(-3i32..300, 60), 1..6),
            atoms in prop::collection::vec(prop::collection::vec(any::<prop::sample::Index>(), 1..20), 1..8),
        ) {
            let (x, sums) = with_running_sums(&rows, n_features, 1);
            let (rows, sums) = (Rows::from_view(x.view()).unwrap(), Rows::from_view(sums.view()).unwrap());
            prop_assert!(rows.whole_range(1).is_some());
            let mut set = AtomSet::default();
            set.clear();
            for picks in &atoms {
                let mut indices: Vec<u32> = picks.iter().map(|i| i.index(n_features) as u32).collect();
                indices.sort_unstable();
                indices.dedup();
                set.push_unit(&mut indices);
            }
            let mut rewritten = AtomSet::default();
            set.to_running_sums(&mut rewritten);
            prop_assert_eq!(rewritten.len(), set.len());
            for a in 0..set.len() {
                let (atom, over_sums) = (set.get(a), rewritten.get(a));
                let runs = 1 + atom.indices.windows(2).filter(|w| w[1] != w[0] + 1).count();
                let from_zero = usize::from(atom.indices[0] == 0);
                prop_assert_eq!(over_sums.indices.len(), 2 * runs - from_zero);
                prop_assert!(over_sums.has_unit_weights());
                for i in 0..rows.n_samples {
                    let direct = atom.project(rows.row(i));
                    prop_assert_eq!(over_sums.project(sums.row(i)).to_bits(), direct.to_bits());
                }
            }
        }
    }

    proptest! {
        #[test]
        fn integer_weighted_atoms_over_running_sums_project_bit_for_bit(
            n_features in 1usize..80,
            rows in prop::collection::vec(prop::collection::vec(-300i32..300, 80), 1..6),
            atoms in prop::collection::vec(
                prop::collection::vec((any::<prop::sample::Index>(), -3i32..=3), 1..30), 1..8),
        ) {
            // Weights -3..=3 with runs of equal and of changing weight, touching or not,
            // on values as large as the exactness bound allows for their spread of 6.
            let spread = 6;
            let scale = (1 << 24) / (n_features as i32 * spread as i32 * 300);
            let (x, sums) = with_running_sums(&rows, n_features, scale);
            let (rows, sums) = (Rows::from_view(x.view()).unwrap(), Rows::from_view(sums.view()).unwrap());
            prop_assert!(rows.whole_range(spread).is_some());
            let mut set = AtomSet::default();
            set.clear();
            for picks in &atoms {
                let mut pairs: Vec<(u32, f32)> = picks
                    .iter()
                    .map(|(i, w)| (i.index(n_features) as u32, *w as f32))
                    .filter(|&(_, w)| w != 0.0)
                    .collect();
                pairs.sort_by_key(|p| p.0);
                pairs.dedup_by_key(|p| p.0);
                if pairs.is_empty() {
                    pairs.push((0, 1.0));
                }
                set.push_pairs(&mut pairs);
            }
            let mut rewritten = AtomSet::default();
            set.to_running_sums(&mut rewritten);
            prop_assert_eq!(rewritten.len(), set.len());
            for a in 0..set.len() {
                let (atom, over_sums) = (set.get(a), rewritten.get(a));
                prop_assert!(over_sums.indices.windows(2).all(|w| w[0] < w[1]));
                prop_assert!(over_sums.weights.iter().all(|&w| w != 0.0 && w.trunc() == w));
                // One term per change of weight along the features, none at index -1.
                let weight_at = |j: i64| -> f32 {
                    atom.indices.iter().position(|&i| i as i64 == j).map_or(0.0, |p| atom.weights[p])
                };
                let changes = (0..n_features as i64).filter(|&j| weight_at(j) != weight_at(j + 1)).count();
                prop_assert_eq!(over_sums.indices.len(), changes);
                for i in 0..rows.n_samples {
                    let direct = atom.project(rows.row(i));
                    let exact: i64 = atom.indices.iter().zip(atom.weights)
                        .map(|(&j, &w)| w as i64 * rows.row(i)[j as usize] as i64).sum();
                    prop_assert_eq!(direct as i64, exact);
                    prop_assert_eq!(over_sums.project(sums.row(i)).to_bits(), direct.to_bits());
                }
            }
        }
    }
}
