use serde::{Deserialize, Serialize};

use super::image::{AxisCell, Placer};
use super::{AtomSampler, AtomSet};
use crate::error::{invalid, Result};
use crate::rng::Rng;

/// The MORF dictionary: each row is a row-major array of shape `image_shape`, and an
/// atom sums the cells of a random patch of it.
///
/// Per axis `k` of length `D`, the patch extent is uniform in
/// `[patch_min[k], patch_max[k]]`. A contiguous axis places a run of that length whose
/// start is uniform in `[1 - extent, D - 1]`, dropping cells outside the axis (zero
/// padding), so every cell is equally likely to be covered; with `wrap` the run starts
/// anywhere in `[0, D - 1]` and continues modulo `D`. A non-contiguous axis (unordered
/// sensors, say) takes `extent` distinct random positions instead.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Patches {
    /// Shape each row is reshaped to, row-major; its product is the number of features.
    pub image_shape: Vec<usize>,
    /// Smallest patch extent per axis (at least 1).
    pub patch_min: Vec<usize>,
    /// Largest patch extent per axis (at most the axis length).
    pub patch_max: Vec<usize>,
    /// Per axis: indices continue cyclically past the end (a circle, an angle).
    pub wrap: Vec<bool>,
    /// Per axis: patches are runs of neighbours; `false` draws distinct random positions.
    pub contiguous: Vec<bool>,
}

impl Patches {
    /// Contiguous, non-wrapping patches with the given per-axis extents.
    pub fn new(image_shape: Vec<usize>, patch_min: Vec<usize>, patch_max: Vec<usize>) -> Self {
        let n_axes = image_shape.len();
        Patches {
            image_shape,
            patch_min,
            patch_max,
            wrap: vec![false; n_axes],
            contiguous: vec![true; n_axes],
        }
    }

    /// Sets which axes wrap around.
    pub fn with_wrap(mut self, wrap: Vec<bool>) -> Self {
        self.wrap = wrap;
        self
    }

    /// Sets which axes are contiguous.
    pub fn with_contiguous(mut self, contiguous: Vec<bool>) -> Self {
        self.contiguous = contiguous;
        self
    }

    /// Mean length of the runs of neighbouring features an atom covers: patches are
    /// stored row-major, so each run is one line of the patch along the last axis.
    pub fn mean_run_length(&self) -> f64 {
        let last = self.image_shape.len() - 1;
        if self.contiguous[last] {
            (self.patch_min[last] + self.patch_max[last]) as f64 / 2.0
        } else {
            1.0
        }
    }

    /// Mean number of cells of a patch: the product of the mean extents (drawn uniformly
    /// and independently per axis), before clipping at a border.
    pub fn mean_cells(&self) -> f64 {
        self.patch_min
            .iter()
            .zip(&self.patch_max)
            .map(|(&low, &high)| (low + high) as f64 / 2.0)
            .product()
    }

    /// A patch extent along `axis`, uniform in `[patch_min, patch_max]`.
    pub(super) fn draw_extent(&self, rng: &mut Rng, axis: usize) -> usize {
        rng.between(self.patch_min[axis] as i64, self.patch_max[axis] as i64) as usize
    }

    pub(crate) fn validate(&self, n_features: usize) -> Result<()> {
        let n_axes = self.image_shape.len();
        if n_axes == 0 || self.image_shape.contains(&0) {
            return Err(invalid(
                "image_shape",
                format!(
                    "needs at least one axis, all positive, got {:?}",
                    self.image_shape
                ),
            ));
        }
        let cells = self
            .image_shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d));
        if cells != Some(n_features) {
            return Err(invalid(
                "image_shape",
                format!(
                    "{:?} holds {} cells but X has {n_features} features; the product of \
                     image_shape must equal n_features",
                    self.image_shape,
                    cells.map_or_else(|| "too many".to_string(), |c| c.to_string()),
                ),
            ));
        }
        for (name, len) in [
            ("patch_min", self.patch_min.len()),
            ("patch_max", self.patch_max.len()),
            ("wrap", self.wrap.len()),
            ("contiguous", self.contiguous.len()),
        ] {
            if len != n_axes {
                return Err(invalid(
                    name,
                    format!("needs one value per image axis ({n_axes}), got {len}"),
                ));
            }
        }
        for axis in 0..n_axes {
            let (low, high, length) = (
                self.patch_min[axis],
                self.patch_max[axis],
                self.image_shape[axis],
            );
            if low == 0 {
                return Err(invalid(
                    "patch_min",
                    format!("axis {axis}: must be >= 1, got 0"),
                ));
            }
            if low > high {
                return Err(invalid(
                    "patch_min",
                    format!("axis {axis}: patch_min {low} is larger than patch_max {high}"),
                ));
            }
            if high > length {
                return Err(invalid(
                    "patch_max",
                    format!(
                        "axis {axis}: patch_max {high} is larger than the image axis of \
                         length {length}"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Draws [`Patches`] atoms.
pub struct PatchSampler {
    patches: Patches,
    placer: Placer,
    axis_cells: Vec<AxisCell>,
    flat: Vec<u32>,
    next_flat: Vec<u32>,
}

impl PatchSampler {
    /// A sampler for validated `patches`.
    pub fn new(patches: Patches) -> Self {
        PatchSampler {
            placer: Placer::new(&patches),
            patches,
            axis_cells: Vec::new(),
            flat: Vec::new(),
            next_flat: Vec::new(),
        }
    }
}

impl AtomSampler for PatchSampler {
    fn append_atoms(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet) {
        for _ in 0..n_atoms {
            self.flat.clear();
            self.flat.push(0);
            for axis in 0..self.placer.n_axes() {
                let extent = self.patches.draw_extent(rng, axis);
                self.placer.place(rng, axis, extent, &mut self.axis_cells);
                self.next_flat.clear();
                for &base in &self.flat {
                    for cell in &self.axis_cells {
                        self.next_flat.push(base + cell.flat);
                    }
                }
                std::mem::swap(&mut self.flat, &mut self.next_flat);
            }
            out.push_unit(&mut self.flat);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(patches: Patches, n_draws: usize, seed: u64) -> Vec<Vec<u32>> {
        let mut sampler = PatchSampler::new(patches);
        let mut rng = Rng::new(seed, 0);
        let mut set = AtomSet::default();
        sampler.sample_node(&mut rng, n_draws, &mut set);
        (0..set.len())
            .map(|i| set.get(i).indices.to_vec())
            .collect()
    }

    /// (row, column) of a flat index in a `width`-wide image.
    fn cell(index: u32, width: usize) -> (usize, usize) {
        (index as usize / width, index as usize % width)
    }

    #[test]
    fn patches_are_rectangles_inside_the_image() {
        let (height, width) = (7, 9);
        for atom in draw(
            Patches::new(vec![height, width], vec![2, 1], vec![3, 4]),
            2000,
            1,
        ) {
            assert!(atom.iter().all(|&i| (i as usize) < height * width));
            let rows: Vec<usize> = atom.iter().map(|&i| cell(i, width).0).collect();
            let cols: Vec<usize> = atom.iter().map(|&i| cell(i, width).1).collect();
            let (r0, r1) = (*rows.iter().min().unwrap(), *rows.iter().max().unwrap());
            let (c0, c1) = (*cols.iter().min().unwrap(), *cols.iter().max().unwrap());
            // Clipped at the border, so at most the drawn extent, and a full rectangle.
            assert!(r1 - r0 < 3 && c1 - c0 < 4);
            assert_eq!(atom.len(), (r1 - r0 + 1) * (c1 - c0 + 1));
            assert!(
                atom.windows(2).all(|w| w[0] < w[1]),
                "sorted and distinct: {atom:?}"
            );
        }
    }

    #[test]
    fn every_cell_is_equally_likely_to_be_covered() {
        // Coverage of each cell over many draws; with equal probabilities the counts
        // follow one binomial, so a chi-square statistic over the cells stays small.
        let length = 20;
        let n_draws = 40_000;
        for (extent, wrap) in [(5, false), (12, false), (5, true)] {
            let patches =
                Patches::new(vec![length], vec![extent], vec![extent]).with_wrap(vec![wrap]);
            let mut covered = vec![0f64; length];
            for atom in draw(patches, n_draws, 3) {
                atom.iter().for_each(|&i| covered[i as usize] += 1.0);
            }
            let p = if wrap {
                extent as f64 / length as f64
            } else {
                extent as f64 / (length + extent - 1) as f64
            };
            let expected = n_draws as f64 * p;
            let chi_square: f64 = covered
                .iter()
                .map(|&c| (c - expected).powi(2) / (expected * (1.0 - p)))
                .sum();
            // 19 degrees of freedom: 43.8 is the 0.999 quantile.
            assert!(
                chi_square < 43.8,
                "extent {extent} wrap {wrap}: chi2 {chi_square}, {covered:?}"
            );
        }
    }

    #[test]
    fn wrapping_runs_continue_at_the_start() {
        let length = 10;
        let atoms = draw(
            Patches::new(vec![length], vec![4], vec![4]).with_wrap(vec![true]),
            500,
            5,
        );
        let mut saw_wrapped = false;
        for atom in atoms {
            assert_eq!(atom.len(), 4, "a wrapping run keeps its full extent");
            // Sorted indices of a cyclic run: consecutive, or split into a head at 0 and
            // a tail ending at length - 1.
            let gaps = atom.windows(2).filter(|w| w[1] - w[0] != 1).count();
            assert!(gaps <= 1);
            if gaps == 1 {
                saw_wrapped = true;
                assert_eq!(atom[0], 0);
                assert_eq!(*atom.last().unwrap() as usize, length - 1);
            }
        }
        assert!(saw_wrapped);
    }

    #[test]
    fn non_contiguous_axes_take_distinct_positions() {
        // 5 unordered sensors x 30 time points; sensors drawn freely, time contiguous.
        let (sensors, times) = (5, 30);
        let patches = Patches::new(vec![sensors, times], vec![2, 3], vec![4, 3])
            .with_contiguous(vec![false, true]);
        let mut adjacent_only = true;
        for atom in draw(patches, 3000, 9) {
            let mut rows: Vec<usize> = atom.iter().map(|&i| cell(i, times).0).collect();
            rows.dedup();
            assert!((2..=4).contains(&rows.len()), "distinct sensors: {rows:?}");
            let mut columns: Vec<usize> = atom.iter().map(|&i| cell(i, times).1).collect();
            columns.sort();
            columns.dedup();
            assert!(columns.len() <= 3);
            assert_eq!(
                atom.len(),
                rows.len() * columns.len(),
                "each sensor, the same time run"
            );
            adjacent_only &= rows.windows(2).all(|w| w[1] == w[0] + 1);
        }
        assert!(
            !adjacent_only,
            "non-contiguous sensors are not forced to be neighbours"
        );
    }

    #[test]
    fn validation_names_the_problem() {
        let check = |p: Patches| p.validate(28 * 28).unwrap_err().to_string();
        assert!(check(Patches::new(vec![28, 27], vec![1, 1], vec![2, 2])).contains("image_shape"));
        assert!(check(Patches::new(vec![28, 28], vec![1, 1], vec![2, 29]))
            .contains("larger than the image"));
        assert!(check(Patches::new(vec![28, 28], vec![3, 1], vec![2, 2]))
            .contains("larger than patch_max"));
        assert!(check(Patches::new(vec![28, 28], vec![0, 1], vec![2, 2])).contains(">= 1"));
        assert!(check(Patches::new(vec![28, 28], vec![1], vec![2]))
            .contains("one value per image axis"));
        assert!(Patches::new(vec![28, 28], vec![2, 2], vec![2, 9])
            .validate(784)
            .is_ok());
    }
}
