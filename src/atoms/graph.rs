use serde::{Deserialize, Serialize};

use super::{AtomSampler, AtomSet};
use crate::error::{invalid, Result};
use crate::rng::Rng;

/// Which features may share an atom (seed 003, section 3.2 and Fig. 1): one node per
/// feature, and an edge between two features lets an atom hold both. No edges gives a
/// random forest's atoms; a grid over an image's pixels gives patches.
///
/// Stored as adjacency lists (compressed rows); edges are undirected.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingGraph {
    /// Node `v`'s neighbours are `neighbours[offsets[v]..offsets[v + 1]]`.
    offsets: Vec<usize>,
    neighbours: Vec<u32>,
}

impl SamplingGraph {
    /// The graph on `n_nodes` nodes with the given edges, each undirected (either
    /// direction, or both, may be listed). Self-loops and repeated edges are dropped.
    pub fn from_edges(n_nodes: usize, edges: &[(u32, u32)]) -> Result<Self> {
        if n_nodes == 0 || n_nodes > u32::MAX as usize {
            return Err(invalid(
                "graph",
                format!("needs 1 to 2^32 - 1 nodes, got {n_nodes}"),
            ));
        }
        if let Some(&(a, b)) = edges
            .iter()
            .find(|&&(a, b)| a as usize >= n_nodes || b as usize >= n_nodes)
        {
            return Err(invalid(
                "graph",
                format!("edge ({a}, {b}) names a node outside 0..{n_nodes}"),
            ));
        }
        let mut degrees = vec![0usize; n_nodes + 1];
        for &(a, b) in edges.iter().filter(|(a, b)| a != b) {
            degrees[a as usize + 1] += 1;
            degrees[b as usize + 1] += 1;
        }
        for v in 0..n_nodes {
            degrees[v + 1] += degrees[v];
        }
        let mut fill = degrees.clone();
        let mut neighbours = vec![0u32; degrees[n_nodes]];
        for &(a, b) in edges.iter().filter(|(a, b)| a != b) {
            for (from, to) in [(a, b), (b, a)] {
                neighbours[fill[from as usize]] = to;
                fill[from as usize] += 1;
            }
        }
        // Sorted and deduplicated per node, then packed.
        let mut offsets = Vec::with_capacity(n_nodes + 1);
        offsets.push(0);
        let mut packed = Vec::with_capacity(neighbours.len());
        for v in 0..n_nodes {
            let list = &mut neighbours[degrees[v]..degrees[v + 1]];
            list.sort_unstable();
            let start = packed.len();
            for &u in list.iter() {
                if packed.len() == start || packed.last() != Some(&u) {
                    packed.push(u);
                }
            }
            offsets.push(packed.len());
        }
        Ok(SamplingGraph {
            offsets,
            neighbours: packed,
        })
    }

    /// Number of nodes.
    pub fn n_nodes(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Number of (undirected) edges.
    pub fn n_edges(&self) -> usize {
        self.neighbours.len() / 2
    }

    /// The neighbours of `node`, ascending.
    pub fn neighbours(&self, node: u32) -> &[u32] {
        &self.neighbours[self.offsets[node as usize]..self.offsets[node as usize + 1]]
    }

    /// Checks the adjacency lists (which deserialising does not): offsets ascending
    /// within the lists, neighbours within the nodes.
    fn check(&self) -> Result<()> {
        let n_nodes = self.offsets.len().saturating_sub(1);
        let consistent = n_nodes > 0
            && self.offsets[0] == 0
            && self.offsets.windows(2).all(|w| w[0] <= w[1])
            && self.offsets[n_nodes] == self.neighbours.len()
            && self.neighbours.iter().all(|&u| (u as usize) < n_nodes);
        if consistent {
            Ok(())
        } else {
            Err(invalid("graph", "damaged adjacency lists"))
        }
    }
}

/// Atoms over a [`SamplingGraph`]: a random feature and a connected neighbourhood of
/// it whose size is uniform in `[min_size, max_size]` (smaller where the feature's
/// component is), weights +1.
///
/// The neighbourhood is grown breadth first: all features within `h` edges, then a
/// uniformly random part of those at `h + 1` to reach the size. On a cycle this gives
/// the runs of wrapping 1-D patches; on a torus whose cells touch their eight
/// neighbours, sizes `(2r + 1)^2` give the squares of wrapping 2-D patches.
///
/// `signed` atoms grow half of the size (rounded up) with weight +1 as above, then the
/// rest with weight -1 from a random feature next to that first part, avoiding it:
/// two adjacent regions of opposite sign, as signed patches are on a grid.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GraphAtoms {
    /// The graph; one node per feature.
    pub graph: SamplingGraph,
    /// Fewest features in an atom (at least 1).
    pub min_size: usize,
    /// Most features in an atom.
    pub max_size: usize,
    /// Two adjacent regions weighted +1 and -1 instead of one weighted +1.
    pub signed: bool,
}

impl GraphAtoms {
    /// The largest weight magnitude and the weights' spread.
    pub(super) fn weight_bounds(&self) -> (u32, u32) {
        (1, if self.signed { 2 } else { 1 })
    }

    pub(crate) fn validate(&self, n_features: usize) -> Result<()> {
        self.graph.check()?;
        if self.graph.n_nodes() != n_features {
            return Err(invalid(
                "graph",
                format!(
                    "has {} nodes but X has {n_features} features; give one node per \
                     feature",
                    self.graph.n_nodes()
                ),
            ));
        }
        if self.min_size == 0 || self.min_size > self.max_size || self.max_size > n_features {
            return Err(invalid(
                "min_size",
                format!(
                    "atom sizes need 1 <= min_size <= max_size <= n_features ({n_features}), \
                     got min_size {} and max_size {}",
                    self.min_size, self.max_size
                ),
            ));
        }
        Ok(())
    }
}

/// Draws [`GraphAtoms`].
pub struct GraphSampler<'a> {
    atoms: &'a GraphAtoms,
    /// Per node, the generation that last took it; `generation` is the current one.
    taken: Vec<u32>,
    generation: u32,
    layer: Vec<u32>,
    next_layer: Vec<u32>,
    members: Vec<(u32, f32)>,
}

impl<'a> GraphSampler<'a> {
    /// A sampler for validated `atoms`.
    pub fn new(atoms: &'a GraphAtoms) -> Self {
        GraphSampler {
            taken: vec![0; atoms.graph.n_nodes()],
            generation: 0,
            atoms,
            layer: Vec::new(),
            next_layer: Vec::new(),
            members: Vec::new(),
        }
    }

    /// Starts an atom: no node is taken.
    fn next_generation(&mut self) {
        if self.generation == u32::MAX {
            self.taken.fill(0);
            self.generation = 0;
        }
        self.generation += 1;
    }

    fn is_taken(&self, node: u32) -> bool {
        self.taken[node as usize] == self.generation
    }

    /// Adds up to `size` untaken nodes around `start`, breadth first, with `weight`.
    fn grow(&mut self, rng: &mut Rng, start: u32, size: usize, weight: f32) {
        let atoms = self.atoms;
        let graph = &atoms.graph;
        self.taken[start as usize] = self.generation;
        self.members.push((start, weight));
        let mut grown = 1;
        self.layer.clear();
        self.layer.push(start);
        while grown < size {
            self.next_layer.clear();
            for &node in &self.layer {
                for &neighbour in graph.neighbours(node) {
                    if self.taken[neighbour as usize] != self.generation {
                        self.taken[neighbour as usize] = self.generation;
                        self.next_layer.push(neighbour);
                    }
                }
            }
            if self.next_layer.is_empty() {
                break; // the whole component is in
            }
            let wanted = size - grown;
            if self.next_layer.len() > wanted {
                rng.choose_into_prefix(&mut self.next_layer, wanted);
                for &left_out in &self.next_layer[wanted..] {
                    self.taken[left_out as usize] = 0;
                }
                self.next_layer.truncate(wanted);
            }
            self.members
                .extend(self.next_layer.iter().map(|&node| (node, weight)));
            grown += self.next_layer.len();
            std::mem::swap(&mut self.layer, &mut self.next_layer);
        }
    }

    /// A random untaken neighbour of the atom's members, if any.
    fn random_frontier_node(&mut self, rng: &mut Rng) -> Option<u32> {
        let atoms = self.atoms;
        let graph = &atoms.graph;
        self.layer.clear();
        for &(node, _) in &self.members {
            for &neighbour in graph.neighbours(node) {
                if self.taken[neighbour as usize] != self.generation {
                    self.taken[neighbour as usize] = self.generation;
                    self.layer.push(neighbour);
                }
            }
        }
        for &node in &self.layer {
            self.taken[node as usize] = 0;
        }
        (!self.layer.is_empty()).then(|| self.layer[rng.below(self.layer.len())])
    }
}

impl AtomSampler for GraphSampler<'_> {
    fn append_atoms(&mut self, rng: &mut Rng, n_atoms: usize, out: &mut AtomSet) {
        let atoms = self.atoms;
        for _ in 0..n_atoms {
            self.next_generation();
            self.members.clear();
            let start = rng.below(atoms.graph.n_nodes()) as u32;
            let size = rng.between(atoms.min_size as i64, atoms.max_size as i64) as usize;
            if atoms.signed {
                let positive = size.div_ceil(2);
                self.grow(rng, start, positive, 1.0);
                if size > positive {
                    if let Some(next_to) = self.random_frontier_node(rng) {
                        debug_assert!(!self.is_taken(next_to));
                        self.grow(rng, next_to, size - positive, -1.0);
                    }
                }
            } else {
                self.grow(rng, start, size, 1.0);
            }
            out.push_pairs(&mut self.members);
        }
    }
}
