//! The forest as scoring reads it: its trees laid out by the scoring engine, each leaf
//! that votes numbered (its slot), and each class distribution kept in as few bytes as
//! scoring reads: the class of a pure leaf (most leaves of grown-out trees), or the
//! classes of non-zero probability of the others.

use super::NO_VOTE;
use crate::scoring::ScoringTrees;
use crate::tree::{Leaves, Node, Tree};

/// A forest's trees laid out for scoring, and their leaves by slot.
#[derive(Debug, Clone)]
pub(crate) struct ForestScoring {
    /// The trees, each leaf that votes given the next slot, the others [`NO_VOTE`].
    pub(crate) layout: ScoringTrees,
    /// Per slot, the offset of the leaf's values in its tree's [`Leaves`].
    offsets: Vec<u32>,
    /// Per slot of a classification forest: the class of a pure leaf (all of its
    /// probability, 1, on that class: most leaves of grown-out trees), or
    /// [`SEVERAL`] and the leaf's number among the others.
    classes: Vec<u32>,
    /// Per leaf of the others, where its (class, probability) pairs start in
    /// `several`; one more at the end.
    several_starts: Vec<usize>,
    /// The (class, probability) pairs of non-zero probability of the other leaves.
    several: Vec<(u32, f32)>,
}

/// [`ForestScoring`]'s `classes` bit of a leaf that is not pure.
const SEVERAL: u32 = 1 << 31;

impl ForestScoring {
    /// The scoring form of `trees` of `n_features` features.
    pub(crate) fn new(trees: &[Tree], n_features: usize) -> ForestScoring {
        let mut offsets = Vec::new();
        let mut classes = Vec::new();
        let mut several_starts = vec![0];
        let mut several = Vec::new();
        let layout = ScoringTrees::new(trees, n_features, |t, id| {
            let Node::Leaf {
                value: Some(offset),
            } = trees[t].nodes()[id]
            else {
                return NO_VOTE;
            };
            if let Leaves::Classes {
                n_classes,
                distributions,
            } = trees[t].leaves()
            {
                let distribution = &distributions[offset as usize..][..*n_classes as usize];
                let non_zero = || {
                    let pairs = (0..).zip(distribution.iter().copied());
                    pairs.filter(|&(_, p)| p != 0.0)
                };
                let mut pairs = non_zero();
                match (pairs.next(), pairs.next()) {
                    (Some((class, p)), None) if p == 1.0 && class < SEVERAL => classes.push(class),
                    _ => {
                        classes.push(SEVERAL | (several_starts.len() - 1) as u32);
                        several.extend(non_zero());
                        several_starts.push(several.len());
                    }
                }
            }
            offsets.push(offset);
            (offsets.len() - 1) as u32
        });
        ForestScoring {
            layout,
            offsets,
            classes,
            several_starts,
            several,
        }
    }

    /// The offset of the values of the leaf of slot `slot` in its tree's [`Leaves`].
    #[inline]
    pub(crate) fn offset(&self, slot: u32) -> usize {
        self.offsets[slot as usize] as usize
    }

    /// Adds the class distribution of the leaf of slot `slot` to `sums` (one per
    /// class), for a classification forest. Only the classes of non-zero probability
    /// are added: sums of probabilities start at +0 and so never become -0, which
    /// adding a zero of either sign leaves as they are.
    #[inline(always)]
    pub(crate) fn add_classes(&self, slot: u32, sums: &mut [f64]) {
        let class = self.classes[slot as usize];
        if class & SEVERAL == 0 {
            sums[class as usize] += 1.0;
        } else {
            let k = (class & !SEVERAL) as usize;
            let pairs = self.several_starts[k]..self.several_starts[k + 1];
            for &(class, p) in &self.several[pairs] {
                sums[class as usize] += f64::from(p);
            }
        }
    }
}
