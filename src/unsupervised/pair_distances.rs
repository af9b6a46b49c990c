//! The distances between the clusters of an agglomerative clustering, read and
//! written by pair: in SciPy's condensed order (the pairs `i < j`, row after row) or in
//! a symmetric square matrix (twice the memory, every cluster's distances along its
//! row).

/// The distances between clusters, read and written by pair, in SciPy's arithmetic.
pub(super) trait PairDistances {
    /// Visits the distance of `x` to each of `others` (ascending; `x` itself left
    /// out), in order.
    fn each_from(&self, x: usize, others: &[usize], visit: impl FnMut(usize, f64));

    /// The distance of `i` and `j`.
    fn get(&self, i: usize, j: usize) -> f64;

    /// Sets the distance of `i` and `j`.
    fn set(&mut self, i: usize, j: usize, distance: f64);
}

/// The distances of `n` samples in the condensed order, read by pair.
pub(super) struct Condensed<'a> {
    distances: &'a mut [f64],
    /// Per sample `i`, where its pairs `(i, j > i)` start.
    row_start: Vec<usize>,
}

impl<'a> Condensed<'a> {
    pub(super) fn new(distances: &'a mut [f64], n: usize) -> Self {
        let row_start = (0..n).map(|i| n * i - i * (i + 1) / 2).collect();
        Condensed {
            distances,
            row_start,
        }
    }

    /// Where pair `(i, j)`, `i < j`, lies.
    #[inline(always)]
    fn at(&self, i: usize, j: usize) -> usize {
        self.row_start[i] + (j - i - 1)
    }
}

impl PairDistances for Condensed<'_> {
    /// Those below `x` down its column, then those above along its row. Two plain
    /// loops, which the compiler keeps tighter than a chained iterator.
    #[inline(always)]
    fn each_from(&self, x: usize, others: &[usize], mut visit: impl FnMut(usize, f64)) {
        let (below, above) = (
            others.partition_point(|&i| i < x),
            others.partition_point(|&i| i <= x),
        );
        for &i in &others[..below] {
            visit(i, self.distances[self.at(i, x)]);
        }
        // Pair `(x, i)` lies at `row_start[x] + i - x - 1`: row `x` from its first pair.
        let row = &self.distances[self.row_start[x]..];
        for &i in &others[above..] {
            visit(i, row[i - x - 1]);
        }
    }

    #[inline(always)]
    fn get(&self, i: usize, j: usize) -> f64 {
        self.distances[self.at(i.min(j), i.max(j))]
    }

    #[inline(always)]
    fn set(&mut self, i: usize, j: usize, distance: f64) {
        let at = self.at(i.min(j), i.max(j));
        self.distances[at] = distance;
    }
}

/// The distances of `n` samples as a symmetric square matrix, row after row: every
/// cluster's distances lie along its row, where the condensed order puts half of
/// them down a column, a cache line apart.
pub(super) struct Square<'a> {
    distances: &'a mut [f64],
    n: usize,
}

impl<'a> Square<'a> {
    pub(super) fn new(distances: &'a mut [f64], n: usize) -> Self {
        assert_eq!(distances.len(), n * n, "a distance per pair of samples");
        Square { distances, n }
    }
}

impl PairDistances for Square<'_> {
    #[inline(always)]
    fn each_from(&self, x: usize, others: &[usize], mut visit: impl FnMut(usize, f64)) {
        let row = &self.distances[x * self.n..(x + 1) * self.n];
        for &i in others {
            if i != x {
                visit(i, row[i]);
            }
        }
    }

    /// Read along `j`'s row, so that a loop over `i` reads one row in order.
    #[inline(always)]
    fn get(&self, i: usize, j: usize) -> f64 {
        self.distances[j * self.n + i]
    }

    #[inline(always)]
    fn set(&mut self, i: usize, j: usize, distance: f64) {
        self.distances[j * self.n + i] = distance;
        self.distances[i * self.n + j] = distance;
    }
}
