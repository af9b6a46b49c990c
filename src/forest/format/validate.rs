//! Checks of a loaded forest: its counts within bounds, then each tree
//! ([`Tree::validate`](crate::Tree)).

use crate::error::Result;
use crate::forest::{Forest, MAX_CLASSES, MAX_FEATURES};
use crate::runtime::frame::damaged;

impl Forest {
    /// Checks that the forest is one training could have produced: at least one tree,
    /// feature and class counts within what training accepts, and every tree valid for
    /// them. Counts that no bytes back (features, classes) are bounded before any
    /// scoring allocates from them.
    pub(crate) fn validate(&self) -> Result<()> {
        if self.trees.is_empty() {
            return Err(damaged("a forest without trees"));
        }
        if !(1..=MAX_FEATURES).contains(&self.n_features) {
            return Err(damaged(format!(
                "{} features, outside 1..={MAX_FEATURES}",
                self.n_features
            )));
        }
        if !(1..=MAX_CLASSES).contains(&self.task.width()) {
            return Err(damaged(format!(
                "{:?}: classes or outputs outside 1..={MAX_CLASSES}",
                self.task
            )));
        }
        for (t, tree) in self.trees.iter().enumerate() {
            tree.validate(self.n_features, self.task)
                .map_err(|why| damaged(format!("tree {t}: {why}")))?;
        }
        Ok(())
    }
}
