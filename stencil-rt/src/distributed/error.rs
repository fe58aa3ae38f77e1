//! Why a distributed session could not be made or run.

use std::fmt;

use crate::StencilError;

/// Why a distributed session could not be made or run; nothing changed.
#[derive(Debug)]
pub enum DistributedError {
    /// The stencil's boundary or regions are not split yet.
    Unsupported {
        /// The stencil.
        stencil: &'static str,
        /// What it has that a session cannot split.
        why: String,
    },
    /// The process grid does not match the communicator or the axes.
    Dims {
        /// The process grid asked.
        dims: Vec<usize>,
        /// Ranks in the communicator.
        size: usize,
        /// Axes of the stencil.
        axes: usize,
    },
    /// A rank would own fewer cells along an axis than a halo's width, or
    /// hold a box smaller than the stencil's smallest shape.
    TooSmall {
        /// The axis.
        axis: usize,
        /// The global extent.
        extent: usize,
        /// Processes along it.
        processes: usize,
        /// Cells a rank must own or hold along it.
        halo: usize,
    },
    /// `steps_per_exchange` is 0.
    NoSteps,
    /// The wrong number of grids or params, or a grid of the wrong length.
    Arguments {
        /// What was wrong.
        what: String,
    },
    /// The stencil's own error from a rank's box.
    Stencil(StencilError),
}

impl fmt::Display for DistributedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Unsupported { stencil, why } => {
                write!(f, "`{stencil}` cannot be split over ranks yet: {why}")
            }
            Self::Dims { dims, size, axes } => write!(
                f,
                "a process grid of {dims:?} does not fit {size} ranks over {axes} axes"
            ),
            Self::TooSmall {
                axis,
                extent,
                processes,
                halo,
            } => write!(
                f,
                "axis {axis}: {extent} cells over {processes} ranks leaves a rank fewer than the {halo} it must hold; use fewer ranks along it or fewer steps a exchange"
            ),
            Self::NoSteps => write!(f, "steps_per_exchange must be at least 1"),
            Self::Arguments { what } => write!(f, "{what}"),
            Self::Stencil(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for DistributedError {}

impl From<StencilError> for DistributedError {
    fn from(e: StencilError) -> Self {
        Self::Stencil(e)
    }
}
