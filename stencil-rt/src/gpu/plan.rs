//! What a GPU module says of its compiled plan ([`GpuTiling`]) and how its
//! sessions run launches of several steps ([`Fusion`], [`Measurement`]).

use std::time::Duration;

/// Tiling compiled into a stencil's GPU kernels (each GPU module's `TILING`;
/// the module's doc says the same in words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GpuTiling {
    /// `naive`, `tiled`, `stream`, `tensor`, `temporal` or `persistent`.
    pub strategy: &'static str,
    /// Threads per block per axis, in axis order.
    pub block: &'static [usize],
    /// Cells of the slowest axis each block marches through (`stream`,
    /// `tensor`, `temporal`; 1 otherwise).
    pub chunk: usize,
    /// Cells of the slowest axis a `stream` thread computes per iteration,
    /// of the middle axis a 3-D `temporal` thread computes, or of the
    /// slowest axis a `naive` thread computes (1 otherwise).
    pub coarsen: usize,
    /// Cells of the contiguous axis a `stream` thread computes as one
    /// vector, or a `temporal` lane computes (1 otherwise).
    pub vector: usize,
    /// Steps fused per launch (`temporal`, `persistent`; 1 otherwise).
    pub time_block: usize,
    /// The most blocks per multiprocessor a `persistent` launch keeps
    /// resident (`None`: as many as fit, and for the other strategies).
    pub occupancy: Option<usize>,
    /// `auto`'s choice of `tensor`, or of `stream` of 16-byte vectors
    /// marching 64 planes: grids of small planes (where such blocks would
    /// compute too little) run `stream` in 16-byte vectors of blocks of
    /// [1, 2, 64] threads marching 4 planes (false for the other plans).
    pub small_grids: bool,
    /// `auto`'s choice of another strategy than `naive`: single steps on
    /// small grids (few cells per multiprocessor) run `naive`'s kernel.
    pub small_steps: bool,
}

/// How a GPU session runs launches of several steps where its plan fuses
/// them (`temporal` of several steps a launch, `persistent`):
/// `Session::fusion`, `Session::set_fusion`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fusion {
    /// Time a fused launch against as many launches of the single-step
    /// kernel on the session's grids, once, then keep the faster (the
    /// default where `auto` chose the fused strategy): on small grids single
    /// steps can win.
    Measure,
    /// Fused launches (the default where the spec names the strategy).
    Fused,
    /// One step a launch, through the single-step kernel (the only way of
    /// plans that do not fuse).
    Single,
}

/// What a session's measurement (`Fusion::Measure`) timed, on its grids: the
/// fastest part of each way, every part `steps` steps from an idle device to
/// an idle device (`Session::measurement`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measurement {
    /// The steps each timed part ran: a fused launch's, or as many as a
    /// whole graph of such launches runs where the session timed graphs.
    pub steps: u64,
    /// The fastest part of fused launches.
    pub fused: Duration,
    /// The fastest part of launches of one step.
    pub single: Duration,
}

impl Measurement {
    /// The way the session keeps: single steps where their part took less
    /// than 98% of the fused launches' part, else fused launches.
    pub fn faster(&self) -> Fusion {
        if self.single.as_nanos() * 50 < self.fused.as_nanos() * 49 {
            Fusion::Single
        } else {
            Fusion::Fused
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_steps_win_only_by_more_than_two_percent() {
        let at = |single| Measurement {
            steps: 4,
            fused: Duration::from_micros(1000),
            single: Duration::from_micros(single),
        };
        assert_eq!(at(979).faster(), Fusion::Single);
        assert_eq!(at(980).faster(), Fusion::Fused);
        assert_eq!(at(1500).faster(), Fusion::Fused);
    }
}
