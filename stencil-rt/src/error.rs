//! [`StencilError`], what every generated function returns on failure.

use std::fmt;

/// An error from a generated stencil function. Nothing is written to the
/// caller's grids when one is returned.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum StencilError {
    /// An extent of the shape is smaller than the stencil allows (`2 * RADIUS + 1`).
    ShapeTooSmall {
        /// The stencil.
        stencil: &'static str,
        /// The axis.
        axis: &'static str,
        /// The extent given.
        extent: usize,
        /// The smallest legal extent.
        min: usize,
    },
    /// The shape's cell count does not fit in memory addresses.
    ShapeOverflow {
        /// The stencil.
        stencil: &'static str,
    },
    /// A generic entry point (`run_grids`) got the wrong number of axes, grids or params.
    ArgumentCount {
        /// The stencil.
        stencil: &'static str,
        /// `"axes"`, `"grids"` or `"params"`.
        what: &'static str,
        /// How many the stencil takes.
        expected: usize,
        /// How many were given.
        actual: usize,
    },
    /// The GPU runtime reported an error.
    Device {
        /// The stencil (empty for calls not tied to one).
        stencil: &'static str,
        /// `cuda` or `hip`.
        backend: &'static str,
        /// The call that failed: a kernel (`update_<field>`) or a runtime call.
        call: &'static str,
        /// The runtime's message.
        message: String,
    },
    /// An array's shape differs from the first array's (`run_arrays`).
    ShapeMismatch {
        /// The stencil.
        stencil: &'static str,
        /// The argument.
        field: &'static str,
        /// The first array's shape.
        expected: Vec<usize>,
        /// This array's.
        actual: Vec<usize>,
    },
    /// An array is not in standard layout (row-major and contiguous, as
    /// `Array::from_shape_vec` makes): a transposed view or a slice with
    /// steps (`run_arrays`).
    NotContiguous {
        /// The stencil.
        stencil: &'static str,
        /// The argument.
        field: &'static str,
    },
    /// A session was asked for a plan its module does not carry
    /// (`Session::with_plan`).
    NoSuchPlan {
        /// The stencil.
        stencil: &'static str,
        /// The plan asked for, an index into the module's `PLANS`.
        plan: usize,
        /// How many plans the module carries.
        plans: usize,
    },
    /// A grid's length differs from the shape's cell count.
    LengthMismatch {
        /// The stencil.
        stencil: &'static str,
        /// The argument.
        field: &'static str,
        /// The shape's cell count.
        expected: usize,
        /// The slice's length.
        actual: usize,
    },
}

impl fmt::Display for StencilError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            StencilError::ShapeTooSmall {
                stencil,
                axis,
                extent,
                min,
            } => write!(
                f,
                "{stencil}: axis `{axis}` has {extent} cells but the stencil needs at least {min}"
            ),
            StencilError::ShapeOverflow { stencil } => {
                write!(f, "{stencil}: the shape has more cells than fit in memory")
            }
            StencilError::Device {
                stencil,
                backend,
                call,
                message,
            } => write!(f, "{stencil}: {backend} `{call}` failed: {message}"),
            StencilError::ArgumentCount {
                stencil,
                what,
                expected,
                actual,
            } => write!(f, "{stencil}: takes {expected} {what}, got {actual}"),
            StencilError::ShapeMismatch {
                stencil,
                field,
                expected,
                actual,
            } => write!(
                f,
                "{stencil}: `{field}` has shape {actual:?} but the first grid has {expected:?}"
            ),
            StencilError::NotContiguous { stencil, field } => write!(
                f,
                "{stencil}: `{field}` is not in standard layout (row-major, contiguous): pass `.as_standard_layout()` of it, or a copy"
            ),
            StencilError::NoSuchPlan {
                stencil,
                plan,
                plans,
            } => write!(
                f,
                "{stencil}: no plan {plan}: the module carries {plans} (see its `PLANS`)"
            ),
            StencilError::LengthMismatch {
                stencil,
                field,
                expected,
                actual,
            } => write!(
                f,
                "{stencil}: `{field}` has {actual} elements but the shape has {expected} cells"
            ),
        }
    }
}

impl std::error::Error for StencilError {}
