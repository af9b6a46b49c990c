//! The sorted scan of one atom's projections at a node, left to right, and what every
//! scan shares: the node's running sides, the limits, and the best split kept in one
//! order, so that the counted scans ([`super::counted_scan`], [`super::whole_counts`])
//! choose the same threshold. Written once over [`SplitCriterion`].

use super::criterion::{NodeTargets, SplitCriterion};
use super::search::SplitCandidate;
use super::sort::{key_value, sort_key};

/// The sort key of a projected value for the sample at `position` in the node.
#[inline(always)]
pub fn position_key(value: f32, position: u32) -> u64 {
    (sort_key(value) as u64) << 32 | position as u64
}

/// The value key of a missing projection (NaN, of either sign), above every other
/// value's key: sorted, missing projections come last.
pub(super) const MISSING_KEY: u32 = u32::MAX;

/// [`position_key`], with [`MISSING_KEY`] for a missing projection.
#[inline(always)]
pub(super) fn position_key_or_missing(value: f32, position: u32) -> u64 {
    let key = if value.is_nan() {
        MISSING_KEY
    } else {
        sort_key(value)
    };
    (key as u64) << 32 | position as u64
}

/// Moves `amount` of entry `entry` from the right side's sums to the left's, updating
/// each side's sum of terms (unless the terms depend on the weight: then
/// `NodeScan::children_cost_of` computes them).
#[inline(always)]
fn move_entry<C: SplitCriterion>(
    criterion: &C,
    left: &mut [f64],
    right: &mut [f64],
    left_terms: &mut f64,
    right_terms: &mut f64,
    entry: usize,
    amount: f64,
) {
    let old_left = left[entry];
    let old_right = right[entry];
    left[entry] = old_left + amount;
    right[entry] = old_right - amount;
    if !C::TERMS_DEPEND_ON_WEIGHT {
        *left_terms += criterion.term(old_left + amount, 0.0) - criterion.term(old_left, 0.0);
        *right_terms += criterion.term(old_right - amount, 0.0) - criterion.term(old_right, 0.0);
    }
}

/// Columns of the counting table per value: the entries, and the weight unless the
/// entries add up to it.
pub(super) fn table_width<C: SplitCriterion>(criterion: &C) -> usize {
    criterion.n_entries() + usize::from(!C::ENTRIES_SUM_TO_WEIGHT)
}

/// What the scans of one node share: its targets in node order and their totals.
pub(super) struct NodeScan<'a, C> {
    pub(super) criterion: &'a C,
    pub(super) node: &'a NodeTargets,
    /// The node's sum of terms.
    pub(super) terms: f64,
    pub(super) cost: f64,
    pub(super) min_leaf: usize,
    pub(super) min_weight: f64,
}

/// The two sides of a threshold while a scan moves samples from right to left: the
/// sums of their entries, their weights and their sums of terms.
struct Sides<'s> {
    left: &'s mut [f64],
    right: &'s mut [f64],
    left_weight: f64,
    right_weight: f64,
    left_terms: f64,
    right_terms: f64,
    /// Samples moved to the left so far.
    n_left: usize,
}

impl<'a, C: SplitCriterion> NodeScan<'a, C> {
    /// The scans of `node` under `criterion`, with the node's own sum of terms and cost
    /// (what every split's children are compared with) worked out once.
    pub(super) fn new(
        criterion: &'a C,
        node: &'a NodeTargets,
        min_leaf: usize,
        min_weight: f64,
    ) -> Self {
        let terms: f64 = node
            .sums
            .iter()
            .map(|&s| criterion.term(s, node.weight))
            .sum();
        NodeScan {
            criterion,
            node,
            terms,
            cost: criterion.cost(node.weight, terms),
            min_leaf,
            min_weight,
        }
    }
}

impl<C: SplitCriterion> NodeScan<'_, C> {
    /// Whether a side of this weight may be a child.
    #[inline(always)]
    pub(super) fn heavy_enough(&self, weight: f64) -> bool {
        (weight > 0.0) & (weight >= self.min_weight)
    }

    /// Keeps the split at `threshold` (missing values going left when `missing_left`
    /// says so; `None` when the node had none) when its children's cost beats
    /// `best`'s; strictly, so that earlier candidates win ties.
    #[inline(always)]
    pub(super) fn offer(
        &self,
        children_cost: f64,
        atom: usize,
        threshold: impl FnOnce() -> f32,
        missing_left: Option<bool>,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        // The threshold is worked out only for a split that wins (few of them).
        if best.is_none_or(|(cost, _)| children_cost < cost) {
            *best = Some((
                children_cost,
                SplitCandidate {
                    atom,
                    threshold: threshold(),
                    impurity_decrease: self.cost - children_cost,
                    missing_left,
                },
            ));
        }
    }

    /// Every sample on the right.
    fn start<'s>(&self, left: &'s mut Vec<f64>, right: &'s mut Vec<f64>) -> Sides<'s> {
        left.clear();
        left.resize(self.node.sums.len(), 0.0);
        right.clear();
        right.extend_from_slice(&self.node.sums);
        Sides {
            left,
            right,
            left_weight: 0.0,
            right_weight: self.node.weight,
            left_terms: 0.0,
            right_terms: self.terms,
            n_left: 0,
        }
    }

    /// Moves the node sample at `position` from the right side to the left, updating
    /// each side's sum of terms in the entries the sample has (unless the terms
    /// depend on the weight: [`Self::children_cost_of`] then computes them).
    #[inline(always)]
    fn move_left(&self, sides: &mut Sides<'_>, position: usize) {
        let criterion = self.criterion;
        let (left, right) = (&mut *sides.left, &mut *sides.right);
        let (left_terms, right_terms) = (&mut sides.left_terms, &mut sides.right_terms);
        criterion.entries(self.node, position, |entry, amount| {
            move_entry::<C>(
                criterion,
                left,
                right,
                left_terms,
                right_terms,
                entry,
                amount,
            );
        });
        let weight = self.node.weights[position];
        sides.left_weight += weight;
        sides.right_weight -= weight;
        sides.n_left += 1;
    }

    /// [`Self::move_left`] for [`SplitCriterion::CLASS_ENTRIES`]: the sample's class
    /// and weight, read by the caller from arrays it holds (a read through the node
    /// would fetch the arrays' addresses again after every write to the sides).
    #[inline(always)]
    fn move_class_left(&self, sides: &mut Sides<'_>, class: usize, weight: f64) {
        move_entry::<C>(
            self.criterion,
            sides.left,
            sides.right,
            &mut sides.left_terms,
            &mut sides.right_terms,
            class,
            weight,
        );
        sides.left_weight += weight;
        sides.right_weight -= weight;
        sides.n_left += 1;
    }

    /// The children's cost of the split the sides stand for.
    #[inline(always)]
    fn children_cost_of(&self, sides: &Sides<'_>) -> f64 {
        let criterion = self.criterion;
        let (left_terms, right_terms) = if C::TERMS_DEPEND_ON_WEIGHT {
            let terms = |sums: &[f64], weight| -> f64 {
                sums.iter().map(|&s| criterion.term(s, weight)).sum()
            };
            (
                terms(sides.left, sides.left_weight),
                terms(sides.right, sides.right_weight),
            )
        } else {
            (sides.left_terms, sides.right_terms)
        };
        criterion.cost(sides.left_weight, left_terms)
            + criterion.cost(sides.right_weight, right_terms)
    }

    /// Whether both sides may be children by their weights and the criterion's rule
    /// on their sums (sample counts apart). Joined by `&`, not `&&`: the tests are
    /// cheap, and none becomes a branch of its own.
    #[inline(always)]
    fn sides_allowed(&self, sides: &Sides<'_>) -> bool {
        self.heavy_enough(sides.left_weight)
            & self.heavy_enough(sides.right_weight)
            & self
                .criterion
                .allows_side(self.node, sides.left.iter().copied())
            & self
                .criterion
                .allows_side(self.node, sides.right.iter().copied())
    }

    /// The children's cost of the split the sides stand for, when both may be
    /// children.
    #[inline(always)]
    fn children_cost(&self, sides: &Sides<'_>, n: usize) -> Option<f64> {
        let allowed = sides.n_left >= self.min_leaf
            && n - sides.n_left >= self.min_leaf
            && self.sides_allowed(sides);
        allowed.then(|| self.children_cost_of(sides))
    }

    /// Scans keys of [`position_key`] (or, when `MISSING`, of
    /// [`position_key_or_missing`]), sorted, left to right, moving one sample at a
    /// time to the left side.
    ///
    /// When some projections are missing, each threshold is tried with the missing
    /// samples on the right, then on the left, and last the split of the present
    /// samples from the missing ones: scikit-learn's search, in its order. As there,
    /// an atom whose present projections are all equal is not split on.
    pub(super) fn scan_sorted<const MISSING: bool>(
        &self,
        keys: &[u64],
        atom: usize,
        left: &mut Vec<f64>,
        right: &mut Vec<f64>,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        let n = keys.len();
        let n_present = if MISSING {
            keys.partition_point(|&key| key >> 32 != MISSING_KEY as u64)
        } else {
            n
        };
        if n_present == 0 || keys[0] >> 32 == keys[n_present - 1] >> 32 {
            return; // constant along this atom, or missing everywhere
        }
        if !MISSING || n_present == n {
            let sides = &mut self.start(left, right);
            return self.sweep(keys, n_present, atom, None, sides, best);
        }
        let sides = &mut self.start(left, right);
        self.sweep(keys, n_present, atom, Some(false), sides, best);
        let sides = &mut self.start(left, right);
        for &key in &keys[n_present..] {
            self.move_left(sides, key as u32 as usize);
        }
        // Missing apart from present is the same partition with its sides swapped.
        let apart = self.children_cost(sides, n);
        self.sweep(keys, n_present, atom, Some(true), sides, best);
        if let Some(children_cost) = apart {
            // Every present value goes left, as under scikit-learn's infinite
            // threshold; thresholds stay finite.
            self.offer(children_cost, atom, || f32::MAX, Some(false), best);
        }
    }

    /// Moves the present samples (`keys[..n_present]`, in order) to the left one at a
    /// time and offers each threshold between distinct values, missing values going
    /// left as `missing_left` says (they are on the left already when it says so).
    #[inline(always)]
    fn sweep(
        &self,
        keys: &[u64],
        n_present: usize,
        atom: usize,
        missing_left: Option<bool>,
        sides: &mut Sides<'_>,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        if C::COST_AT_EVERY_POSITION {
            return self.sweep_every_position(keys, n_present, atom, missing_left, sides, best);
        }
        let (classes, weights) = (&self.node.classes[..], &self.node.weights[..]);
        for i in 0..self.sweep_end(keys.len(), n_present, sides) {
            self.move_position_left(sides, classes, weights, keys[i] as u32 as usize);
            if sides.n_left < self.min_leaf || keys[i] >> 32 == keys[i + 1] >> 32 {
                continue;
            }
            if !self.sides_allowed(sides) {
                continue;
            }
            let children_cost = self.children_cost_of(sides);
            let threshold = || threshold_after(keys, i);
            self.offer(children_cost, atom, threshold, missing_left, best);
        }
    }

    /// [`Self::sweep`] for [`SplitCriterion::COST_AT_EVERY_POSITION`]: the cost at
    /// every position, whether a split may fall there worked out without branches,
    /// and the threshold of the best only once. The same split as `sweep`: the same
    /// costs, and the first of equal costs.
    #[inline(always)]
    fn sweep_every_position(
        &self,
        keys: &[u64],
        n_present: usize,
        atom: usize,
        missing_left: Option<bool>,
        sides: &mut Sides<'_>,
        best: &mut Option<(f64, SplitCandidate)>,
    ) {
        let (classes, weights) = (&self.node.classes[..], &self.node.weights[..]);
        let mut have_best = best.is_some();
        let mut best_cost = best.as_ref().map_or(f64::INFINITY, |&(cost, _)| cost);
        let mut best_position = None;
        for i in 0..self.sweep_end(keys.len(), n_present, sides) {
            self.move_position_left(sides, classes, weights, keys[i] as u32 as usize);
            let children_cost = self.children_cost_of(sides);
            let allowed = (sides.n_left >= self.min_leaf)
                & (keys[i] >> 32 != keys[i + 1] >> 32)
                & self.sides_allowed(sides);
            // Rarely true, so a well predicted branch.
            if allowed & (!have_best | (children_cost < best_cost)) {
                have_best = true;
                best_cost = children_cost;
                best_position = Some(i);
            }
        }
        if let Some(i) = best_position {
            *best = Some((
                best_cost,
                SplitCandidate {
                    atom,
                    threshold: threshold_after(keys, i),
                    impurity_decrease: self.cost - best_cost,
                    missing_left,
                },
            ));
        }
    }

    /// The moves a sweep of `n` keys, `n_present` of them present, makes: the right
    /// side keeps at least `min_leaf` samples up to the last.
    #[inline(always)]
    fn sweep_end(&self, n: usize, n_present: usize, sides: &Sides<'_>) -> usize {
        (n_present - 1).min(n.saturating_sub(self.min_leaf).saturating_sub(sides.n_left))
    }

    /// Moves the node sample at `position` to the left, its class and weight read from
    /// `classes` and `weights` (the node's, held by the caller) where entries are
    /// classes.
    #[inline(always)]
    fn move_position_left(
        &self,
        sides: &mut Sides<'_>,
        classes: &[u32],
        weights: &[f64],
        position: usize,
    ) {
        if C::CLASS_ENTRIES {
            self.move_class_left(sides, classes[position] as usize, weights[position]);
        } else {
            self.move_left(sides, position);
        }
    }
}

/// The threshold between sorted keys `i` and `i + 1`.
#[inline(always)]
fn threshold_after(keys: &[u64], i: usize) -> f32 {
    midpoint(
        key_value((keys[i] >> 32) as u32),
        key_value((keys[i + 1] >> 32) as u32),
    )
}

/// A threshold strictly between `below < above` where possible: the midpoint can round
/// onto `above` (adjacent floats), and then `below` itself still separates them. It is
/// finite wherever a finite value separates them: an infinite projection (a sum that
/// overflows float32) would give a threshold that no saved model may hold.
#[inline]
pub(crate) fn midpoint(below: f32, above: f32) -> f32 {
    let mid = below * 0.5 + above * 0.5;
    if mid >= above || mid < below {
        below
    } else if mid.is_finite() {
        mid
    } else {
        // Only `below` is -inf here: the lowest finite value, if it stays below `above`.
        let lowest = below.max(f32::MIN);
        if lowest < above {
            lowest
        } else {
            below
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn midpoint_never_rounds_onto_the_upper_value() {
        let below = 1.0f32;
        let above = f32::from_bits(below.to_bits() + 1);
        assert_eq!(midpoint(below, above), below);
        assert_eq!(midpoint(1.0, 2.0), 1.5);
        assert_eq!(midpoint(-3.0, -1.0), -2.0);
    }

    #[test]
    fn midpoint_is_finite_beside_infinite_values_where_it_can_be() {
        let inf = f32::INFINITY;
        assert_eq!(midpoint(-inf, 5.0), f32::MIN);
        assert_eq!(midpoint(-inf, inf), f32::MIN);
        assert_eq!(midpoint(3.0, inf), 3.0);
        // Nothing finite lies in [-inf, f32::MIN).
        assert_eq!(midpoint(-inf, f32::MIN), -inf);
    }
}
