//! The frontier of best-first growth, shared by forests' trees (`max_leaf_nodes`) and
//! boosted trees: of the nodes with a split waiting, the one whose split gains most is
//! split next, the earliest grown among equals, whatever order they were found in.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// The grown nodes whose split waits, by their split's gain.
#[derive(Debug, Default)]
pub(crate) struct Frontier {
    open: BinaryHeap<Open>,
}

impl Frontier {
    /// Forgets every waiting node, keeping the buffer for the next tree.
    pub fn clear(&mut self) {
        self.open.clear();
    }

    /// Puts node `id`, whose split gains `gain`, among the waiting nodes.
    pub fn push(&mut self, id: usize, gain: f64) {
        self.open.push(Open { gain, id });
    }

    /// Takes the node to split next, if any waits.
    pub fn pop(&mut self) -> Option<usize> {
        self.open.pop().map(|open| open.id)
    }
}

/// A waiting node, greater where its split gains more (the earlier grown among equals).
#[derive(Debug)]
struct Open {
    gain: f64,
    id: usize,
}

impl Ord for Open {
    fn cmp(&self, other: &Self) -> Ordering {
        self.gain
            .total_cmp(&other.gain)
            .then(other.id.cmp(&self.id))
    }
}

impl PartialOrd for Open {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Open {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Open {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_gain_comes_first_and_the_earliest_among_equals() {
        let mut frontier = Frontier::default();
        for (id, gain) in [(0, 1.0), (1, 3.0), (2, 3.0), (3, 2.0), (4, 3.0)] {
            frontier.push(id, gain);
        }
        let order: Vec<usize> = std::iter::from_fn(|| frontier.pop()).collect();
        assert_eq!(order, [1, 2, 4, 3, 0]);
    }
}
