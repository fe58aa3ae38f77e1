//! A weighted sum's terms as columns: each a grid and an offset off the
//! rows' axis (`y`, the second-last), with a weight for each offset along
//! it. The CPU backend sums such a statement in blocks of rows that share
//! each row they load (`backend::openmp::table`), and the OpenMP tiling
//! gives 2-D ones single steps where that pays.

use super::{Access, Expr, Slot, Statement, Stencil, weighted_sum};

/// The fewest terms for which a 3-D single step sums from a table of
/// columns. On the 2-core build machine (AVX-512, 2 threads, 250^3),
/// AN5D's boxes of radius 2 to 4 (125 to 729 terms) ran 1.4x-2.2x as fast
/// by blocks of rows as summed a row at a time from a table of their
/// terms, which ran 1.0x-1.9x the marching pass (design notes, "Blocks of
/// rows from a table of columns"); boxes of fewer terms were not measured,
/// and keep the pass.
pub const TABLE_TERMS_3D: usize = 100;

/// The fewest terms for which a 2-D single step sums from a table of
/// columns. On the 2-core build machine (4000^2, 16 steps), AN5D's boxes
/// of radius 2 to 4 (25 to 81 terms) ran 1.8x-3.9x their single steps in
/// cache blocks (design notes, "Blocks of rows in 2-D").
pub const TABLE_TERMS_2D: usize = 25;

/// The fewest terms for which a `dims`-D single step sums from a table.
pub fn table_terms(dims: usize) -> usize {
    if dims == 2 {
        TABLE_TERMS_2D
    } else {
        TABLE_TERMS_3D
    }
}

/// A weighted sum's terms by column.
pub struct Columns {
    /// The axis a block's rows follow (`y`: the second-last).
    pub axis: usize,
    /// Each column's grid and its offset, 0 along `axis`.
    pub keys: Vec<(Slot, Vec<i64>)>,
    /// Each column's weights for offsets `-reach..=reach` along `axis`,
    /// `None` where the sum reads none.
    pub weights: Vec<Vec<Option<Expr>>>,
    /// The largest offset of the terms along `axis`.
    pub reach: usize,
    /// The sum's read-free constant, if any.
    pub constant: Option<Expr>,
}

impl Columns {
    /// The weights a column holds: one for each offset along the rows'
    /// axis within the reach.
    pub fn span(&self) -> usize {
        2 * self.reach + 1
    }
}

/// Statement `s`'s terms by column, where `st` has 2 axes or more and `s`
/// is a weighted sum ([`weighted_sum`]) of at least [`table_terms`] reads,
/// dense enough that at most half the table's weights are zeros (a box's
/// are none).
pub fn columns(st: &Stencil, s: &Statement) -> Option<Columns> {
    let dims = st.dims();
    if dims < 2 {
        return None;
    }
    let axis = dims - 2;
    let (terms, constant) = weighted_sum(&s.expr)?;
    let reach = reach(&terms, axis);
    let keys = keys(&terms, axis);
    if terms.len() < table_terms(dims) || !dense(&keys, reach, terms.len()) {
        return None;
    }
    let mut weights = vec![vec![None; 2 * reach + 1]; keys.len()];
    for (a, weight) in terms {
        let column = keys.iter().position(|k| *k == key(&a, axis));
        let column = column.expect("each term's column is among the keys");
        weights[column][(a.offset[axis] + reach as i64) as usize] = Some(weight);
    }
    Some(Columns {
        axis,
        keys,
        weights,
        reach,
        constant,
    })
}

/// Whether the weighted sum `expr` is dense along `axis`: grouped in
/// columns along it, its terms leave at most half of the columns' weights
/// zeros (a box's are none; a wide star's are mostly zeros). A thread or a
/// block of rows that computes several cells along `axis` loads each
/// column's values once for all of them, which pays where the columns are
/// full.
pub fn dense_along(expr: &Expr, axis: usize) -> bool {
    let Some((terms, _)) = weighted_sum(expr) else {
        return false;
    };
    dense(&keys(&terms, axis), reach(&terms, axis), terms.len())
}

/// Whether the weighted sum `expr` fills its columns along `axis`: every
/// column reads every offset within the sum's reach along it (a box does;
/// a diamond, such as a Laplacian of a Laplacian, and a star do not).
pub fn full_along(expr: &Expr, axis: usize) -> bool {
    let Some((terms, _)) = weighted_sum(expr) else {
        return false;
    };
    keys(&terms, axis).len() * (2 * reach(&terms, axis) + 1) == terms.len()
}

/// The farthest `terms` reach along `axis` (0 without terms).
fn reach(terms: &[(Access, Expr)], axis: usize) -> usize {
    terms
        .iter()
        .map(|(a, _)| a.offset[axis].unsigned_abs() as usize)
        .max()
        .unwrap_or(0)
}

/// Whether `terms` in the columns `keys`, `reach` along their axis, leave
/// at most half the columns' weights zeros.
fn dense(keys: &[(Slot, Vec<i64>)], reach: usize, terms: usize) -> bool {
    keys.len() * (2 * reach + 1) <= 2 * terms
}

/// The distinct columns of `terms` along `axis`, in the order of their
/// first term.
fn keys(terms: &[(Access, Expr)], axis: usize) -> Vec<(Slot, Vec<i64>)> {
    let mut keys = Vec::new();
    for (a, _) in terms {
        if !keys.contains(&key(a, axis)) {
            keys.push(key(a, axis));
        }
    }
    keys
}

/// A term's column: its grid and its offset with 0 along `axis`.
fn key(a: &Access, axis: usize) -> (Slot, Vec<i64>) {
    let mut offset = a.offset.clone();
    offset[axis] = 0;
    (a.slot, offset)
}
