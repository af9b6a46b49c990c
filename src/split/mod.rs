//! Split search: project a node's samples onto each candidate atom, order the values
//! (sort them, or count whole values that take few distinct values), and scan for the
//! threshold with the largest impurity decrease.

mod projection;
mod search;
mod sort;

pub use projection::{key_value, sort_key, NodeProjector};
pub use search::{best_split, Criterion, LocalSamples, SplitCandidate, SplitRule, SplitScratch};
pub use sort::sort_by_value;
