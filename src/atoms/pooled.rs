//! Pooled atoms: an image family's atom taken through a window of shifts, projecting
//! to the maximum (or minimum) of its responses ([`Window`]): a feature found anywhere
//! in the window, not at one place.

use serde::{Deserialize, Serialize};

use super::patch::Patches;
use super::window::{Reduce, Window, MAX_POOL_AXES};
use super::{AtomKind, AtomSampler, AtomSet};
use crate::error::{invalid, Result};
use crate::rng::Rng;

/// Which reductions a pooled family draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reductions {
    /// Every atom takes the maximum.
    Max,
    /// Every atom takes the minimum.
    Min,
    /// Each atom takes the maximum or the minimum, with equal chance.
    Both,
}

/// An image family (patches, signed patches, bumps or Gabor atoms) pooled over windows
/// of shifts.
///
/// Per axis `k`, the window holds a number of shifts uniform in `[shift_min[k],
/// shift_max[k]]`. Along an axis that does not wrap it is cut to the shifts that keep
/// the whole base atom inside the image (so a window as long as the axis pools over
/// every position the atom fits at) and placed uniformly among them; along a wrapping
/// axis it shifts by `0..shifts`, cells continuing cyclically. Axes that are not
/// contiguous are not shifted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Pooled {
    /// The family of base atoms.
    pub family: Box<AtomKind>,
    /// Fewest shifts per axis (at least 1).
    pub shift_min: Vec<usize>,
    /// Most shifts per axis (at most the axis length).
    pub shift_max: Vec<usize>,
    /// Maximum, minimum, or either.
    pub reduce: Reductions,
}

impl Pooled {
    /// The base family's image geometry, if it is an image family.
    fn geometry(&self) -> Option<&Patches> {
        match &*self.family {
            AtomKind::Patches(patches) | AtomKind::Bumps(patches) | AtomKind::Gabors(patches) => {
                Some(patches)
            }
            AtomKind::SignedPatches(signed) => Some(&signed.patches),
            _ => None,
        }
    }

    pub(crate) fn validate(&self, n_features: usize) -> Result<()> {
        let patches = self.geometry().ok_or_else(|| {
            invalid(
                "dictionary",
                "Pooled wraps an image family (Patches, SignedPatches, Bumps or Gabors)",
            )
        })?;
        self.family.validate(n_features)?;
        let n_axes = patches.image_shape.len();
        if n_axes > MAX_POOL_AXES {
            return Err(invalid(
                "image_shape",
                format!("pooled atoms shift along at most {MAX_POOL_AXES} axes, got {n_axes}"),
            ));
        }
        for (name, len) in [
            ("shift_min", self.shift_min.len()),
            ("shift_max", self.shift_max.len()),
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
                self.shift_min[axis],
                self.shift_max[axis],
                patches.image_shape[axis],
            );
            if low == 0 || low > high || high > length {
                return Err(invalid(
                    "shift_min",
                    format!(
                        "axis {axis}: needs 1 <= shift_min <= shift_max <= axis length \
                         {length}, got shift_min {low} and shift_max {high}"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// Draws [`Pooled`] atoms: base atoms from the family's sampler, then a window each.
pub struct PooledSampler<'a> {
    pooled: &'a Pooled,
    base: Box<dyn AtomSampler + 'a>,
    base_atoms: AtomSet,
}

impl<'a> PooledSampler<'a> {
    /// A sampler for validated `pooled` over `n_features` features.
    pub fn new(pooled: &'a Pooled, n_features: usize) -> Self {
        PooledSampler {
            base: pooled.family.sampler(n_features),
            pooled,
            base_atoms: AtomSet::default(),
        }
    }

    /// A window for the base atom `indices`.
    fn draw_window(&self, rng: &mut Rng, indices: &[u32]) -> Window {
        let patches = self.pooled.geometry().expect("validated");
        let reduce = match self.pooled.reduce {
            Reductions::Max => Reduce::Max,
            Reductions::Min => Reduce::Min,
            Reductions::Both if rng.below(2) == 0 => Reduce::Max,
            Reductions::Both => Reduce::Min,
        };
        let mut window = Window::unshifted(&patches.image_shape, &patches.wrap, reduce);
        let pad = MAX_POOL_AXES - patches.image_shape.len();
        for axis in 0..patches.image_shape.len() {
            if !patches.contiguous[axis] {
                continue;
            }
            let length = patches.image_shape[axis] as i64;
            let shifts = rng.between(
                self.pooled.shift_min[axis] as i64,
                self.pooled.shift_max[axis] as i64,
            );
            let (low, shifts) = if patches.wrap[axis] {
                (0, shifts)
            } else {
                let stride: i64 = patches.image_shape[axis + 1..]
                    .iter()
                    .map(|&d| d as i64)
                    .product();
                let position = |index: u32| index as i64 / stride % length;
                let first = indices.iter().map(|&i| position(i)).min().expect("an atom");
                let last = indices.iter().map(|&i| position(i)).max().expect("an atom");
                let fits = length - (last - first);
                let shifts = shifts.min(fits);
                (rng.between(0, fits - shifts) - first, shifts)
            };
            window.low[pad + axis] = low as i32;
            window.high[pad + axis] = (low + shifts - 1) as i32;
        }
        window
    }
}

impl AtomSampler for PooledSampler<'_> {
    fn append_atoms(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet) {
        self.base.sample_node(rng, n_atoms, &mut self.base_atoms);
        for a in 0..self.base_atoms.len() {
            let atom = self.base_atoms.get(a);
            let window = self.draw_window(rng, atom.indices);
            out.push_pooled(atom, window);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pooled(shape: Vec<usize>, shift_min: Vec<usize>, shift_max: Vec<usize>) -> Pooled {
        let n_axes = shape.len();
        Pooled {
            family: Box::new(AtomKind::Patches(Patches::new(
                shape,
                vec![1; n_axes],
                vec![3; n_axes],
            ))),
            shift_min,
            shift_max,
            reduce: Reductions::Both,
        }
    }

    #[test]
    fn windows_keep_atoms_inside_and_global_ones_cover_every_fit() {
        let family = pooled(vec![6, 7], vec![1, 7], vec![6, 7]);
        family.validate(42).unwrap();
        let mut sampler = PooledSampler::new(&family, 42);
        let mut set = AtomSet::default();
        sampler.sample_node(&mut Rng::new(3, 0), 500, &mut set);
        let (mut maxima, mut widest) = (0, 0);
        for a in 0..set.len() {
            let atom = set.get(a);
            let window = atom.window.expect("pooled");
            window.check(atom.indices, 42).unwrap();
            maxima += usize::from(window.reduce == Reduce::Max);
            // Along the last axis every window is as long as the axis allows.
            let columns: Vec<u32> = atom.indices.iter().map(|&i| i % 7).collect();
            let span = columns.iter().max().unwrap() - columns.iter().min().unwrap();
            let last = MAX_POOL_AXES - 1;
            assert_eq!((window.high[last] - window.low[last]) as u32, 6 - span);
            widest = widest.max(window.high[last - 1] - window.low[last - 1] + 1);
        }
        assert!((200..300).contains(&maxima), "{maxima} maxima of 500");
        assert!(widest >= 4);
    }

    #[test]
    fn only_image_families_pool() {
        let mut family = pooled(vec![4], vec![1], vec![4]);
        *family.family = AtomKind::AxisAligned;
        assert!(family.validate(4).is_err());
        assert!(pooled(vec![4], vec![2], vec![5]).validate(4).is_err());
        assert!(pooled(vec![4], vec![0], vec![2]).validate(4).is_err());
        assert!(pooled(vec![2, 2], vec![1], vec![2]).validate(4).is_err());
    }
}
