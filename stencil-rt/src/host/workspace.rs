//! [`Workspace`]: the scratch grids of the CPU backends' runs, kept between
//! calls so that a run allocates nothing.

/// The scratch grids a CPU run needs (a level for each state field, each
/// temporary), kept between calls: a stencil's `run_in` takes one, so that
/// calls of the same shape allocate nothing (`run` makes a new one each
/// call). One workspace serves any stencil and shape; it grows to the
/// largest it has served.
#[derive(Clone, Debug, Default)]
pub struct Workspace<T> {
    grids: Vec<Vec<T>>,
}

impl<T: Copy + Default + Send + Sync> Workspace<T> {
    /// An empty workspace: the first run allocates its grids.
    pub fn new() -> Self {
        Workspace { grids: Vec::new() }
    }

    /// `N` grids of `cells` values each, distinct, allocated where this
    /// workspace holds fewer or smaller ones. Their values are what the last
    /// run left: the caller fills them.
    pub fn grids<const N: usize>(&mut self, cells: usize) -> [&mut [T]; N] {
        if self.grids.len() < N {
            self.grids.resize_with(N, Vec::new);
        }
        let mut grids = self.grids.iter_mut();
        std::array::from_fn(|_| {
            let grid = grids.next().expect("the workspace holds N grids");
            super::parallel::resize(grid, cells, T::default());
            &mut grid[..cells]
        })
    }

    /// The values the workspace holds, over all its grids: what it keeps
    /// allocated between runs.
    pub fn len(&self) -> usize {
        self.grids.iter().map(Vec::len).sum()
    }

    /// Whether the workspace holds no value.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_reused_and_grow_to_the_largest_shape() {
        let mut work = Workspace::<f64>::new();
        let [a, b] = work.grids::<2>(6);
        a.fill(1.0);
        b.fill(2.0);
        let first = work.grids[0].as_ptr();
        assert_eq!(work.len(), 12);
        // A smaller run reuses the grids, and sees what the last one left.
        let [a] = work.grids::<1>(4);
        assert_eq!(a, [1.0; 4]);
        assert_eq!(work.grids[0].as_ptr(), first);
        assert_eq!(work.len(), 4 + 6);
        let [_, _, c] = work.grids::<3>(8);
        assert_eq!(c.len(), 8);
        assert_eq!(work.len(), 24);
    }
}
