//! What every model type runs on, whatever it computes: threads ([`workers`]),
//! progress and cancellation ([`control`]), the options of a scoring call ([`options`]),
//! rows scored in parallel chunks into output arrays ([`rows`]), and the framing of
//! saved bytes ([`frame`]).

pub(crate) mod control;
pub(crate) mod frame;
pub(crate) mod options;
pub(crate) mod rows;
pub(crate) mod workers;

pub use control::{FitControl, Progress, ProgressCallback};
pub use options::ScoreOptions;
pub use workers::available_cores;
