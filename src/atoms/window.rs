//! Shift windows of pooled atoms: the image shape, which axes wrap, and per axis the
//! range of shifts `low..=high` applied to every cell of a base atom
//! ([`pooled_response`](super::pooled_response) projects a row through one). Shifted
//! copies are never stored: their indices are computed from the shape. On an axis that
//! does not wrap, the window is restricted when it is drawn so that every shifted cell
//! stays inside the image (no padding is ever read); on a wrapping axis a shifted cell
//! continues modulo the axis length. Images of up to [`MAX_POOL_AXES`] axes are pooled;
//! fewer axes are padded in front with axes of length 1 and no shift.
use serde::{Deserialize, Serialize};

/// Most image axes a pooled atom shifts along.
pub const MAX_POOL_AXES: usize = 4;

/// How a pooled atom reduces its responses over the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Reduce {
    /// The largest response.
    Max,
    /// The smallest response.
    Min,
}

/// The shifts a pooled atom takes its base atom through, with the image geometry that
/// turns a shift into feature indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Window {
    /// The image shape, row-major, padded in front with 1s to [`MAX_POOL_AXES`] axes.
    pub shape: [u32; MAX_POOL_AXES],
    /// Per axis, whether shifted cells continue cyclically past the ends.
    pub wrap: [bool; MAX_POOL_AXES],
    /// Per axis, the smallest shift.
    pub low: [i32; MAX_POOL_AXES],
    /// Per axis, the largest shift.
    pub high: [i32; MAX_POOL_AXES],
    /// Maximum or minimum over the shifts.
    pub reduce: Reduce,
}

impl Window {
    /// A window without shifts over an image of `shape` (at most [`MAX_POOL_AXES`]
    /// axes) whose axes wrap where `wrap` says.
    pub fn unshifted(shape: &[usize], wrap: &[bool], reduce: Reduce) -> Window {
        let pad = MAX_POOL_AXES - shape.len();
        let mut window = Window {
            shape: [1; MAX_POOL_AXES],
            wrap: [false; MAX_POOL_AXES],
            low: [0; MAX_POOL_AXES],
            high: [0; MAX_POOL_AXES],
            reduce,
        };
        for axis in 0..shape.len() {
            window.shape[pad + axis] = shape[axis] as u32;
            window.wrap[pad + axis] = wrap[axis];
        }
        window
    }

    /// Number of shifts in the window.
    pub fn n_shifts(&self) -> usize {
        (0..MAX_POOL_AXES)
            .map(|k| (self.high[k] as i64 - self.low[k] as i64 + 1).max(0) as usize)
            .product()
    }

    /// Row-major strides of the padded shape.
    pub(super) fn strides(&self) -> [i64; MAX_POOL_AXES] {
        let mut strides = [1i64; MAX_POOL_AXES];
        for axis in (0..MAX_POOL_AXES - 1).rev() {
            strides[axis] = strides[axis + 1] * self.shape[axis + 1] as i64;
        }
        strides
    }

    /// Whether some wrapping axis shifts at all: then a shift is no constant offset of
    /// the flat indices.
    pub(super) fn shifts_wrap(&self) -> bool {
        (0..MAX_POOL_AXES).any(|k| self.wrap[k] && (self.low[k] != 0 || self.high[k] != 0))
    }

    /// Coordinates of flat index `index` in the padded shape.
    pub(super) fn coordinates(&self, index: u32) -> [i64; MAX_POOL_AXES] {
        let mut rest = index as i64;
        let mut coordinates = [0i64; MAX_POOL_AXES];
        for axis in (0..MAX_POOL_AXES).rev() {
            let length = self.shape[axis] as i64;
            coordinates[axis] = rest % length;
            rest /= length;
        }
        coordinates
    }

    /// The flat index of `index` moved by `shift`, continuing cyclically along wrapping
    /// axes; `None` where it leaves the image along an axis that does not wrap.
    pub fn shifted(&self, index: u32, shift: [i32; MAX_POOL_AXES]) -> Option<u32> {
        let coordinates = self.coordinates(index);
        let mut flat = 0i64;
        for axis in 0..MAX_POOL_AXES {
            let length = self.shape[axis] as i64;
            let mut position = coordinates[axis] + shift[axis] as i64;
            if self.wrap[axis] {
                position = position.rem_euclid(length);
            } else if !(0..length).contains(&position) {
                return None;
            }
            flat = flat * length + position;
        }
        Some(flat as u32)
    }

    /// Calls `visit` with every shift of the window, last axis fastest.
    pub fn for_each_shift(&self, mut visit: impl FnMut([i32; MAX_POOL_AXES])) {
        for s0 in self.low[0]..=self.high[0] {
            for s1 in self.low[1]..=self.high[1] {
                for s2 in self.low[2]..=self.high[2] {
                    for s3 in self.low[3]..=self.high[3] {
                        visit([s0, s1, s2, s3]);
                    }
                }
            }
        }
    }

    /// Checks the window against an image of `n_features` features and the base
    /// atom's `indices` (below `n_features`): a shape holding exactly the features,
    /// ranges not empty, every shifted cell inside the image along axes that do not
    /// wrap, and shifts shorter than the axis along those that do.
    pub fn check(&self, indices: &[u32], n_features: usize) -> Result<(), String> {
        let cells = self
            .shape
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
        if cells != Some(n_features as u64) {
            return Err(format!(
                "window over shape {:?}, not {n_features} features",
                self.shape
            ));
        }
        for axis in 0..MAX_POOL_AXES {
            let (low, high, length) = (
                self.low[axis] as i64,
                self.high[axis] as i64,
                self.shape[axis] as i64,
            );
            if low > high {
                return Err(format!("axis {axis}: shifts {low}..={high} are empty"));
            }
            if self.wrap[axis] {
                if low <= -length || high >= length {
                    return Err(format!(
                        "axis {axis}: shifts {low}..={high} past the axis length {length}"
                    ));
                }
            } else {
                for &index in indices {
                    let position = self.coordinates(index)[axis];
                    if position + low < 0 || position + high >= length {
                        return Err(format!(
                            "axis {axis}: feature {index} shifted by {low}..={high} \
                             leaves the image"
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Appends, shift after shift in [`Window::for_each_shift`]'s order, the indices of
    /// the base atom `indices` (checked against the window) moved by that shift: the
    /// cells each shifted copy reads, in the base atom's term order.
    pub fn push_shifted(&self, indices: &[u32], out: &mut Vec<u32>) {
        if self.shifts_wrap() {
            self.for_each_shift(|shift| {
                out.extend(
                    indices
                        .iter()
                        .map(|&i| self.shifted(i, shift).expect("a checked window")),
                );
            });
            return;
        }
        // Without wrapping a shift moves every index by one offset.
        let strides = self.strides();
        self.for_each_shift(|shift| {
            let offset: i64 = (0..MAX_POOL_AXES)
                .map(|k| shift[k] as i64 * strides[k])
                .sum();
            out.extend(indices.iter().map(|&i| (i as i64 + offset) as u32));
        });
    }

    /// The features some shift of the base atom `indices` reads, ascending and
    /// distinct.
    pub fn covered(&self, indices: &[u32]) -> Vec<u32> {
        let mut covered = Vec::new();
        self.for_each_shift(|shift| {
            covered.extend(indices.iter().filter_map(|&i| self.shifted(i, shift)));
        });
        covered.sort_unstable();
        covered.dedup();
        covered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_leaving_the_image_is_refused() {
        // A 1x2 patch at the right edge of a 3x4 image cannot shift right.
        let mut window = Window::unshifted(&[3, 4], &[false, false], Reduce::Max);
        window.high[MAX_POOL_AXES - 1] = 1;
        assert!(window.check(&[2, 3], 12).is_err());
        assert!(window.check(&[1, 2], 12).is_ok());
        window.wrap[MAX_POOL_AXES - 1] = true;
        assert!(window.check(&[2, 3], 12).is_ok());
        assert!(window.check(&[2, 3], 13).is_err());
    }
}
