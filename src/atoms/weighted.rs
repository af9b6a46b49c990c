use super::image::{cartesian, AxisCell, Placer};
use super::patch::Patches;
use super::{AtomSampler, AtomSet};
use crate::error::{invalid, Result};
use crate::rng::Rng;

/// How a weighted patch weighs its cells; see [`AtomKind::Bumps`] and
/// [`AtomKind::Gabors`].
///
/// [`AtomKind::Bumps`]: super::AtomKind::Bumps
/// [`AtomKind::Gabors`]: super::AtomKind::Gabors
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    /// Product over contiguous axes of a tent `1, 2, .., 2, 1` across the extent.
    Bump,
    /// `round(2 e cos(phase))`: oriented stripes under a Gaussian envelope `e`.
    Gabor,
}

/// Largest stripe amplitude of Gabor atoms: weights lie in `-2..=2`.
const GABOR_AMPLITUDE: f64 = 2.0;

impl Profile {
    fn name(self) -> &'static str {
        match self {
            Profile::Bump => "bumps",
            Profile::Gabor => "Gabor atoms",
        }
    }

    /// The largest weight magnitude and the weights' spread `max(0, max w) - min(0,
    /// min w)` of atoms drawn over `patches`.
    pub(super) fn weight_bounds(self, patches: &Patches) -> (u32, u32) {
        match self {
            Profile::Bump => {
                let peak = (0..patches.image_shape.len())
                    .filter(|&axis| patches.contiguous[axis])
                    .map(|axis| patches.patch_max[axis].div_ceil(2) as u32)
                    .product();
                (peak, peak)
            }
            Profile::Gabor => (GABOR_AMPLITUDE as u32, 2 * GABOR_AMPLITUDE as u32),
        }
    }

    pub(super) fn validate(self, patches: &Patches, n_features: usize) -> Result<()> {
        patches.validate(n_features)?;
        if !patches.contiguous.contains(&true) {
            return Err(invalid(
                "contiguous",
                format!(
                    "{} vary their weights along contiguous axes and need at least one; \
                     got contiguous {:?}",
                    self.name(),
                    patches.contiguous
                ),
            ));
        }
        Ok(())
    }
}

/// Draws patches weighted by a [`Profile`], placed by [`Patches`]' rules.
pub struct WeightedPatchSampler {
    patches: Patches,
    profile: Profile,
    placer: Placer,
    axes: Vec<Vec<AxisCell>>,
    extents: Vec<usize>,
    /// Per axis, the stripes' direction (Gabor atoms; 0 on non-contiguous axes).
    direction: Vec<f64>,
    cells: Vec<(u32, f32)>,
    phases: Vec<(u32, (f64, f64))>,
    next_cells: Vec<(u32, f32)>,
    next_phases: Vec<(u32, (f64, f64))>,
}

impl WeightedPatchSampler {
    /// A sampler for validated `patches` weighted by `profile`.
    pub fn new(patches: Patches, profile: Profile) -> Self {
        let n_axes = patches.image_shape.len();
        WeightedPatchSampler {
            placer: Placer::new(&patches),
            patches,
            profile,
            axes: vec![Vec::new(); n_axes],
            extents: vec![0; n_axes],
            direction: vec![0.0; n_axes],
            cells: Vec::new(),
            phases: Vec::new(),
            next_cells: Vec::new(),
            next_phases: Vec::new(),
        }
    }

    fn place(&mut self, rng: &mut Rng) {
        for (axis, cells) in self.axes.iter_mut().enumerate() {
            self.extents[axis] = self.patches.draw_extent(rng, axis);
            self.placer.place(rng, axis, self.extents[axis], cells);
        }
    }

    /// One bump: its weights are whole and positive, so it is never empty.
    fn bump(&mut self, rng: &mut Rng) {
        self.place(rng);
        let (contiguous, extents) = (&self.patches.contiguous, &self.extents);
        cartesian(
            &self.axes,
            1.0f32,
            |weight, axis, cell| {
                if !contiguous[axis] {
                    return weight;
                }
                let tent = (cell.offset + 1).min(extents[axis] as u32 - cell.offset);
                weight * tent as f32
            },
            &mut self.cells,
            &mut self.next_cells,
        );
    }

    /// One Gabor atom, drawn again until some weight rounds to a nonzero value.
    fn gabor(&mut self, rng: &mut Rng) {
        loop {
            self.place(rng);
            let contiguous = &self.patches.contiguous;
            // A uniform direction: the only one on one axis, a normalised Gaussian
            // vector on more.
            let n_contiguous = contiguous.iter().filter(|&&c| c).count();
            for (axis, component) in self.direction.iter_mut().enumerate() {
                *component = match (contiguous[axis], n_contiguous) {
                    (false, _) => 0.0,
                    (true, 1) => 1.0,
                    (true, _) => rng.normal(),
                };
            }
            let norm = self.direction.iter().map(|c| c * c).sum::<f64>().sqrt();
            self.direction.iter_mut().for_each(|c| *c /= norm);
            let widest = (0..self.extents.len())
                .filter(|&axis| contiguous[axis])
                .map(|axis| self.extents[axis])
                .max()
                .unwrap_or(1)
                .max(2) as f64;
            // Half a period to one period across the patch: edges, lines and bars.
            let wavelength = widest * (1.0 + rng.unit());
            let phase = std::f64::consts::TAU * rng.unit();
            let (extents, direction) = (&self.extents, &self.direction);
            cartesian(
                &self.axes,
                (0.0f64, 0.0f64),
                |(along, envelope), axis, cell| {
                    if !contiguous[axis] {
                        return (along, envelope);
                    }
                    let extent = extents[axis] as f64;
                    let from_centre = cell.offset as f64 - (extent - 1.0) / 2.0;
                    let scaled = from_centre / (extent / 2.0);
                    (
                        along + direction[axis] * from_centre,
                        envelope + scaled * scaled,
                    )
                },
                &mut self.phases,
                &mut self.next_phases,
            );
            self.cells.clear();
            for &(flat, (along, envelope)) in &self.phases {
                let wave = (std::f64::consts::TAU * along / wavelength + phase).cos();
                let weight = (GABOR_AMPLITUDE * (-0.5 * envelope).exp() * wave).round();
                if weight != 0.0 {
                    self.cells.push((flat, weight as f32));
                }
            }
            if !self.cells.is_empty() {
                return;
            }
        }
    }
}

impl AtomSampler for WeightedPatchSampler {
    fn append_atoms(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet) {
        for _ in 0..n_atoms {
            match self.profile {
                Profile::Bump => self.bump(rng),
                Profile::Gabor => self.gabor(rng),
            }
            out.push_pairs(&mut self.cells);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draw(patches: Patches, profile: Profile, n_draws: usize, seed: u64) -> AtomSet {
        profile
            .validate(&patches, patches.image_shape.iter().product())
            .unwrap();
        let mut sampler = WeightedPatchSampler::new(patches, profile);
        let mut set = AtomSet::default();
        sampler.sample_node(&mut Rng::new(seed, 0), n_draws, &mut set);
        set
    }

    #[test]
    fn bumps_are_tents_whose_product_peaks_in_the_middle() {
        let patches = Patches::new(vec![30, 30], vec![3, 1], vec![3, 5]);
        let (peak, _) = Profile::Bump.weight_bounds(&patches);
        assert_eq!(peak, 2 * 3);
        let set = draw(patches, Profile::Bump, 2000, 1);
        let mut seen_whole = false;
        for a in 0..set.len() {
            let atom = set.get(a);
            assert!(atom
                .weights
                .iter()
                .all(|&w| w >= 1.0 && w <= peak as f32 && w.trunc() == w));
            let rows: Vec<u32> = atom.indices.iter().map(|i| i / 30).collect();
            let (top, bottom) = (rows[0], *rows.last().unwrap());
            if bottom - top == 2 && atom.indices.len().is_multiple_of(3) {
                // Three full rows: the middle row weighs twice the outer ones.
                let width = atom.indices.len() / 3;
                let (first, middle) = (&atom.weights[..width], &atom.weights[width..2 * width]);
                assert!(
                    first.iter().zip(middle).all(|(f, m)| *m == 2.0 * f),
                    "{atom:?}"
                );
                if width == 5 {
                    assert_eq!(middle, [2.0, 4.0, 6.0, 4.0, 2.0]);
                    seen_whole = true;
                }
            }
        }
        assert!(seen_whole);
    }

    #[test]
    fn gabor_weights_are_small_integers_striped_in_every_direction() {
        let patches = Patches::new(vec![20, 20], vec![5, 5], vec![5, 5]);
        let set = draw(patches, Profile::Gabor, 4000, 2);
        let (mut rows_vary, mut columns_vary, mut signs_mixed) = (0, 0, 0);
        for a in 0..set.len() {
            let atom = set.get(a);
            assert!(!atom.indices.is_empty());
            assert!(atom
                .weights
                .iter()
                .all(|&w| w != 0.0 && w.abs() <= 2.0 && w.trunc() == w));
            signs_mixed += usize::from(
                atom.weights.iter().any(|&w| w > 0.0) && atom.weights.iter().any(|&w| w < 0.0),
            );
            let weight_at = |i: u32| {
                atom.indices
                    .iter()
                    .position(|&j| j == i)
                    .map(|p| atom.weights[p])
            };
            // Where do the weights change: between neighbours along a row, down a column?
            let changes = |step: u32| {
                atom.indices.iter().zip(atom.weights).any(|(&i, &w)| {
                    let same_row = step == 20 || (i % 20) + 1 < 20;
                    same_row && weight_at(i + step).is_some_and(|v| v != w)
                })
            };
            rows_vary += usize::from(changes(1));
            columns_vary += usize::from(changes(20));
        }
        assert!(
            signs_mixed > set.len() / 3,
            "stripes of both signs: {signs_mixed}"
        );
        assert!(
            rows_vary > 1000 && columns_vary > 1000,
            "{rows_vary} {columns_vary}"
        );
    }

    #[test]
    fn weighted_patches_need_a_contiguous_axis() {
        let unordered =
            Patches::new(vec![4, 5], vec![1, 1], vec![2, 2]).with_contiguous(vec![false, false]);
        for profile in [Profile::Bump, Profile::Gabor] {
            let message = profile.validate(&unordered, 20).unwrap_err().to_string();
            assert!(message.contains("need at least one"), "{message}");
        }
        let half = unordered.with_contiguous(vec![false, true]);
        assert!(Profile::Gabor.validate(&half, 20).is_ok());
    }
}
