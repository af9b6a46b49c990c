//! The features one isolation tree sees ([`IsolationParams::max_features`]): a random
//! subset, as scikit-learn's `IsolationForest` gives each tree, and the atom sampler
//! that draws only atoms over it.
//!
//! Families whose features are interchangeable (single features, sparse oblique
//! combinations) draw their atoms over the subset as if it were the whole of X, so a
//! tree's atoms are those of a forest fitted on `X[:, subset]`. Families with a
//! structure (patches of an image, graph neighbourhoods) draw over the whole image and
//! keep the cells of the atom the tree sees: a patch partly outside the subset sums
//! its seen cells, and one wholly outside is drawn again.
//!
//! [`IsolationParams::max_features`]: super::IsolationParams::max_features

use crate::atoms::{AtomKind, AtomSampler, AtomSet};
use crate::error::{invalid, Result};
use crate::rng::Rng;

/// Draws of a structured atom before a tree takes the node as one whose atoms miss
/// its features (which then, like a node whose atoms project alike, tries again up to
/// [`super::grow::ATOM_DRAWS`] times): enough that a tree seeing one pixel in ten
/// misses with a patch of one pixel with odds under 1 in 10^5.
const MASKED_DRAWS: usize = 128;

/// Checks that `atoms` can be restricted to `max_features` of `n_features` features.
pub(super) fn validate_max_features(
    atoms: &AtomKind,
    max_features: Option<usize>,
    n_features: usize,
) -> Result<()> {
    let Some(count) = max_features else {
        return Ok(());
    };
    if !(1..=n_features).contains(&count) {
        return Err(invalid(
            "max_features",
            format!("must be in [1, n_features = {n_features}], got {count}"),
        ));
    }
    if count < n_features && atoms.pools() {
        return Err(invalid(
            "max_features",
            "a pooled atom reads its base atom shifted across the image, so it cannot \
             be restricted to a subset of the features; use max_features=1.0 or a \
             dictionary without pooled families",
        ));
    }
    Ok(())
}

/// The atom sampler of a tree that sees `max_features` of the `n_features` features,
/// drawing the subset from `rng` when it is not all of them.
pub(super) fn tree_sampler<'a>(
    atoms: &'a AtomKind,
    n_features: usize,
    max_features: Option<usize>,
    rng: &mut Rng,
) -> Box<dyn AtomSampler + 'a> {
    let count = max_features.unwrap_or(n_features);
    if count >= n_features {
        return atoms.sampler(n_features);
    }
    let mut pool: Vec<u32> = (0..n_features as u32).collect();
    rng.choose_into_prefix(&mut pool, count);
    pool.truncate(count);
    pool.sort_unstable();
    match atoms {
        AtomKind::AxisAligned | AtomKind::SparseOblique { .. } => Box::new(OnSubset {
            inner: atoms.sampler(count),
            features: pool,
            drawn: AtomSet::default(),
            pairs: Vec::new(),
        }),
        _ => {
            let mut seen = vec![false; n_features];
            pool.iter().for_each(|&f| seen[f as usize] = true);
            Box::new(Masked {
                inner: atoms.sampler(n_features),
                seen,
                drawn: AtomSet::default(),
                pairs: Vec::new(),
            })
        }
    }
}

/// Atoms drawn over feature positions `0..features.len()`, read as `features`.
struct OnSubset<'a> {
    inner: Box<dyn AtomSampler + 'a>,
    /// The features the tree sees, ascending.
    features: Vec<u32>,
    drawn: AtomSet,
    pairs: Vec<(u32, f32)>,
}

impl AtomSampler for OnSubset<'_> {
    fn append_atoms(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet) {
        self.inner.sample_node(rng, n_atoms, &mut self.drawn);
        for i in 0..self.drawn.len() {
            let atom = self.drawn.get(i);
            self.pairs.clear();
            self.pairs.extend(
                atom.indices
                    .iter()
                    .zip(atom.weights)
                    .map(|(&position, &weight)| (self.features[position as usize], weight)),
            );
            out.push_pairs(&mut self.pairs);
        }
    }
}

/// Atoms drawn over the whole image, keeping only the cells the tree sees.
struct Masked<'a> {
    inner: Box<dyn AtomSampler + 'a>,
    /// Per feature, whether the tree sees it.
    seen: Vec<bool>,
    drawn: AtomSet,
    pairs: Vec<(u32, f32)>,
}

impl AtomSampler for Masked<'_> {
    /// Appends up to `n_atoms` atoms: fewer when [`MASKED_DRAWS`] draws in a row
    /// touch no feature the tree sees.
    fn append_atoms(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet) {
        for _ in 0..n_atoms {
            for _ in 0..MASKED_DRAWS {
                self.inner.sample_node(rng, 1, &mut self.drawn);
                let atom = self.drawn.get(0);
                self.pairs.clear();
                self.pairs.extend(
                    atom.indices
                        .iter()
                        .zip(atom.weights)
                        .filter(|(&f, _)| self.seen[f as usize])
                        .map(|(&f, &w)| (f, w)),
                );
                if !self.pairs.is_empty() {
                    out.push_pairs(&mut self.pairs);
                    break;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::atoms::Patches;

    fn atoms_of(sampler: &mut dyn AtomSampler, rng: &mut Rng, n: usize) -> Vec<Vec<u32>> {
        let mut set = AtomSet::default();
        sampler.sample_node(rng, n, &mut set);
        (0..set.len())
            .map(|i| set.get(i).indices.to_vec())
            .collect()
    }

    #[test]
    fn interchangeable_features_draw_over_the_subset_only() {
        let mut rng = Rng::new(1, 0);
        let kind = AtomKind::SparseOblique {
            feature_combinations: 2.0,
        };
        let mut sampler = tree_sampler(&kind, 100, Some(5), &mut rng);
        let atoms = atoms_of(&mut *sampler, &mut rng, 2000);
        let mut used: Vec<u32> = atoms.concat();
        used.sort_unstable();
        used.dedup();
        assert_eq!(used.len(), 5, "{used:?}");
        assert!(atoms.iter().all(|a| !a.is_empty()));
    }

    #[test]
    fn patches_keep_only_the_cells_the_tree_sees() {
        let mut rng = Rng::new(2, 0);
        let patches = Patches::new(vec![10, 10], vec![1, 1], vec![3, 3]);
        let kind = AtomKind::Patches(patches);
        let mut sampler = tree_sampler(&kind, 100, Some(10), &mut rng);
        let atoms = atoms_of(&mut *sampler, &mut rng, 500);
        assert_eq!(atoms.len(), 500);
        let mut used: Vec<u32> = atoms.concat();
        used.sort_unstable();
        used.dedup();
        assert_eq!(used.len(), 10, "{used:?}");
    }

    #[test]
    fn all_features_leave_the_family_as_it_is() {
        let kind = AtomKind::SparseOblique {
            feature_combinations: 1.5,
        };
        let (mut a, mut b) = (Rng::new(3, 0), Rng::new(3, 0));
        let mut restricted = tree_sampler(&kind, 30, Some(30), &mut a);
        let mut plain = kind.sampler(30);
        assert_eq!(
            atoms_of(&mut *restricted, &mut a, 50),
            atoms_of(&mut *plain, &mut b, 50)
        );
    }

    #[test]
    fn max_features_is_a_count_of_the_features() {
        assert!(validate_max_features(&AtomKind::AxisAligned, Some(0), 4).is_err());
        assert!(validate_max_features(&AtomKind::AxisAligned, Some(5), 4).is_err());
        assert!(validate_max_features(&AtomKind::AxisAligned, Some(4), 4).is_ok());
    }
}
