//! Read-only views of the training and scoring inputs: the element types X may hold,
//! rows of X and the copies fits read them through, and the checks of sample weights.

mod bits;
mod feature;
mod huge_pages;
mod rows;
mod sample_weight;

pub use bits::BitRows;
pub(crate) use feature::non_finite_error;
pub use feature::Feature;
pub use rows::{sums_stay_exact, Rows, RunningSums};
pub(crate) use sample_weight::check_sample_weight;
