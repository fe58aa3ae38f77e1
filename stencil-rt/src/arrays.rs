//! What the generated `run_arrays` calls (feature `ndarray`): the shape of
//! a stencil's first array, the same shape checked for the others, and each
//! array's elements as the slice the slice API takes.

use ndarray::{ArrayBase, Data, DataMut, Dimension};

use crate::StencilError;

/// The shape of array `field` as the stencil's `[usize; N]`.
pub fn shape<S: Data, D: Dimension, const N: usize>(array: &ArrayBase<S, D>) -> [usize; N] {
    let dims = array.shape();
    std::array::from_fn(|a| dims[a])
}

/// Checks that array `field` has `shape` (that of the stencil's first array).
pub fn check_shape<S: Data, D: Dimension>(
    stencil: &'static str,
    field: &'static str,
    shape: &[usize],
    array: &ArrayBase<S, D>,
) -> Result<(), StencilError> {
    if array.shape() == shape {
        return Ok(());
    }
    Err(StencilError::ShapeMismatch {
        stencil,
        field,
        expected: shape.to_vec(),
        actual: array.shape().to_vec(),
    })
}

/// The elements of array `field`, in standard layout, to read.
pub fn slice<'a, S: Data, D: Dimension>(
    stencil: &'static str,
    field: &'static str,
    array: &'a ArrayBase<S, D>,
) -> Result<&'a [S::Elem], StencilError> {
    array
        .as_slice()
        .ok_or(StencilError::NotContiguous { stencil, field })
}

/// The elements of array `field`, in standard layout, to update in place.
pub fn slice_mut<'a, S: DataMut, D: Dimension>(
    stencil: &'static str,
    field: &'static str,
    array: &'a mut ArrayBase<S, D>,
) -> Result<&'a mut [S::Elem], StencilError> {
    array
        .as_slice_mut()
        .ok_or(StencilError::NotContiguous { stencil, field })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::Array2;

    #[test]
    fn standard_arrays_are_slices_and_others_errors() {
        let mut a = Array2::<f64>::zeros((3, 4));
        assert_eq!(shape::<_, _, 2>(&a), [3, 4]);
        assert_eq!(slice_mut("s", "u", &mut a).unwrap().len(), 12);
        let t = a.t();
        assert_eq!(
            slice("s", "u", &t),
            Err(StencilError::NotContiguous {
                stencil: "s",
                field: "u"
            })
        );
        let b = Array2::<f64>::zeros((4, 3));
        let err = check_shape("s", "k", &[3, 4], &b).unwrap_err();
        assert_eq!(
            err.to_string(),
            "s: `k` has shape [4, 3] but the first grid has [3, 4]"
        );
    }
}
