//! Where a rank's cells lie: the process grid, each rank's owned cells and
//! its box (owned cells and halo), and its neighbours.

use super::DistributedError;

/// How a grid of `global` cells is split over a process grid of `dims`
/// (slowest axis first, as the grid's axes), seen from one rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Processes along each axis.
    pub dims: Vec<usize>,
    /// This rank's position in the process grid.
    pub coords: Vec<usize>,
    /// The global grid's extents.
    pub global: Vec<usize>,
    /// Per axis, the global range `[start, end)` of the cells this rank owns.
    pub owned: Vec<[usize; 2]>,
    /// Per axis, the halo `[low, high]` of this rank's box: `halo` cells by
    /// a side that faces another rank, none by the grid's edge.
    pub halo: Vec<[usize; 2]>,
    /// Whether the grid wraps: the ranks at its edges face each other, and
    /// an axis of one rank, which wraps onto itself, has no halo.
    pub periodic: bool,
}

impl Layout {
    /// The layout of rank `rank` (row-major in the process grid) of a grid
    /// of `global` cells over `dims` processes, with halos of `halo[a]`
    /// cells along axis `a`, on a `periodic` grid or one with edges. With
    /// `weights` (one per rank, in rank order) the cells along each split
    /// axis go to its slabs of ranks in proportion to their weights'
    /// sums; else evenly. Each rank must own at least a halo's width along
    /// every split axis, so that its neighbours' halos come from it; every
    /// rank finds the same error where one would not.
    pub fn new(
        global: &[usize],
        dims: &[usize],
        rank: usize,
        halo: &[usize],
        periodic: bool,
        weights: Option<&[f64]>,
    ) -> Result<Self, DistributedError> {
        let coords = coords(rank, dims);
        let mut owned = Vec::with_capacity(global.len());
        let mut halos = Vec::with_capacity(global.len());
        for a in 0..global.len() {
            let (n, p, c) = (global[a], dims[a], coords[a]);
            let parts = parts(n, p, weights.map(|w| axis_weights(w, dims, a)));
            if p > 1 && parts.iter().any(|[s, e]| e - s < halo[a]) {
                return Err(DistributedError::TooSmall {
                    axis: a,
                    extent: n,
                    processes: p,
                    halo: halo[a],
                });
            }
            owned.push(parts[c]);
            let facing = |inside: bool| {
                if inside || (periodic && p > 1) {
                    halo[a]
                } else {
                    0
                }
            };
            halos.push([facing(c > 0), facing(c + 1 < p)]);
        }
        Ok(Layout {
            dims: dims.to_vec(),
            coords,
            global: global.to_vec(),
            owned,
            halo: halos,
            periodic,
        })
    }

    /// Extents of this rank's box: its owned cells and their halo.
    pub fn local_shape(&self) -> Vec<usize> {
        (0..self.global.len())
            .map(|a| self.owned[a][1] - self.owned[a][0] + self.halo[a][0] + self.halo[a][1])
            .collect()
    }

    /// How many cells this rank owns.
    pub fn owned_cells(&self) -> usize {
        self.owned.iter().map(|[s, e]| e - s).product()
    }

    /// Per axis, where this rank's owned cells lie in its box.
    pub fn owned_in_box(&self) -> Vec<[usize; 2]> {
        (0..self.global.len())
            .map(|a| {
                let lo = self.halo[a][0];
                [lo, lo + self.owned[a][1] - self.owned[a][0]]
            })
            .collect()
    }

    /// The rank whose cells this one's halo along axis `a` on side `side`
    /// (0 low, 1 high) holds, if it has a halo there.
    pub fn neighbour(&self, a: usize, side: usize) -> Option<usize> {
        if self.halo[a][side] == 0 {
            return None;
        }
        let (mut c, p) = (self.coords.clone(), self.dims[a]);
        c[a] = if side == 0 {
            (c[a] + p - 1) % p
        } else {
            (c[a] + 1) % p
        };
        Some(rank_of(&c, &self.dims))
    }
}

/// The process grid for `size` ranks over a grid of `global` cells: of the
/// factorizations of `size` into one factor per axis, the one with the
/// fewest cells on the planes between ranks (what the halo exchanges move),
/// ties to the fewer splits of the faster axes (longer contiguous rows to
/// pack).
pub fn auto_dims(global: &[usize], size: usize) -> Vec<usize> {
    let mut best: Option<(usize, Vec<usize>)> = None;
    for dims in factorizations(size, global.len()) {
        let planes: usize = (0..global.len())
            .map(|a| {
                let plane: usize = (0..global.len())
                    .filter(|&b| b != a)
                    .map(|b| global[b])
                    .product();
                (dims[a] - 1) * plane
            })
            .sum();
        if best.as_ref().is_none_or(|(p, _)| planes <= *p) {
            best = Some((planes, dims));
        }
    }
    best.map_or_else(|| vec![1; global.len()], |(_, d)| d)
}

/// Every process grid of `size` ranks over `axes` axes: each way to write
/// `size` as an ordered product of `axes` factors, the slowest axis's
/// factor varying slowest.
pub fn factorizations(size: usize, axes: usize) -> Vec<Vec<usize>> {
    if axes == 1 {
        return vec![vec![size]];
    }
    (1..=size)
        .filter(|f| size % f == 0)
        .flat_map(|f| {
            factorizations(size / f, axes - 1)
                .into_iter()
                .map(move |mut rest| {
                    rest.insert(0, f);
                    rest
                })
        })
        .collect()
}

/// The cells `[start, end)` each of `p` parts owns of `n`: in proportion
/// to `weights` (boundaries at the rounded shares of the running sums), or
/// evenly, the first `n % p` parts a cell more.
fn parts(n: usize, p: usize, weights: Option<Vec<f64>>) -> Vec<[usize; 2]> {
    match weights {
        Some(w) => {
            let total: f64 = w.iter().sum();
            let mut sum = 0.0;
            let mut cuts = vec![0];
            for x in &w {
                sum += x;
                cuts.push(((n as f64 * sum / total).round() as usize).min(n));
            }
            cuts.windows(2).map(|c| [c[0], c[1]]).collect()
        }
        None => (0..p)
            .map(|c| {
                let (base, extra) = (n / p, n % p);
                let start = c * base + c.min(extra);
                [start, start + base + usize::from(c < extra)]
            })
            .collect(),
    }
}

/// Per coordinate along axis `a` of a process grid of `dims`, the sum of
/// the weights of its ranks.
fn axis_weights(weights: &[f64], dims: &[usize], a: usize) -> Vec<f64> {
    let mut sums = vec![0.0; dims[a]];
    for (rank, w) in weights.iter().enumerate() {
        sums[coords(rank, dims)[a]] += w;
    }
    sums
}

/// Row-major coordinates of `rank` in a process grid of `dims`.
fn coords(mut rank: usize, dims: &[usize]) -> Vec<usize> {
    let mut c = vec![0; dims.len()];
    for a in (0..dims.len()).rev() {
        c[a] = rank % dims[a];
        rank /= dims[a];
    }
    c
}

/// The rank at `coords` of a process grid of `dims`, row-major.
fn rank_of(coords: &[usize], dims: &[usize]) -> usize {
    coords.iter().zip(dims).fold(0, |r, (&c, &d)| r * d + c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_cover_the_axis_once_the_first_ones_a_cell_longer() {
        assert_eq!(parts(11, 4, None), vec![[0, 3], [3, 6], [6, 9], [9, 11]]);
        let weighted = parts(12, 3, Some(vec![1.0, 2.0, 3.0]));
        assert_eq!(weighted, vec![[0, 2], [2, 6], [6, 12]]);
        assert_eq!(
            axis_weights(&[1.0, 2.0, 3.0, 4.0], &[2, 2], 0),
            vec![3.0, 7.0]
        );
    }

    #[test]
    fn boxes_have_halos_only_where_they_face_another_rank() {
        let l = Layout::new(&[10, 7], &[2, 1], 1, &[2, 2], false, None).unwrap();
        assert_eq!(l.coords, vec![1, 0]);
        assert_eq!(l.owned, vec![[5, 10], [0, 7]]);
        assert_eq!(l.halo, vec![[2, 0], [0, 0]]);
        assert_eq!(l.local_shape(), vec![7, 7]);
        assert_eq!(l.owned_in_box(), vec![[2, 7], [0, 7]]);
        assert_eq!((l.neighbour(0, 0), l.neighbour(0, 1)), (Some(0), None));
        let err = Layout::new(&[5, 7], &[3, 1], 0, &[2, 2], false, None).unwrap_err();
        assert!(matches!(err, DistributedError::TooSmall { axis: 0, .. }));
    }

    #[test]
    fn weights_split_each_axis_by_its_slabs_of_ranks() {
        let l = Layout::new(&[12, 5], &[3, 1], 2, &[1, 1], false, Some(&[1.0, 2.0, 3.0])).unwrap();
        assert_eq!(l.owned, vec![[6, 12], [0, 5]]);
        assert_eq!(l.owned_cells(), 30);
        let thin = Layout::new(&[12, 5], &[3, 1], 0, &[3, 1], false, Some(&[1.0, 2.0, 3.0]));
        assert!(matches!(
            thin,
            Err(DistributedError::TooSmall { axis: 0, .. })
        ));
    }

    #[test]
    fn periodic_boxes_face_across_the_edge_but_not_themselves() {
        let l = Layout::new(&[10, 7], &[3, 1], 0, &[2, 2], true, None).unwrap();
        assert_eq!(l.halo, vec![[2, 2], [0, 0]]);
        assert_eq!((l.neighbour(0, 0), l.neighbour(0, 1)), (Some(2), Some(1)));
        assert_eq!((l.neighbour(1, 0), l.neighbour(1, 1)), (None, None));
    }

    #[test]
    fn auto_dims_split_the_long_axes() {
        assert_eq!(auto_dims(&[100, 100], 4), vec![2, 2]);
        assert_eq!(auto_dims(&[1000, 10], 4), vec![4, 1]);
        assert_eq!(auto_dims(&[64, 64, 64], 6), vec![3, 2, 1]);
        assert_eq!(auto_dims(&[17], 3), vec![3]);
        assert_eq!(factorizations(6, 2).len(), 4);
    }
}
