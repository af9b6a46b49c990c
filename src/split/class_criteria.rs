//! The classification criteria, Gini impurity and entropy, of the class weights of a
//! node's samples.

use super::criterion::{Float, LocalSamples, NodeTargets, SplitCriterion};

/// Copies the weights and classes of `samples` into `node`, with the weight of each
/// class; pure when at most one class has weight.
fn gather_classes(n_classes: usize, local: &LocalSamples, samples: &[u32], node: &mut NodeTargets) {
    node.weights.clear();
    node.classes.clear();
    node.sums.clear();
    node.sums.resize(n_classes, 0.0);
    for &sample in samples {
        let (class, weight) = (
            local.class_of[sample as usize],
            local.weight_of[sample as usize],
        );
        node.classes.push(class);
        node.weights.push(weight);
        node.sums[class as usize] += weight;
    }
    node.weight = node.sums.iter().sum();
    node.pure = node.sums.iter().filter(|&&w| w > 0.0).count() <= 1;
}

/// Gini impurity `sum_k p_k (1 - p_k)` of class weights.
#[derive(Debug, Clone, Copy)]
pub struct Gini {
    /// Number of classes.
    pub n_classes: usize,
}

/// Shannon entropy in bits of class weights.
#[derive(Debug, Clone, Copy)]
pub struct Entropy {
    /// Number of classes.
    pub n_classes: usize,
}

/// The classification criteria differ only in their terms and costs.
macro_rules! class_criterion {
    ($name:ident, $squared_terms:expr) => {
        impl SplitCriterion for $name {
            const ENTRIES_SUM_TO_WEIGHT: bool = true;
            const SQUARED_TERMS: bool = $squared_terms;
            const CLASS_ENTRIES: bool = true;
            // Gini's cost is a division; entropy's takes a logarithm.
            const COST_AT_EVERY_POSITION: bool = $squared_terms;

            fn n_entries(&self) -> usize {
                self.n_classes
            }

            fn gather(&self, local: &LocalSamples, samples: &[u32], node: &mut NodeTargets) {
                gather_classes(self.n_classes, local, samples, node);
            }

            #[inline(always)]
            fn entries(
                &self,
                node: &NodeTargets,
                position: usize,
                mut add: impl FnMut(usize, f64),
            ) {
                add(node.classes[position] as usize, node.weights[position]);
            }

            #[inline(always)]
            fn term<F: Float>(&self, sum: F, _weight: F) -> F {
                $name::term(sum)
            }

            #[inline(always)]
            fn cost<F: Float>(&self, weight: F, terms: F) -> F {
                $name::cost(weight, terms)
            }

            fn leaf_entries(
                &self,
                local: &LocalSamples,
                sample: usize,
                mut add: impl FnMut(usize, f64),
            ) {
                add(local.class_of[sample] as usize, local.weight_of[sample]);
            }
        }
    };
}

impl Gini {
    /// `W * Gini = W - sum_k c_k^2 / W`.
    #[inline(always)]
    fn term<F: Float>(c: F) -> F {
        c * c
    }

    #[inline(always)]
    fn cost<F: Float>(w: F, s: F) -> F {
        w - s / w
    }
}

impl Entropy {
    /// `W * H = W log2 W - sum_k c_k log2 c_k`.
    #[inline(always)]
    fn term<F: Float>(c: F) -> F {
        if c > F::ZERO {
            c * c.log2()
        } else {
            F::ZERO
        }
    }

    #[inline(always)]
    fn cost<F: Float>(w: F, s: F) -> F {
        w * w.log2() - s
    }
}

class_criterion!(Gini, true);
class_criterion!(Entropy, false);
