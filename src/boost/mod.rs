//! Gradient boosting over atoms: trees fitted one round after another to the
//! gradients of a loss, each split direction an atom of the same dictionaries the
//! forests draw from (patches, sparse oblique combinations, single features).
//!
//! Each round draws `max_features` atoms afresh, projects the round's samples on them
//! once and puts the projections in quantile bins ([`binning`]); that round's trees,
//! one per output, then grow best first on gradient and hessian histograms of those
//! bins ([`histogram`], [`split`], [`grow`]), the larger child's histogram taken from
//! its parent's. Start at [`Booster::fit`] with a [`BoostParams`].
//!
//! A split's gain, `G_L^2 / (H_L + lambda) + G_R^2 / (H_R + lambda) - G^2 / (H +
//! lambda)`, is the [`GradientHessian`](crate::split::GradientHessian) criterion of
//! [`crate::split`], beside the forests' Gini, entropy and squared error: the
//! histogram scan here and the exact scans of samples there are written once over
//! [`SplitCriterion`](crate::split::SplitCriterion).
//!
//! NaN in X is a missing value: projections touching one fall in a bin of their own,
//! and each split learns the side they go to, stored in the tree as the forests store
//! it, so that the saved layout is unchanged.
//!
//! Each file answers one question: [`params`] (what can be set), [`loss`] (what is
//! minimised), [`binning`] (how projections are bucketed), [`histogram`] (how gradients
//! are summed per bin), [`split`] (how a node is split), [`grow`] (how a tree grows),
//! [`checks`] (what targets and sizes a fit takes), [`fit`] (where a fit starts),
//! [`rounds`] (the rounds), [`model`]
//! (predicting with the trees), [`score`] (what the leaves add to rows, through the
//! shared [`crate::scoring`] engine), [`format`](mod@format) (saving).

mod binning;
mod checks;
mod edges;
mod fit;
mod format;
mod grow;
mod histogram;
mod inspect;
mod loss;
mod model;
mod params;
mod roots;
mod rounds;
mod score;
mod split;
mod target_scale;

pub use format::BOOSTER_FORMAT_VERSION;
pub use loss::{BoostTargets, Loss};
pub use model::Booster;
pub use params::{BoostParams, EarlyStopping, ValidationSize, MAX_BOOSTED_TREES};
