//! Behaviour of the engine through its public API, one module per subject, in one
//! test binary so that the library's generic code is built for the tests once.

mod common;

mod atoms;
mod bad_input;
mod boost_inspect;
mod boost_warm_start;
mod boosting;
mod contributions;
mod control;
mod corrupt_bytes;
mod forest;
mod isolation;
mod limits;
mod merge;
mod missing_values;
mod oob;
mod poisson;
mod pooled;
mod regression;
mod saved_format;
mod scoring;
mod stats;
mod tree_growth;
mod unsupervised;
