use serde::{Deserialize, Serialize};

use super::image::{cartesian, AxisCell, Placer};
use super::patch::Patches;
use super::{AtomSampler, AtomSet};
use crate::error::{invalid, Result};
use crate::rng::Rng;

/// Signed patches: two or three equal rectangles side by side along a random axis,
/// weighted +1/-1 (an edge detector) or -1/+2/-1 (a line detector).
///
/// Each rectangle has the extents [`Patches`] draws (uniform in `[patch_min,
/// patch_max]` per axis); the bands lie side by side along an axis drawn uniformly
/// among those that can hold them (contiguous, at least `bands` cells long, and on a
/// cyclic axis at least `bands * patch_min` cells long, where the band width is
/// limited to `length / bands` so that the bands do not overlap). The whole atom is
/// placed by [`Patches`]' rules: cells past a border are dropped (zero padding), so
/// an atom at the border may keep only some of its bands. The opposite signs would
/// give the same splits, so they are not drawn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SignedPatches {
    /// Image, band extents, wrapping and contiguity.
    pub patches: Patches,
    /// Number of bands: 2 (+1, -1) or 3 (-1, +2, -1).
    pub bands: usize,
}

impl SignedPatches {
    /// Edge detectors (two bands) or line detectors (three) over `patches`.
    pub fn new(patches: Patches, bands: usize) -> Self {
        SignedPatches { patches, bands }
    }

    /// Weight of each band in order.
    fn pattern(&self) -> &'static [f32] {
        if self.bands == 2 {
            &[1.0, -1.0]
        } else {
            &[-1.0, 2.0, -1.0]
        }
    }

    /// The largest weight magnitude and the weights' spread `max(0, max w) - min(0,
    /// min w)`.
    pub(super) fn weight_bounds(&self) -> (u32, u32) {
        if self.bands == 2 {
            (1, 2)
        } else {
            (2, 3)
        }
    }

    /// Axes the bands may lie along.
    fn band_axes(&self) -> Vec<usize> {
        let p = &self.patches;
        (0..p.image_shape.len())
            .filter(|&axis| {
                let length = p.image_shape[axis];
                p.contiguous[axis]
                    && length >= self.bands
                    && (!p.wrap[axis] || self.bands * p.patch_min[axis] <= length)
            })
            .collect()
    }

    pub(crate) fn validate(&self, n_features: usize) -> Result<()> {
        self.patches.validate(n_features)?;
        if !(2..=3).contains(&self.bands) {
            return Err(invalid(
                "bands",
                format!("signed patches have 2 or 3 bands, got {}", self.bands),
            ));
        }
        if self.band_axes().is_empty() {
            return Err(invalid(
                "image_shape",
                format!(
                    "signed patches of {} bands need an axis that is contiguous, at least \
                     {} cells long and, if it wraps, at least {} x patch_min cells long; \
                     image_shape {:?}, patch_min {:?}, contiguous {:?}",
                    self.bands,
                    self.bands,
                    self.bands,
                    self.patches.image_shape,
                    self.patches.patch_min,
                    self.patches.contiguous,
                ),
            ));
        }
        Ok(())
    }
}

/// Draws [`SignedPatches`] atoms.
pub struct SignedPatchSampler {
    family: SignedPatches,
    band_axes: Vec<usize>,
    placer: Placer,
    axes: Vec<Vec<AxisCell>>,
    cells: Vec<(u32, f32)>,
    next: Vec<(u32, f32)>,
}

impl SignedPatchSampler {
    /// A sampler for validated `family`.
    pub fn new(family: SignedPatches) -> Self {
        SignedPatchSampler {
            band_axes: family.band_axes(),
            placer: Placer::new(&family.patches),
            axes: vec![Vec::new(); family.patches.image_shape.len()],
            family,
            cells: Vec::new(),
            next: Vec::new(),
        }
    }
}

impl AtomSampler for SignedPatchSampler {
    fn append_atoms(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet) {
        let p = &self.family.patches;
        let (bands, pattern) = (self.family.bands, self.family.pattern());
        for _ in 0..n_atoms {
            let band_axis = self.band_axes[rng.below(self.band_axes.len())];
            let mut band_width = 1;
            for (axis, cells) in self.axes.iter_mut().enumerate() {
                let extent = if axis == band_axis {
                    let length = p.image_shape[axis];
                    let widest = if p.wrap[axis] {
                        p.patch_max[axis].min(length / bands)
                    } else {
                        p.patch_max[axis]
                    };
                    band_width = rng.between(p.patch_min[axis] as i64, widest as i64) as usize;
                    bands * band_width
                } else {
                    p.draw_extent(rng, axis)
                };
                self.placer.place(rng, axis, extent, cells);
            }
            let band_of = |cell: AxisCell| pattern[cell.offset as usize / band_width];
            cartesian(
                &self.axes,
                1.0f32,
                |weight, axis, cell| {
                    if axis == band_axis {
                        weight * band_of(cell)
                    } else {
                        weight
                    }
                },
                &mut self.cells,
                &mut self.next,
            );
            out.push_pairs(&mut self.cells);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(family: SignedPatches, n_draws: usize, seed: u64) -> AtomSet {
        family
            .validate(family.patches.image_shape.iter().product())
            .unwrap();
        let mut sampler = SignedPatchSampler::new(family);
        let mut set = AtomSet::default();
        sampler.sample_node(&mut Rng::new(seed, 0), n_draws, &mut set);
        set
    }

    /// Per (row, column) of a `width`-wide image, the atom's weight (0 off the atom).
    fn picture(indices: &[u32], weights: &[f32], height: usize, width: usize) -> Vec<Vec<f32>> {
        let mut image = vec![vec![0.0; width]; height];
        for (&i, &w) in indices.iter().zip(weights) {
            image[i as usize / width][i as usize % width] = w;
        }
        image
    }

    #[test]
    fn edges_are_two_equal_rectangles_of_opposite_sign_side_by_side() {
        let (height, width) = (12, 14);
        let patches = Patches::new(vec![height, width], vec![2, 1], vec![3, 4]);
        let set = draw(SignedPatches::new(patches, 2), 3000, 1);
        let (mut across_rows, mut across_columns) = (0, 0);
        for a in 0..set.len() {
            let atom = set.get(a);
            assert!(atom.indices.windows(2).all(|w| w[0] < w[1]));
            let image = picture(atom.indices, atom.weights, height, width);
            let cells: Vec<(usize, usize, f32)> = (0..height)
                .flat_map(|r| (0..width).map(move |c| (r, c)))
                .filter_map(|(r, c)| (image[r][c] != 0.0).then_some((r, c, image[r][c])))
                .collect();
            let plus: Vec<_> = cells.iter().filter(|c| c.2 == 1.0).collect();
            let minus: Vec<_> = cells.iter().filter(|c| c.2 == -1.0).collect();
            assert_eq!(
                plus.len() + minus.len(),
                cells.len(),
                "weights are +1 and -1"
            );
            if plus.is_empty() || minus.is_empty() {
                continue; // a band past the border
            }
            let bounds = |cells: &[&(usize, usize, f32)]| {
                let rows = cells.iter().map(|c| c.0);
                let cols = cells.iter().map(|c| c.1);
                (
                    rows.clone().min().unwrap(),
                    rows.max().unwrap(),
                    cols.clone().min().unwrap(),
                    cols.max().unwrap(),
                )
            };
            let (p, m) = (bounds(&plus), bounds(&minus));
            for (side, n) in [(p, plus.len()), (m, minus.len())] {
                assert_eq!(
                    n,
                    (side.1 - side.0 + 1) * (side.3 - side.2 + 1),
                    "a full rectangle"
                );
            }
            if p.1 + 1 == m.0 {
                across_rows += 1;
                assert_eq!((p.2, p.3), (m.2, m.3), "the bands share their columns");
            } else {
                assert_eq!(p.3 + 1, m.2, "the -1 band follows the +1 band: {image:?}");
                assert_eq!((p.0, p.1), (m.0, m.1), "the bands share their rows");
                across_columns += 1;
            }
        }
        // Either axis, about equally often.
        let share = across_rows as f64 / (across_rows + across_columns) as f64;
        assert!(
            (share - 0.5).abs() < 0.05,
            "share of bands across rows {share}"
        );
    }

    #[test]
    fn lines_weigh_the_middle_band_twice() {
        let patches = Patches::new(vec![40], vec![2], vec![4]);
        let set = draw(SignedPatches::new(patches, 3), 2000, 2);
        let mut whole = 0;
        for a in 0..set.len() {
            let atom = set.get(a);
            assert!(atom.indices.windows(2).all(|w| w[1] == w[0] + 1), "one run");
            let leading = atom.weights.iter().take_while(|&&w| w == -1.0).count();
            let middle = atom.weights[leading..]
                .iter()
                .take_while(|&&w| w == 2.0)
                .count();
            let trailing = atom.indices.len() - leading - middle;
            assert!(
                atom.weights[leading + middle..].iter().all(|&w| w == -1.0),
                "{atom:?}"
            );
            if leading != middle || trailing != middle {
                continue; // clipped at the border
            }
            whole += 1;
            assert!((2..=4).contains(&middle));
            assert_eq!(atom.weights.iter().sum::<f32>(), 0.0);
        }
        assert!(whole > 1000, "most atoms lie inside: {whole}");
    }

    #[test]
    fn wrapping_bands_never_overlap() {
        // 7 cells wrap around: three bands of width 2 fit, of width 3 would not.
        let patches = Patches::new(vec![7], vec![1], vec![5]).with_wrap(vec![true]);
        let set = draw(SignedPatches::new(patches, 3), 1000, 3);
        for a in 0..set.len() {
            let atom = set.get(a);
            assert!(
                atom.indices.len() == 3 || atom.indices.len() == 6,
                "{atom:?}"
            );
            assert_eq!(atom.weights.iter().sum::<f32>(), 0.0);
        }
    }

    #[test]
    fn validation_names_the_problem() {
        let message = |family: SignedPatches, n: usize| family.validate(n).unwrap_err().to_string();
        let unordered =
            Patches::new(vec![4, 5], vec![1, 1], vec![2, 2]).with_contiguous(vec![false, false]);
        assert!(message(SignedPatches::new(unordered, 2), 20)
            .contains("need an axis that is contiguous"));
        let short_cycle = Patches::new(vec![5], vec![3], vec![3]).with_wrap(vec![true]);
        assert!(message(SignedPatches::new(short_cycle, 2), 5).contains("2 x patch_min"));
        let fine = Patches::new(vec![5], vec![2], vec![3]);
        assert!(message(SignedPatches::new(fine.clone(), 4), 5).contains("2 or 3 bands"));
        assert!(message(SignedPatches::new(fine.clone(), 2), 6).contains("image_shape"));
        assert!(SignedPatches::new(fine, 3).validate(5).is_ok());
    }
}
