//! Scoring through the public API: layouts, element types, output in place, streams of
//! blocks, and the checks made inside the parallel walk.

mod common;

use std::sync::atomic::AtomicBool;

use common::one_informative_feature;
use morf_rs::rng::Rng;
use morf_rs::{AtomKind, Forest, ForestParams, MorfError, Patches};
use ndarray::{concatenate, s, Array2, Axis, ShapeBuilder};

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
        let proba = forest.predict_proba(x.view(), 1).unwrap();
        let leaves = forest.apply(x.view(), 1).unwrap();
        for threads in [1, 3] {
            assert_eq!(
                forest.predict_proba(fortran.view(), threads).unwrap(),
                proba
            );
            assert_eq!(forest.predict_proba(bytes.view(), threads).unwrap(), proba);
            assert_eq!(forest.predict_proba(wide.view(), threads).unwrap(), proba);
            assert_eq!(forest.apply(fortran.view(), threads).unwrap(), leaves);
            assert_eq!(forest.apply(bytes.view(), threads).unwrap(), leaves);
            // A view whose rows are not contiguous: every other row of `doubled`.
            let strided = doubled.slice(s![..;2, ..]);
            assert_eq!(forest.predict_proba(strided, threads).unwrap(), proba);
            // Negative strides: x's columns read backwards are x itself.
            let back = reversed_columns.slice(s![.., ..;-1]);
            assert_eq!(forest.apply(back, threads).unwrap(), leaves);
        }
    }
}

#[test]
fn predict_is_the_argmax_of_the_probabilities() {
    let (x, _) = pixels(700, 3);
    for forest in forests() {
        let proba = forest.predict_proba(x.view(), 1).unwrap();
        let argmax: Vec<u32> = proba
            .rows()
            .into_iter()
            .map(|row| {
                let best = row.iter().cloned().fold(f64::MIN, f64::max);
                row.iter().position(|&p| p == best).unwrap() as u32
            })
            .collect();
        for threads in [1, 2] {
            assert_eq!(forest.predict(x.view(), threads).unwrap(), argmax);
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
        assert_eq!(forest.predict_proba(x.view(), threads), Err(first.clone()));
        assert_eq!(forest.apply(x.view(), threads), Err(first.clone()));
        assert_eq!(forest.predict(x.view(), threads), Err(first.clone()));
    }
    // A finite float64 beyond float32's range would become infinite in the engine.
    let mut wide = x.slice(s![..3002, ..]).mapv(f64::from);
    wide[[3001, 7]] = 0.0;
    wide[[3001, 8]] = 1e300;
    assert_eq!(
        forest.predict_proba(wide.view(), 2),
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
    let expected = forest.predict_proba(x.view(), 1).unwrap();
    let never = AtomicBool::new(false);
    // Rows of a larger array, as a caller filling one output block by block would.
    let mut out = Array2::from_elem((600, 3), -1.0);
    forest
        .predict_proba_into(x.view(), out.slice_mut(s![100.., ..]), 2, &never)
        .unwrap();
    assert_eq!(out.slice(s![100.., ..]), expected);
    assert!(out.slice(s![..100, ..]).iter().all(|&p| p == -1.0));

    let mut leaves = Array2::<i64>::zeros((500, 9));
    forest
        .apply_into(x.view(), leaves.view_mut(), 2, &never)
        .unwrap();
    assert_eq!(leaves, forest.apply(x.view(), 1).unwrap().mapv(i64::from));

    let mut wrong_shape = Array2::zeros((500, 2));
    let message = forest
        .predict_proba_into(x.view(), wrong_shape.view_mut(), 1, &never)
        .unwrap_err()
        .to_string();
    assert!(message.contains("must have shape (500, 3)"), "{message}");
    let mut column_major = Array2::zeros((500, 3).f());
    let message = forest
        .predict_proba_into(x.view(), column_major.view_mut(), 1, &never)
        .unwrap_err()
        .to_string();
    assert!(message.contains("row-major"), "{message}");
}

#[test]
fn no_rows_score_to_empty_output() {
    let forest = &forests()[0];
    let none = Array2::<f32>::zeros((0, 12));
    assert_eq!(forest.predict_proba(none.view(), 2).unwrap().dim(), (0, 3));
    assert_eq!(forest.apply(none.view(), 2).unwrap().dim(), (0, 9));
    assert!(forest.predict(none.view(), 2).unwrap().is_empty());
    let narrow = Array2::<f32>::zeros((0, 11));
    assert!(matches!(
        forest.predict_proba(narrow.view(), 1),
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
            forest.predict_cancellable(x.view(), threads, &cancelled),
            Err(MorfError::Cancelled)
        );
        assert_eq!(
            forest.predict_proba_into(x.view(), out.view_mut(), threads, &cancelled),
            Err(MorfError::Cancelled)
        );
    }
}

#[test]
fn a_stream_of_blocks_scores_as_one_array() {
    let (x, _) = pixels(1300, 6);
    for forest in forests() {
        let expected = forest.predict_proba(x.view(), 1).unwrap();
        let bounds = [0, 1, 129, 130, 700, 1300];
        let views = bounds.windows(2).map(|w| x.slice(s![w[0]..w[1], ..]));
        let blocks: Vec<Array2<f64>> = forest
            .predict_proba_blocks(views, 2)
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let views: Vec<_> = blocks.iter().map(|b| b.view()).collect();
        assert_eq!(concatenate(Axis(0), &views).unwrap(), expected);
        // Owned blocks, as a reader produces them; one bad block fails alone.
        let owned = (0..3).map(|i| {
            let mut block = x.slice(s![i * 100..(i + 1) * 100, ..]).to_owned();
            if i == 1 {
                block[[5, 0]] = f32::INFINITY;
            }
            block
        });
        let results: Vec<_> = forest.predict_proba_blocks(owned, 1).unwrap().collect();
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
        forest.predict_proba(big.view(), 1).unwrap(),
        forest.predict_proba(big.view(), 3).unwrap()
    );
    assert_eq!(
        forest.apply(big.view(), 1).unwrap(),
        forest.apply(big.view(), 0).unwrap()
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
            let leaves = forest.apply(rows, 1).unwrap();
            for (t, tree) in forest.trees().iter().enumerate() {
                for (i, row) in rows.rows().into_iter().enumerate() {
                    let row = row.to_vec();
                    assert_eq!(leaves[[i, t]] as usize, tree.leaf_of(&row), "{n_rows} rows");
                }
            }
        }
    }
}
