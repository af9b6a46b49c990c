//! Agglomerative clustering of samples at distance `1 - similarity`: the merges that
//! scikit-learn's `AgglomerativeClustering(metric="precomputed")` makes through SciPy's
//! `linkage`, made here from the samples' leaves into one matrix of distances (square
//! up to 1 GiB, condensed beyond) where that route builds several (the similarity,
//! the distances and the index arrays of their upper triangle). The same algorithms
//! in the same arithmetic, ties broken the same way, so the same merges: SciPy's
//! nearest-neighbour chain for average and complete linkage, its minimum spanning tree
//! for single linkage, then the merges ordered by distance (stably) and numbered as
//! SciPy numbers them, and the tree cut into clusters numbered as scikit-learn numbers
//! them.

use ndarray::ArrayView2;

use super::pair_distances::{Condensed, PairDistances, Square};
use super::similarity::{condensed_distances_from_leaves, square_distances_from_leaves};
use crate::error::{invalid, Result};

/// How the distance between two clusters follows from their samples' distances, in
/// [`UnsupervisedForest::cluster`](super::UnsupervisedForest::cluster).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Linkage {
    /// The closest pair of samples.
    Single,
    /// The farthest pair of samples.
    Complete,
    /// The mean over all pairs of samples.
    #[default]
    Average,
}

impl Linkage {
    /// The linkage of scikit-learn's name for it: `"average"`, `"complete"` or
    /// `"single"`.
    pub fn from_name(name: &str) -> Result<Linkage> {
        match name {
            "single" => Ok(Linkage::Single),
            "complete" => Ok(Linkage::Complete),
            "average" => Ok(Linkage::Average),
            _ => Err(invalid(
                "linkage",
                format!("must be 'average', 'complete' or 'single', got {name:?}"),
            )),
        }
    }

    /// The distance from cluster `i` to the union of clusters `x` and `y` (of `nx`
    /// and `ny` samples), from its distances to each: SciPy's update, operation for
    /// operation.
    #[inline(always)]
    fn merged(self, d_xi: f64, d_yi: f64, nx: usize, ny: usize) -> f64 {
        match self {
            Linkage::Single => d_xi.min(d_yi),
            Linkage::Complete => {
                if d_yi > d_xi {
                    d_yi
                } else {
                    d_xi
                }
            }
            Linkage::Average => (nx as f64 * d_xi + ny as f64 * d_yi) / (nx + ny) as f64,
        }
    }
}

/// Two clusters merged at `distance`.
#[derive(Debug, Clone, Copy)]
struct Merge {
    x: usize,
    y: usize,
    distance: f64,
}

/// The clusters of the agglomerative clustering of samples at distance `1 - share`
/// of the trees in which they share a leaf (`leaves` of shape (samples, trees), as
/// [`similarity_from_leaves`](super::similarity_from_leaves) reads them) into
/// `n_clusters` clusters (one per sample where there are fewer samples): each
/// sample's cluster, `0..n_clusters`, as scikit-learn's
/// `AgglomerativeClustering(metric="precomputed")` labels them.
pub(crate) fn clusters_from_leaves<L: Copy + Ord + Sync>(
    leaves: ArrayView2<'_, L>,
    n_clusters: usize,
    linkage: Linkage,
    n_threads: usize,
) -> Result<Vec<usize>> {
    if n_clusters == 0 {
        return Err(invalid("n_clusters", "must be at least 1, got 0"));
    }
    let n = leaves.nrows();
    let merges = if fits_square(n, MAX_SQUARE_BYTES) {
        let mut distances = square_distances_from_leaves(leaves, n_threads)?;
        merges_of(&mut Square::new(&mut distances, n), n, linkage)
    } else {
        let mut distances = condensed_distances_from_leaves(leaves, n_threads)?;
        merges_of(&mut Condensed::new(&mut distances, n), n, linkage)
    };
    Ok(cut(&numbered(merges, n), n_clusters.min(n), n))
}

/// The most bytes the distances of the samples take as a square matrix, twice the
/// memory of the condensed pairs but read along rows; beyond, they stay condensed.
const MAX_SQUARE_BYTES: usize = 1 << 30;

/// Whether the distances of `n` samples take at most `max_bytes` as a square matrix.
fn fits_square(n: usize, max_bytes: usize) -> bool {
    n.checked_mul(n)
        .and_then(|pairs| pairs.checked_mul(std::mem::size_of::<f64>()))
        .is_some_and(|bytes| bytes <= max_bytes)
}

/// The merges of `n` samples at `distances` under `linkage`.
fn merges_of(distances: &mut impl PairDistances, n: usize, linkage: Linkage) -> Vec<Merge> {
    match linkage {
        Linkage::Single => spanning_tree_merges(distances, n),
        Linkage::Complete | Linkage::Average => chain_merges(distances, n, linkage),
    }
}

/// The merges of a reducible linkage by the nearest-neighbour chain, as SciPy's
/// `nn_chain`: each merge keeps the place of the cluster of the larger index, and
/// `distances` ends up holding the clusters' distances. The clusters still standing
/// are listed in ascending order, the order in which SciPy visits them.
fn chain_merges(distances: &mut impl PairDistances, n: usize, linkage: Linkage) -> Vec<Merge> {
    let mut size = vec![1usize; n];
    let mut standing: Vec<usize> = (0..n).collect();
    let mut chain = Vec::with_capacity(n);
    let mut merges = Vec::with_capacity(n.saturating_sub(1));
    for _ in 1..n {
        if chain.is_empty() {
            chain.push(standing[0]);
        }
        // Follow nearest neighbours until two are each other's.
        let (x, y, current) = loop {
            let x = chain[chain.len() - 1];
            // The previous cluster of the chain wins ties, so that the chain never
            // goes round in a cycle.
            let (mut y, mut current) = match chain.len() {
                1 => (0, f64::INFINITY),
                len => (chain[len - 2], distances.get(x, chain[len - 2])),
            };
            distances.each_from(x, &standing, |i, distance| {
                if distance < current {
                    current = distance;
                    y = i;
                }
            });
            if chain.len() > 1 && y == chain[chain.len() - 2] {
                break (x, y, current);
            }
            chain.push(y);
        };
        chain.truncate(chain.len() - 2);
        let (x, y) = (x.min(y), x.max(y));
        let (nx, ny) = (size[x], size[y]);
        merges.push(Merge {
            x,
            y,
            distance: current,
        });
        size[y] = nx + ny;
        standing.remove(standing.binary_search(&x).expect("x stands"));
        for &i in &standing {
            if i != y {
                let merged = linkage.merged(distances.get(i, x), distances.get(i, y), nx, ny);
                distances.set(i, y, merged);
            }
        }
    }
    merges
}

/// The merges of single linkage by a minimum spanning tree grown from sample 0, as
/// SciPy's `mst_single_linkage`.
fn spanning_tree_merges(distances: &impl PairDistances, n: usize) -> Vec<Merge> {
    let mut nearest = vec![f64::INFINITY; n];
    // The samples not yet joined, ascending.
    let mut outside: Vec<usize> = (1..n).collect();
    let mut merges = Vec::with_capacity(n.saturating_sub(1));
    let mut x = 0;
    for _ in 1..n {
        let (mut y, mut current) = (0, f64::INFINITY);
        distances.each_from(x, &outside, |i, distance| {
            if nearest[i] > distance {
                nearest[i] = distance;
            }
            if nearest[i] < current {
                y = i;
                current = nearest[i];
            }
        });
        merges.push(Merge {
            x,
            y,
            distance: current,
        });
        outside.remove(outside.binary_search(&y).expect("y is outside"));
        x = y;
    }
    merges
}

/// `merges` in order of distance (ties in the order made) and numbered as SciPy's
/// `label` numbers them: each merge's two clusters by the number of the cluster each
/// sample named in it belongs to by then, the smaller first.
fn numbered(mut merges: Vec<Merge>, n: usize) -> Vec<[usize; 2]> {
    merges.sort_by(|a, b| a.distance.total_cmp(&b.distance));
    // Per cluster number, the cluster it was merged into (itself while it stands).
    let mut parent: Vec<usize> = (0..2 * n.max(1) - 1).collect();
    let root = |parent: &mut Vec<usize>, mut x: usize| {
        let start = x;
        while parent[x] != x {
            x = parent[x];
        }
        let mut p = start;
        while parent[p] != x {
            (p, parent[p]) = (parent[p], x);
        }
        x
    };
    merges
        .iter()
        .enumerate()
        .map(|(k, merge)| {
            let (a, b) = (root(&mut parent, merge.x), root(&mut parent, merge.y));
            parent[a] = n + k;
            parent[b] = n + k;
            [a.min(b), a.max(b)]
        })
        .collect()
}

/// Each of `n` samples' cluster when the tree of `merges` (numbered as
/// [`numbered`] gives them) is cut into `n_clusters` clusters, numbered as
/// scikit-learn's `_hc_cut` numbers them: from the last merge, the cluster of the
/// latest merge still whole is split in two, `n_clusters - 1` times, the clusters
/// kept in a heap as Python's `heapq` keeps one, and numbered in the heap's order.
fn cut(merges: &[[usize; 2]], n_clusters: usize, n: usize) -> Vec<usize> {
    let mut labels = vec![0; n];
    let Some(last) = merges.last() else {
        return labels;
    };
    // Cluster numbers, negated as scikit-learn negates them for a heap of least
    // first, so that ties and the heap's order are the same.
    let mut heap = vec![-(last[0].max(last[1]) as i64 + 1)];
    for _ in 1..n_clusters {
        let [first, second] = merges[(-heap[0]) as usize - n];
        heap_push(&mut heap, -(first as i64));
        heap_push_pop(&mut heap, -(second as i64));
    }
    for (label, &cluster) in heap.iter().enumerate() {
        let mut pending = vec![(-cluster) as usize];
        while let Some(cluster) = pending.pop() {
            match cluster.checked_sub(n) {
                Some(merge) => pending.extend(merges[merge]),
                None => labels[cluster] = label,
            }
        }
    }
    labels
}

/// Python's `heapq.heappush`.
fn heap_push(heap: &mut Vec<i64>, item: i64) {
    heap.push(item);
    let last = heap.len() - 1;
    sift_towards_root(heap, 0, last);
}

/// Python's `heapq.heappushpop`, its result dropped.
fn heap_push_pop(heap: &mut [i64], item: i64) {
    if !heap.is_empty() && heap[0] < item {
        heap[0] = item;
        sift_towards_leaves(heap, 0);
    }
}

/// Python's `heapq._siftdown`: the item at `pos` moved up while it is less than
/// its parent, no higher than `start`.
fn sift_towards_root(heap: &mut [i64], start: usize, mut pos: usize) {
    let item = heap[pos];
    while pos > start {
        let parent = (pos - 1) >> 1;
        if item < heap[parent] {
            heap[pos] = heap[parent];
            pos = parent;
        } else {
            break;
        }
    }
    heap[pos] = item;
}

/// Python's `heapq._siftup`: the item at `pos` sent down to a leaf along the lesser
/// children, then back up to its place.
fn sift_towards_leaves(heap: &mut [i64], mut pos: usize) {
    let (end, start, item) = (heap.len(), pos, heap[pos]);
    let mut child = 2 * pos + 1;
    while child < end {
        let right = child + 1;
        if right < end && heap[child] >= heap[right] {
            child = right;
        }
        heap[pos] = heap[child];
        pos = child;
        child = 2 * pos + 1;
    }
    heap[pos] = item;
    sift_towards_root(heap, start, pos);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where pair `(i, j)` of `n` samples lies in the condensed order.
    fn pair_index(n: usize, i: usize, j: usize) -> usize {
        let (i, j) = (i.min(j), i.max(j));
        n * i - i * (i + 1) / 2 + (j - i - 1)
    }

    /// The merges of the samples of condensed `distances` by brute force: at each
    /// step the closest two clusters under `linkage`, by the mean, least or largest
    /// distance between their samples. Without ties, the one clustering there is.
    fn brute_force(distances: &[f64], n: usize, linkage: Linkage) -> Vec<(Vec<usize>, Vec<usize>)> {
        let mut clusters: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
        let mut merges = Vec::new();
        while clusters.len() > 1 {
            let between = |a: &[usize], b: &[usize]| {
                let pairs = a.iter().flat_map(|&i| b.iter().map(move |&j| (i, j)));
                let d: Vec<f64> = pairs.map(|(i, j)| distances[pair_index(n, i, j)]).collect();
                match linkage {
                    Linkage::Single => d.iter().copied().fold(f64::INFINITY, f64::min),
                    Linkage::Complete => d.iter().copied().fold(0.0, f64::max),
                    Linkage::Average => d.iter().sum::<f64>() / d.len() as f64,
                }
            };
            let mut best = (f64::INFINITY, 0, 0);
            for a in 0..clusters.len() {
                for b in a + 1..clusters.len() {
                    let d = between(&clusters[a], &clusters[b]);
                    if d < best.0 {
                        best = (d, a, b);
                    }
                }
            }
            let (_, a, b) = best;
            let merged_b = clusters.remove(b);
            let merged_a = clusters.remove(a);
            let mut union = merged_a.clone();
            union.extend(&merged_b);
            union.sort_unstable();
            merges.push((merged_a, merged_b));
            clusters.push(union);
        }
        merges
    }

    /// The samples of each merge's two clusters, from numbered merges.
    fn members(merges: &[[usize; 2]], n: usize) -> Vec<(Vec<usize>, Vec<usize>)> {
        let mut of: Vec<Vec<usize>> = (0..n).map(|i| vec![i]).collect();
        merges
            .iter()
            .map(|&[a, b]| {
                let (left, right) = (of[a].clone(), of[b].clone());
                let mut union = left.clone();
                union.extend(&right);
                union.sort_unstable();
                of.push(union);
                (left, right)
            })
            .collect()
    }

    #[test]
    fn merges_are_those_of_the_definition_where_no_distances_tie() {
        let n = 9;
        // Distinct distances: the clustering is unique.
        let distances: Vec<f64> = (0..n * (n - 1) / 2)
            .map(|k| ((k * 37 + 11) % 101) as f64 / 101.0 + k as f64 * 1e-6)
            .collect();
        for linkage in [Linkage::Single, Linkage::Complete, Linkage::Average] {
            let mut condensed = distances.clone();
            let mut square = square_of(&distances, n);
            for merges in [
                merges_of(&mut Condensed::new(&mut condensed, n), n, linkage),
                merges_of(&mut Square::new(&mut square, n), n, linkage),
            ] {
                let found = members(&numbered(merges, n), n);
                let expected = brute_force(&distances, n, linkage);
                for ((a, b), (c, d)) in found.iter().zip(&expected) {
                    let same = (a == c && b == d) || (a == d && b == c);
                    assert!(same, "{linkage:?}: {found:?} against {expected:?}");
                }
            }
        }
    }

    /// The square matrix of condensed `distances` of `n` samples.
    fn square_of(distances: &[f64], n: usize) -> Vec<f64> {
        let mut square = vec![0.0; n * n];
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    square[i * n + j] = distances[pair_index(n, i, j)];
                }
            }
        }
        square
    }

    #[test]
    fn square_and_condensed_distances_make_the_same_merges_through_ties() {
        let n = 40;
        // A tenth apart: many ties, broken by the order of the clusters.
        let distances: Vec<f64> = (0..n * (n - 1) / 2)
            .map(|k| ((k * 7 + 3) % 11) as f64 / 10.0)
            .collect();
        for linkage in [Linkage::Single, Linkage::Complete, Linkage::Average] {
            let mut condensed = distances.clone();
            let mut square = square_of(&distances, n);
            let merges = [
                merges_of(&mut Condensed::new(&mut condensed, n), n, linkage),
                merges_of(&mut Square::new(&mut square, n), n, linkage),
            ]
            .map(|merges| {
                let order: Vec<_> = merges
                    .iter()
                    .map(|m| (m.x, m.y, m.distance.to_bits()))
                    .collect();
                order
            });
            assert_eq!(merges[0], merges[1], "{linkage:?}");
        }
    }

    #[test]
    fn distances_are_square_up_to_the_byte_limit() {
        assert!(fits_square(2, 32));
        assert!(!fits_square(3, 64));
        assert!(!fits_square(usize::MAX, MAX_SQUARE_BYTES));
    }
}
