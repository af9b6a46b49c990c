//! Scoring through the public API: layouts, element types, output in place, streams of
//! blocks, and the checks made inside the parallel walk.

use std::sync::atomic::AtomicBool;

use crate::common::one_informative_feature;
use morf_rs::rng::Rng;
use morf_rs::{AtomKind, Forest, ForestParams, Inspect, MorfError, Patches, ScoreOptions};
use ndarray::{s, Array2, ShapeBuilder};

/// Whole values in 0..=255 (pixels), with the label carried by features 3 and 4.
fn pixels(n: usize, seed: u64) -> (Array2<f32>, Vec<u32>) {
    let mut rng = Rng::new(seed, 0);
    let y: Vec<u32> = (0..n).map(|i| (i % 3) as u32).collect();
    let x = Array2::from_shape_fn((n, 12), |(i, j)| {
        let noise = rng.below(120) as f32;
        if j == 3 || j == 4 {
            noise + 60.0 * y[i] as f32
        } else {
            noise
        }
    });
    (x, y)
}

fn forests() -> Vec<Forest> {
    let (x, y) = pixels(300, 1);
    let base = ForestParams {
        n_estimators: 9,
        random_state: 3,
        honest_fraction: 0.3,
        ..ForestParams::default()
    };
    [
        base.clone(),
        ForestParams {
            atoms: AtomKind::Patches(Patches::new(vec![3, 4], vec![1, 1], vec![2, 3])),
            ..base
        },
    ]
    .iter()
    .map(|params| Forest::fit(params, x.view(), &y, 3, None).unwrap())
    .collect()
}

#[test]
fn every_layout_and_element_type_scores_the_same() {
    let (x, _) = pixels(1000, 2);
    let fortran = {
        let mut f = Array2::zeros(x.dim().f());
        f.assign(&x);
        f
    };
    let mut doubled = Array2::zeros((2000, 12));
    doubled.slice_mut(s![..;2, ..]).assign(&x);
    let reversed_columns = x.slice(s![.., ..;-1]).to_owned();
    let bytes = x.mapv(|v| v as u8);
    let wide = x.mapv(f64::from);
    for forest in forests() {
        let proba = forest
            .predict_proba(x.view(), &ScoreOptions::new())
            .unwrap();
        let leaves = forest.apply(x.view(), &ScoreOptions::new()).unwrap();
        for threads in [1, 3] {
            assert_eq!(
                forest
                    .predict_proba(fortran.view(), &ScoreOptions::new().with_threads(threads))
                    .unwrap(),
                proba
            );
            assert_eq!(
                forest
                    .predict_proba(bytes.view(), &ScoreOptions::new().with_threads(threads))
                    .unwrap(),
                proba
            );
            assert_eq!(
                forest
                    .predict_proba(wide.view(), &ScoreOptions::new().with_threads(threads))
                    .unwrap(),
                proba
            );
            assert_eq!(
                forest
                    .apply(fortran.view(), &ScoreOptions::new().with_threads(threads))
                    .unwrap(),
                leaves
            );
            assert_eq!(
                forest
                    .apply(bytes.view(), &ScoreOptions::new().with_threads(threads))
                    .unwrap(),
                leaves
            );
            // A view whose rows are not contiguous: every other row of `doubled`.
            let strided = doubled.slice(s![..;2, ..]);
            assert_eq!(
                forest
                    .predict_proba(strided, &ScoreOptions::new().with_threads(threads))
                    .unwrap(),
                proba
            );
            // Negative strides: x's columns read backwards are x itself.
            let back = reversed_columns.slice(s![.., ..;-1]);
            assert_eq!(
                forest
                    .apply(back, &ScoreOptions::new().with_threads(threads))
                    .unwrap(),
                leaves
            );
        }
    }
}

#[test]
fn predict_is_the_argmax_of_the_probabilities() {
    let (x, _) = pixels(700, 3);
    for forest in forests() {
        let proba = forest
            .predict_proba(x.view(), &ScoreOptions::new())
            .unwrap();
        let argmax: Vec<u32> = proba
            .rows()
            .into_iter()
            .map(|row| {
                let best = row.iter().cloned().fold(f64::MIN, f64::max);
                row.iter().position(|&p| p == best).unwrap() as u32
            })
            .collect();
        for threads in [1, 2] {
            assert_eq!(
                forest
                    .predict(x.view(), &ScoreOptions::new().with_threads(threads))
                    .unwrap(),
                argmax
            );
        }
    }
}

#[test]
fn the_first_bad_value_is_reported_whatever_the_threads() {
    let forest = &forests()[0];
    let (mut x, _) = pixels(5000, 4);
    // Bad values in every chunk from row 3001 on, so that threads find many.
    // Missing values (NaN) before and among them are no error.
    x.slice_mut(s![3002.., 10]).fill(f32::INFINITY);
    x.slice_mut(s![2000.., 3]).fill(f32::NAN);
    x[[3001, 7]] = f32::NEG_INFINITY;
    x[[3001, 9]] = f32::INFINITY;
    let first = MorfError::NonFiniteInput {
        row: 3001,
        column: 7,
    };
    for threads in [1, 2, 3] {
        assert_eq!(
            forest.predict_proba(x.view(), &ScoreOptions::new().with_threads(threads)),
            Err(first.clone())
        );
        assert_eq!(
            forest.apply(x.view(), &ScoreOptions::new().with_threads(threads)),
            Err(first.clone())
        );
        assert_eq!(
            forest.predict(x.view(), &ScoreOptions::new().with_threads(threads)),
            Err(first.clone())
        );
    }
    // A finite float64 beyond float32's range would become infinite in the engine.
    let mut wide = x.slice(s![..3002, ..]).mapv(f64::from);
    wide[[3001, 7]] = 0.0;
    wide[[3001, 8]] = 1e300;
    assert_eq!(
        forest.predict_proba(wide.view(), &ScoreOptions::new().with_threads(2)),
        Err(MorfError::TooLargeForFloat32 {
            row: 3001,
            column: 8,
            value: 1e300
        })
    );
}

#[test]
fn output_is_written_in_place_and_checked() {
    let (x, _) = pixels(500, 5);
    let forest = &forests()[1];
    let expected = forest
        .predict_proba(x.view(), &ScoreOptions::new())
        .unwrap();
    let never = AtomicBool::new(false);
    // Rows of a larger array, as a caller filling one output block by block would.
    let mut out = Array2::from_elem((600, 3), -1.0);
    forest
        .predict_proba_into(
            x.view(),
            out.slice_mut(s![100.., ..]),
            &ScoreOptions::new().with_threads(2).with_cancel(&never),
        )
        .unwrap();
    assert_eq!(out.slice(s![100.., ..]), expected);
    assert!(out.slice(s![..100, ..]).iter().all(|&p| p == -1.0));

    let mut leaves = Array2::<i64>::zeros((500, 9));
    forest
        .apply_into(
            x.view(),
            leaves.view_mut(),
            &ScoreOptions::new().with_threads(2).with_cancel(&never),
        )
        .unwrap();
    assert_eq!(
        leaves,
        forest
            .apply(x.view(), &ScoreOptions::new())
            .unwrap()
            .mapv(i64::from)
    );

    let mut wrong_shape = Array2::zeros((500, 2));
    let message = forest
        .predict_proba_into(
            x.view(),
            wrong_shape.view_mut(),
            &ScoreOptions::new().with_cancel(&never),
        )
        .unwrap_err()
        .to_string();
    assert!(message.contains("must have shape (500, 3)"), "{message}");
    let mut column_major = Array2::zeros((500, 3).f());
    let message = forest
        .predict_proba_into(
            x.view(),
            column_major.view_mut(),
            &ScoreOptions::new().with_cancel(&never),
        )
        .unwrap_err()
        .to_string();
    assert!(message.contains("row-major"), "{message}");
}

#[test]
fn no_rows_score_to_empty_output() {
    let forest = &forests()[0];
    let none = Array2::<f32>::zeros((0, 12));
    assert_eq!(
        forest
            .predict_proba(none.view(), &ScoreOptions::new().with_threads(2))
            .unwrap()
            .dim(),
        (0, 3)
    );
    assert_eq!(
        forest
            .apply(none.view(), &ScoreOptions::new().with_threads(2))
            .unwrap()
            .dim(),
        (0, 9)
    );
    assert!(forest
        .predict(none.view(), &ScoreOptions::new().with_threads(2))
        .unwrap()
        .is_empty());
    let narrow = Array2::<f32>::zeros((0, 11));
    assert!(matches!(
        forest.predict_proba(narrow.view(), &ScoreOptions::new()),
        Err(MorfError::ShapeMismatch { .. })
    ));
}

#[test]
fn every_scoring_entry_stops_once_cancelled() {
    let (x, _) = pixels(2000, 7);
    let forest = &forests()[0];
    let cancelled = AtomicBool::new(true);
    let mut out = Array2::zeros((2000, 3));
    for threads in [1, 2] {
        assert_eq!(
            forest.predict(
                x.view(),
                &ScoreOptions::new()
                    .with_threads(threads)
                    .with_cancel(&cancelled)
            ),
            Err(MorfError::Cancelled)
        );
        assert_eq!(
            forest.predict_proba_into(
                x.view(),
                out.view_mut(),
                &ScoreOptions::new()
                    .with_threads(threads)
                    .with_cancel(&cancelled)
            ),
            Err(MorfError::Cancelled)
        );
    }
}

#[test]
fn a_stream_of_blocks_scores_as_one_array() {
    let (x, _) = pixels(2600, 6);
    // One options value for the whole stream: its threads start once, and are kept.
    let options = ScoreOptions::new().with_threads(2);
    for forest in forests() {
        let expected = forest
            .predict_proba(x.view(), &ScoreOptions::new())
            .unwrap();
        let bounds = [0, 1, 129, 130, 700, 2600];
        let mut out = Array2::from_elem((2600, 3), -1.0);
        for w in bounds.windows(2) {
            let block = x.slice(s![w[0]..w[1], ..]);
            let block_out = out.slice_mut(s![w[0]..w[1], ..]);
            forest
                .predict_proba_into(block, block_out, &options)
                .unwrap();
        }
        assert_eq!(out, expected);
        assert!(format!("{options:?}").contains("pool_started: true"));
        // Owned blocks, as a reader produces them; one bad block fails alone.
        let owned = (0..3).map(|i| {
            let mut block = x.slice(s![i * 100..(i + 1) * 100, ..]).to_owned();
            if i == 1 {
                block[[5, 0]] = f32::INFINITY;
            }
            block
        });
        let results: Vec<_> = owned
            .map(|block| forest.predict_proba(block.view(), &options))
            .collect();
        assert_eq!(results[0].as_ref().unwrap(), &expected.slice(s![..100, ..]));
        assert_eq!(
            results[1],
            Err(MorfError::NonFiniteInput { row: 5, column: 0 })
        );
        assert_eq!(
            results[2].as_ref().unwrap(),
            &expected.slice(s![200..300, ..])
        );
    }
}

#[test]
fn score_options_start_threads_once_and_only_for_calls_large_enough_to_share() {
    let (x, _) = pixels(2000, 8);
    let forest = &forests()[1];
    let started = |options: &ScoreOptions| format!("{options:?}").contains("pool_started: true");
    let options = ScoreOptions::new().with_threads(2);
    let few = forest
        .predict_proba(x.slice(s![..1000, ..]), &options)
        .unwrap();
    assert!(!started(&options));
    let all = forest.predict_proba(x.view(), &options).unwrap();
    assert!(started(&options));
    assert_eq!(all.slice(s![..1000, ..]), few);
    // A copy starts threads of its own; one thread never starts any.
    assert!(!started(&options.clone()));
    let one = ScoreOptions::new();
    assert_eq!(forest.predict_proba(x.view(), &one).unwrap(), all);
    assert!(!started(&one));
}

#[test]
fn large_batches_score_the_same_in_parallel() {
    let (x, y) = one_informative_feature(300, 12);
    let forest = Forest::fit(
        &ForestParams {
            n_estimators: 10,
            ..ForestParams::default()
        },
        x.view(),
        &y,
        2,
        None,
    )
    .unwrap();
    let (big, _) = one_informative_feature(5000, 13);
    assert_eq!(
        forest
            .predict_proba(big.view(), &ScoreOptions::new())
            .unwrap(),
        forest
            .predict_proba(big.view(), &ScoreOptions::new().with_threads(3))
            .unwrap()
    );
    assert_eq!(
        forest.apply(big.view(), &ScoreOptions::new()).unwrap(),
        forest
            .apply(big.view(), &ScoreOptions::new().with_threads(0))
            .unwrap()
    );
}

#[test]
fn batch_scoring_finds_each_rows_own_leaf() {
    // Rows walk a tree in lanes that take the next row as soon as theirs reaches a
    // leaf; leaves of very different depths make lanes finish out of step. Forests of
    // single-feature splits are walked row by row, oblique ones as blocks.
    let (x, y) = one_informative_feature(400, 21);
    let oblique = AtomKind::SparseOblique {
        feature_combinations: 2.0,
    };
    for atoms in [AtomKind::AxisAligned, oblique] {
        let params = ForestParams {
            n_estimators: 5,
            atoms,
            ..ForestParams::default()
        };
        let forest = Forest::fit(&params, x.view(), &y, 2, None).unwrap();
        let (batch, _) = one_informative_feature(1100, 22);
        for n_rows in [1, 7, 8, 9, 17, 129, 300, 1100] {
            let rows = batch.slice(s![..n_rows, ..]);
            let leaves = forest.apply(rows, &ScoreOptions::new()).unwrap();
            for (t, tree) in forest.trees().iter().enumerate() {
                for (i, row) in rows.rows().into_iter().enumerate() {
                    let row = row.to_vec();
                    assert_eq!(leaves[[i, t]] as usize, tree.leaf_of(&row), "{n_rows} rows");
                }
            }
        }
    }
}

/// Per row, the mean of the trees' class distributions at the leaves `Tree::leaf_of`
/// finds (walking each tree alone, reading every value as a float), summed class by
/// class in tree order as scoring sums them; `None` for a row no tree votes for.
fn proba_by_tree_walks(forest: &Forest, x: &Array2<f32>) -> Vec<Option<Vec<f64>>> {
    x.rows()
        .into_iter()
        .map(|row| {
            let row = row.to_vec();
            let mut sums: Option<Vec<f64>> = None;
            for tree in forest.trees() {
                if let Some(distribution) = tree.posterior(tree.leaf_of(&row)) {
                    let sums = sums.get_or_insert_with(|| vec![0.0; distribution.len()]);
                    for (sum, &p) in sums.iter_mut().zip(distribution) {
                        *sum += f64::from(p);
                    }
                }
            }
            sums.map(|sums| {
                let total: f64 = sums.iter().sum();
                sums.iter().map(|s| s / total).collect()
            })
        })
        .collect()
}

#[test]
fn rows_of_bytes_reach_the_leaves_a_float_walk_reaches() {
    // Pixels are walked as bytes: large trees of single-feature splits row by row
    // through byte comparisons, the others as blocks of bytes (whole weights by whole
    // sums). Trees grown on pixels / 255 put every threshold between bytes 0 and 1,
    // those grown on pixels between pixel values; shallow or honest trees leave
    // leaves of several classes, and leaves that cast no vote.
    let (x, y) = pixels(2500, 5);
    let scaled = x.mapv(|v| v / 255.0);
    let oblique = AtomKind::SparseOblique {
        feature_combinations: 2.0,
    };
    let patches = AtomKind::Patches(Patches::new(vec![3, 4], vec![1, 1], vec![2, 3]));
    let (rows, _) = pixels(1100, 6);
    for atoms in [AtomKind::AxisAligned, oblique, patches] {
        for (max_depth, honest_fraction) in [(None, 0.0), (Some(4), 0.0), (None, 0.5)] {
            let params = ForestParams {
                n_estimators: 4,
                atoms: atoms.clone(),
                max_depth,
                honest_fraction,
                random_state: 7,
                ..ForestParams::default()
            };
            for grown_on in [&x, &scaled] {
                let forest = Forest::fit(&params, grown_on.view(), &y, 3, None).unwrap();
                let leaves = forest.apply(rows.view(), &ScoreOptions::new()).unwrap();
                for (i, row) in rows.rows().into_iter().enumerate() {
                    for (t, tree) in forest.trees().iter().enumerate() {
                        assert_eq!(leaves[[i, t]] as usize, tree.leaf_of(&row.to_vec()));
                    }
                }
                let proba = forest
                    .predict_proba(rows.view(), &ScoreOptions::new())
                    .unwrap();
                for (i, expected) in proba_by_tree_walks(&forest, &rows).iter().enumerate() {
                    let uniform = vec![1.0 / 3.0; 3];
                    let expected = expected.as_ref().unwrap_or(&uniform);
                    assert_eq!(proba.row(i).to_vec(), *expected, "{atoms:?} row {i}");
                }
            }
        }
    }
}
