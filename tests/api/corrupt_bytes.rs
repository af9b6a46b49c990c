//! Saved bytes that were damaged or crafted either fail to load or load as a forest
//! that scores safely: never an abort, a panic, NaN or probabilities outside [0, 1].

use morf_rs::rng::Rng;
use morf_rs::{
    AtomKind, Forest, ForestParams, HonestPrior, Inspect, MaxFeatures, Patches, ScoreOptions,
    MAX_CLASSES, MAX_FEATURES,
};
use ndarray::Array2;
use serde::Serialize;

/// 6-feature rows whose class is which half holds the larger values.
fn halves(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let y: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
    let x = Array2::from_shape_fn((n, 6), |(i, j)| {
        rng.unit() as f32 + if j / 2 == y[i] as usize { 1.0 } else { 0.0 }
    });
    (x, y)
}

/// Patches on a 2x3 image whose second axis wraps, pooled over windows of shifts:
/// damaged windows must be caught as damaged atoms are.
fn pooled_patches() -> AtomKind {
    let image = Patches::new(vec![2, 3], vec![1, 1], vec![2, 2]).with_wrap(vec![false, true]);
    AtomKind::Pooled(morf_rs::atoms::Pooled {
        family: Box::new(AtomKind::Patches(image)),
        shift_min: vec![1, 1],
        shift_max: vec![2, 3],
        reduce: morf_rs::atoms::Reductions::Both,
    })
}

/// Small forests of each atom kind, one of them honest with leaves that cast no vote.
fn small_forests() -> Vec<Forest> {
    let (x, y) = halves(40, 1);
    let base = ForestParams {
        n_estimators: 2,
        max_depth: Some(3),
        random_state: 5,
        ..ForestParams::default()
    };
    [
        base.clone(),
        ForestParams {
            atoms: AtomKind::Patches(Patches::new(vec![2, 3], vec![1, 1], vec![2, 2])),
            honest_fraction: 0.5,
            honest_prior: HonestPrior::Ignore,
            ..base.clone()
        },
        ForestParams {
            atoms: AtomKind::SparseOblique {
                feature_combinations: 2.0,
            },
            max_features: MaxFeatures::Count(4),
            ..base.clone()
        },
        ForestParams {
            atoms: pooled_patches(),
            ..base
        },
    ]
    .iter()
    .map(|params| Forest::fit(params, x.view(), &y, 3, None).unwrap())
    .collect()
}

/// Scores `forest` every way there is and checks that probabilities are distributions.
fn scores_safely(forest: &Forest, x: &Array2<f32>) {
    forest.tree_stats();
    if forest.n_features() != x.ncols() {
        // A flip in the feature count: X no longer fits, and says so.
        assert!(forest
            .predict_proba(x.view(), &ScoreOptions::new())
            .is_err());
        return;
    }
    let proba = forest
        .predict_proba(x.view(), &ScoreOptions::new())
        .unwrap();
    for row in proba.rows() {
        assert!(row.iter().all(|&p| (0.0..=1.0).contains(&p)), "{row}");
        assert!((row.sum() - 1.0).abs() < 1e-9, "{row}");
    }
    forest.apply(x.view(), &ScoreOptions::new()).unwrap();
    for importances in [
        forest.split_count_importances().unwrap(),
        forest.impurity_importances().unwrap(),
    ] {
        assert!(importances.iter().all(|v| v.is_finite() && *v >= 0.0));
    }
}

fn flip(bytes: &[u8], bit: usize) -> Vec<u8> {
    let mut flipped = bytes.to_vec();
    flipped[bit / 8] ^= 1 << (bit % 8);
    flipped
}

#[test]
fn every_single_bit_flip_is_rejected_or_changes_no_prediction() {
    let (x, _) = halves(60, 2);
    for forest in small_forests() {
        let bytes = forest.to_bytes();
        let expected = forest
            .predict_proba(x.view(), &ScoreOptions::new())
            .unwrap();
        let mut loaded = 0;
        for bit in 0..8 * bytes.len() {
            if let Ok(damaged) = Forest::from_bytes(&flip(&bytes, bit)) {
                loaded += 1;
                assert_eq!(
                    damaged
                        .predict_proba(x.view(), &ScoreOptions::new())
                        .unwrap(),
                    expected,
                    "bit {bit}"
                );
            }
        }
        assert_eq!(loaded, 0, "the checksum catches every flip");
        for cut in 0..bytes.len() {
            assert!(Forest::from_bytes(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(Forest::from_bytes(&longer).is_err());
    }
}

/// `bytes` with its checksum made to match again, as a deliberate forgery would.
fn reseal(bytes: &mut [u8]) {
    let end = bytes.len() - 4;
    let checksum = crc32fast::hash(&bytes[..end]);
    bytes[end..].copy_from_slice(&checksum.to_le_bytes());
}

#[test]
fn with_a_forged_checksum_every_flip_is_rejected_or_scores_safely() {
    let (x, _) = halves(60, 3);
    for forest in small_forests() {
        let bytes = forest.to_bytes();
        let (mut rejected, mut changed) = (0, 0);
        // Past the header: the body and the checksum itself.
        for bit in 48..8 * bytes.len() {
            let mut forged = flip(&bytes, bit);
            reseal(&mut forged);
            match Forest::from_bytes(&forged) {
                Err(_) => rejected += 1,
                Ok(damaged) => {
                    scores_safely(&damaged, &x);
                    changed += usize::from(damaged != forest);
                }
            }
        }
        // Validation rejects damage to the structure; what it lets through (a
        // threshold moved, a weight's sign) is still a forest, scored safely above.
        assert!(
            rejected > 0 && changed > 0,
            "{rejected} rejected, {changed} loaded"
        );
    }
}

/// The layout of format version 2, to craft forests the checksum does not guard.
#[derive(Serialize, Clone)]
struct ForestV2 {
    n_features: usize,
    n_classes: usize,
    trees: Vec<TreeV2>,
}

#[derive(Serialize, Clone)]
struct TreeV2 {
    nodes: Vec<NodeV2>,
    impurity_decreases: Vec<f32>,
    atom_indices: Vec<u32>,
    atom_weights: Vec<f32>,
    leaf_values: Vec<f32>,
    n_classes: u32,
}

#[derive(Serialize, Clone)]
#[allow(dead_code)] // every variant keeps its place in the serde layout
enum NodeV2 {
    Split {
        right: u32,
        threshold: f32,
        atom_start: u32,
        atom_len: u32,
    },
    Leaf {
        posterior: Option<u32>,
    },
    SplitOnFeature {
        right: u32,
        threshold: f32,
        feature: u32,
        weight: f32,
    },
}

impl ForestV2 {
    /// One stump on feature 0 with two two-class leaves.
    fn stump() -> Self {
        ForestV2 {
            n_features: 3,
            n_classes: 2,
            trees: vec![TreeV2 {
                nodes: vec![
                    NodeV2::SplitOnFeature {
                        right: 2,
                        threshold: 0.5,
                        feature: 0,
                        weight: 1.0,
                    },
                    NodeV2::Leaf { posterior: Some(0) },
                    NodeV2::Leaf { posterior: Some(2) },
                ],
                impurity_decreases: vec![0.5, 0.0, 0.0],
                atom_indices: vec![],
                atom_weights: vec![],
                leaf_values: vec![1.0, 0.0, 0.25, 0.75],
                n_classes: 2,
            }],
        }
    }

    fn to_bytes(&self) -> Vec<u8> {
        let mut bytes = b"MORF".to_vec();
        bytes.extend_from_slice(&2u16.to_le_bytes());
        postcard::to_extend(self, bytes).unwrap()
    }

    fn load(&self) -> Result<Forest, String> {
        Forest::from_bytes(&self.to_bytes()).map_err(|e| e.to_string())
    }
}

#[test]
fn crafted_counts_and_values_are_rejected_with_the_reason() {
    let stump = ForestV2::stump();
    let x = Array2::from_shape_vec((2, 3), vec![0.0f32, 1.0, 2.0, 1.0, 0.0, 0.0]).unwrap();
    let forest = stump.load().unwrap();
    assert_eq!(
        forest
            .predict_proba(x.view(), &ScoreOptions::new())
            .unwrap()
            .row(1)
            .to_vec(),
        [0.25, 0.75]
    );

    let rejected = |change: &dyn Fn(&mut ForestV2), expected: &str| {
        let mut crafted = stump.clone();
        change(&mut crafted);
        let message = crafted.load().expect_err(expected);
        assert!(
            message.contains(expected),
            "{expected:?} not in {message:?}"
        );
    };
    // The counts that made scoring or importances abort (issue 14).
    for n_classes in [u32::MAX as usize, MAX_CLASSES + 1, 0] {
        rejected(&|f| f.n_classes = n_classes, "classes");
    }
    for n_features in [1usize << 40, 1 << 62, MAX_FEATURES + 1, 0] {
        rejected(&|f| f.n_features = n_features, "features");
    }
    rejected(&|f| f.trees.clear(), "without trees");
    // Leaf values that are not distributions.
    let leaves =
        |values: [f32; 4]| move |f: &mut ForestV2| f.trees[0].leaf_values = values.to_vec();
    rejected(&leaves([f32::NAN, 1.0, 0.25, 0.75]), "not finite");
    rejected(&leaves([-1.0, 3.0, 0.25, 0.75]), "negative");
    rejected(&leaves([1.0, 0.0, 0.25, 0.5]), "sums to 0.75");
    rejected(
        &|f| f.trees[0].leaf_values.push(0.0),
        "5 leaf values, of which the leaves use 4",
    );
    rejected(
        &|f| f.trees[0].nodes[2] = NodeV2::Leaf { posterior: Some(1) },
        "node 2: leaf values at 1",
    );
    // Links, features, thresholds, decreases.
    let root = |right: u32, feature: u32, threshold: f32| {
        move |f: &mut ForestV2| {
            f.trees[0].nodes[0] = NodeV2::SplitOnFeature {
                right,
                threshold,
                feature,
                weight: 1.0,
            }
        }
    };
    rejected(&root(1, 0, 0.5), "right child 1");
    rejected(&root(3, 0, 0.5), "right child 3");
    rejected(&root(2, 3, 0.5), "feature 3 of 3");
    rejected(&root(2, 0, f32::INFINITY), "threshold inf");
    rejected(
        &|f| f.trees[0].impurity_decreases[0] = f32::NAN,
        "impurity decrease NaN",
    );
    rejected(
        &|f| f.trees[0].impurity_decreases[2] = 0.5,
        "a leaf with impurity decrease",
    );
    rejected(
        &|f| f.trees[0].n_classes = 3,
        "leaves of width 3 where the forest is Classification { n_classes: 2 }",
    );
    // An atom over the buffers' end, and atoms stored out of order.
    let with_atom = |start: u32, len: u32, indices: Vec<u32>| {
        move |f: &mut ForestV2| {
            f.trees[0].nodes[0] = NodeV2::Split {
                right: 2,
                threshold: 0.5,
                atom_start: start,
                atom_len: len,
            };
            f.trees[0].atom_weights = vec![1.0; indices.len()];
            f.trees[0].atom_indices = indices.clone();
        }
    };
    let mut two_terms = stump.clone();
    with_atom(0, 2, vec![0, 2])(&mut two_terms);
    two_terms.load().expect("a valid two-term atom");
    rejected(&with_atom(0, 3, vec![0, 2]), "past the end");
    rejected(&with_atom(1, 1, vec![0, 2]), "next atom starts at 0");
    rejected(&with_atom(0, 2, vec![2, 0]), "distinct and ascending");
    rejected(&with_atom(0, 2, vec![0, 3]), "feature 3 of 3");
    rejected(&with_atom(0, 1, vec![0, 2]), "of which the splits use 1");
    // Trailing bytes after a body of an old version too.
    let mut trailing = stump.to_bytes();
    trailing.push(0);
    assert!(Forest::from_bytes(&trailing)
        .unwrap_err()
        .to_string()
        .contains("trailing"));
}

#[test]
fn declared_lengths_beyond_the_bytes_fail_without_allocating() {
    // A version 2 forest whose tree vector declares 2^62 trees but holds one.
    let stump = ForestV2::stump().to_bytes();
    let mut crafted = stump[..8].to_vec(); // header, n_features, n_classes
    let mut length = 1u64 << 62;
    while length >= 0x80 {
        crafted.push((length as u8) | 0x80);
        length >>= 7;
    }
    crafted.push(length as u8);
    crafted.extend_from_slice(&stump[9..]);
    assert!(Forest::from_bytes(&crafted).is_err());
}

#[test]
fn results_too_large_for_memory_are_an_error_not_an_abort() {
    // Valid bytes: 2^24 classes, leaves that cast no vote. Probabilities for a million
    // rows would take 128 TiB.
    let mut crafted = ForestV2::stump();
    crafted.n_classes = MAX_CLASSES;
    let tree = &mut crafted.trees[0];
    tree.n_classes = MAX_CLASSES as u32;
    tree.leaf_values.clear();
    tree.nodes[1] = NodeV2::Leaf { posterior: None };
    tree.nodes[2] = NodeV2::Leaf { posterior: None };
    let forest = crafted.load().unwrap();
    let rows = Array2::<f32>::zeros((1_000_000, 3));
    let error = forest
        .predict_proba(rows.view(), &ScoreOptions::new())
        .unwrap_err();
    assert!(
        matches!(error, morf_rs::MorfError::OutOfMemory { .. }),
        "{error}"
    );
    assert!(error.to_string().contains("the probabilities"), "{error}");
}

#[test]
fn forests_of_every_atom_kind_pass_the_loader_validation() {
    use morf_rs::atoms::{GraphAtoms, SamplingGraph, SignedPatches};
    let (x, y) = halves(60, 7);
    let image = Patches::new(vec![2, 3], vec![1, 1], vec![2, 2]);
    let ring: Vec<(u32, u32)> = (0..6).map(|i| (i, (i + 1) % 6)).collect();
    let graph = GraphAtoms {
        graph: SamplingGraph::from_edges(6, &ring).unwrap(),
        min_size: 1,
        max_size: 3,
        signed: true,
    };
    let kinds = [
        AtomKind::SignedPatches(SignedPatches::new(image.clone(), 2)),
        AtomKind::Bumps(image.clone()),
        AtomKind::Gabors(image.clone()),
        AtomKind::Graph(graph),
        AtomKind::Mixture(vec![
            (AtomKind::AxisAligned, 0.3),
            (AtomKind::Gabors(image.clone()), 0.7),
        ]),
        pooled_patches(),
    ];
    for atoms in kinds {
        let params = ForestParams {
            n_estimators: 3,
            atoms: atoms.clone(),
            random_state: 2,
            ..ForestParams::default()
        };
        let forest = Forest::fit(&params, x.view(), &y, 3, None).unwrap();
        let loaded = Forest::from_bytes(&forest.to_bytes());
        assert_eq!(loaded.as_ref(), Ok(&forest), "{atoms:?}");
    }
}
