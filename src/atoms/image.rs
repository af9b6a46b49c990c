//! Where a patch lies in an image: the placement rules every image family shares.

use super::patch::Patches;
use crate::rng::Rng;

/// One cell a patch covers along one axis: its contribution to the flat feature index
/// (`position * stride`) and its offset in the run that was drawn, counted from the
/// run's first cell even where that cell lies outside the image and was dropped.
#[derive(Debug, Clone, Copy)]
pub(super) struct AxisCell {
    pub flat: u32,
    pub offset: u32,
}

/// Places runs along the axes of [`Patches`]' image: contiguous runs padded with zeros
/// at the border, runs wrapping around cyclic axes, or distinct random positions on
/// non-contiguous axes (see [`Patches`]).
#[derive(Debug, Clone)]
pub(super) struct Placer {
    shape: Vec<usize>,
    wrap: Vec<bool>,
    contiguous: Vec<bool>,
    strides: Vec<usize>,
    /// Per non-contiguous axis, a pool of positions for partial shuffles.
    position_pools: Vec<Vec<usize>>,
}

impl Placer {
    pub fn new(patches: &Patches) -> Self {
        let shape = patches.image_shape.clone();
        let n_axes = shape.len();
        let mut strides = vec![1; n_axes];
        for axis in (0..n_axes.saturating_sub(1)).rev() {
            strides[axis] = strides[axis + 1] * shape[axis + 1];
        }
        let position_pools = shape.iter().map(|&d| (0..d).collect()).collect();
        Placer {
            shape,
            wrap: patches.wrap.clone(),
            contiguous: patches.contiguous.clone(),
            strides,
            position_pools,
        }
    }

    pub fn n_axes(&self) -> usize {
        self.shape.len()
    }

    /// Writes the cells a run of `extent` cells placed at random covers along `axis`.
    pub fn place(&mut self, rng: &mut Rng, axis: usize, extent: usize, cells: &mut Vec<AxisCell>) {
        let length = self.shape[axis];
        let stride = self.strides[axis] as u32;
        let cell = |position: usize, offset: usize| AxisCell {
            flat: position as u32 * stride,
            offset: offset as u32,
        };
        cells.clear();
        if !self.contiguous[axis] {
            let pool = &mut self.position_pools[axis];
            rng.choose_into_prefix(pool, extent);
            cells.extend(pool[..extent].iter().enumerate().map(|(i, &p)| cell(p, i)));
        } else if self.wrap[axis] {
            // Stepped round the axis rather than taken modulo its length, which cost a
            // division a cell.
            let mut position = rng.below(length);
            for i in 0..extent {
                cells.push(cell(position, i));
                position += 1;
                if position == length {
                    position = 0;
                }
            }
        } else {
            // Starting as far left as 1 - extent gives the edge cells the same chance
            // of being covered as the middle ones. The run always meets the axis, so no
            // atom comes out empty.
            let start = rng.between(1 - extent as i64, length as i64 - 1);
            let first = start.max(0) as usize;
            let end = ((start + extent as i64) as usize).min(length);
            cells.extend((first..end).map(|p| cell(p, (p as i64 - start) as usize)));
        }
    }
}

/// Every combination of one cell per axis, as its flat feature index and the value
/// `step` folds from `init` over its cells in axis order, into `out` (`next` is
/// scratch).
pub(super) fn cartesian<A: Copy>(
    axes: &[Vec<AxisCell>],
    init: A,
    step: impl Fn(A, usize, AxisCell) -> A,
    out: &mut Vec<(u32, A)>,
    next: &mut Vec<(u32, A)>,
) {
    out.clear();
    out.push((0, init));
    for (axis, cells) in axes.iter().enumerate() {
        next.clear();
        for &(flat, value) in out.iter() {
            for &cell in cells {
                next.push((flat + cell.flat, step(value, axis, cell)));
            }
        }
        std::mem::swap(out, next);
    }
}
