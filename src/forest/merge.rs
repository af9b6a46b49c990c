//! Putting forests together: trees grown apart (on several machines, or more trees
//! later) become one forest.

use super::Forest;
use crate::error::{invalid, MorfError, Result};
use crate::tree::Task;

impl Forest {
    /// One forest holding the trees of `forests`, in the order given. The forests must
    /// have the same number of features and the same task (classes, or outputs); their trees may come from any
    /// parameters and data, and the merged forest averages them all.
    ///
    /// Tree `i` of a fit depends only on (`random_state`, `i`), so forests grown with
    /// [`Forest::fit_with`] on consecutive ranges of trees (`0..a`, `a..b`, ...) of one
    /// [`ForestParams`](crate::ForestParams) and the same data merge into the forest
    /// grown at once, bit for bit: how distributed fits split their work.
    ///
    /// ```
    /// use ndarray::array;
    /// use morf_rs::{FitControl, Forest, ForestParams, Targets};
    ///
    /// let x = array![[0.0f32, 1.0], [1.0, 0.0], [0.0, 2.0], [2.0, 0.0]];
    /// let targets = Targets::Classes { labels: &[0, 1, 0, 1], n_classes: 2 };
    /// let params = ForestParams { n_estimators: 10, ..ForestParams::default() };
    /// let grow = |trees| Forest::fit_with(&params, x.view(), targets, None, trees, &FitControl::new());
    /// let merged = Forest::merge([grow(0..4)?, grow(4..10)?])?;
    /// assert_eq!(merged, grow(0..10)?);
    /// # Ok::<(), morf_rs::MorfError>(())
    /// ```
    pub fn merge(forests: impl IntoIterator<Item = Forest>) -> Result<Forest> {
        let mut forests = forests.into_iter();
        let mut merged = forests
            .next()
            .ok_or_else(|| invalid("forests", "nothing to merge: give at least one forest"))?;
        for forest in forests {
            // Every field named, so that a field added to Forest must be matched here.
            let Forest {
                n_features,
                task,
                trees,
                scoring: _,
            } = forest;
            if n_features != merged.n_features {
                return Err(MorfError::ShapeMismatch {
                    what: "number of features of a forest to merge",
                    expected: merged.n_features,
                    got: n_features,
                });
            }
            let what = match (task, merged.task) {
                (Task::Classification { .. }, Task::Classification { .. }) => {
                    "number of classes of a forest to merge"
                }
                (Task::Regression { .. }, Task::Regression { .. }) => {
                    "number of outputs of a forest to merge"
                }
                _ => {
                    return Err(invalid(
                        "forests",
                        "a classification and a regression forest cannot be merged",
                    ))
                }
            };
            if task.width() != merged.task.width() {
                return Err(MorfError::ShapeMismatch {
                    what,
                    expected: merged.task.width(),
                    got: task.width(),
                });
            }
            merged.trees.extend(trees);
        }
        // Built for the first forest's trees alone, the layout would miss the others.
        merged.scoring = Default::default();
        Ok(merged)
    }
}
