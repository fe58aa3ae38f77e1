//! Linear indices as text, in the spelling every generator shares: `i<a>`
//! the coordinate along axis `a`, `s<a>` its stride (the last axis has
//! stride 1), `c` the cell's own index.

/// `i0 * s0 + i1 * s1 + i2` for `dims` axes.
pub fn linear_index(dims: usize) -> String {
    let mut terms: Vec<String> = (0..dims - 1).map(|a| format!("i{a} * s{a}")).collect();
    terms.push(format!("i{}", dims - 1));
    terms.join(" + ")
}

/// `i0 * s0 + wrap(i1 + 1) * s1 + i2`: the linear index of a read at
/// `offset` with each shifted coordinate spelled by `wrap(axis, d)`.
pub fn wrapped_index(offset: &[i64], wrap: impl Fn(usize, i64) -> String) -> String {
    let coord = |ax: usize| match offset[ax] {
        0 => format!("i{ax}"),
        d => wrap(ax, d),
    };
    let last = offset.len() - 1;
    let mut terms: Vec<String> = (0..last)
        .map(|ax| format!("{} * s{ax}", coord(ax)))
        .collect();
    terms.push(coord(last));
    terms.join(" + ")
}

/// `c - s0 + 2`: the linear index of a read at `offset` from cell `c`, for
/// languages where `s<a>` is the stride of axis `a` (the last axis has stride 1).
pub fn offset_index(offset: &[i64]) -> String {
    let mut text = String::from("c");
    for (sign, term) in offset_terms(offset) {
        text.push_str(&format!(" {sign} {term}"));
    }
    text
}

/// `-s0 + 2`: [`offset_index`] without the cell, the offset alone (`0`
/// where it is the cell).
pub fn offset_delta(offset: &[i64]) -> String {
    let mut text = String::new();
    for (sign, term) in offset_terms(offset) {
        text.push_str(&match (text.is_empty(), sign) {
            (true, '-') => format!("-{term}"),
            (true, _) => term,
            (false, _) => format!(" {sign} {term}"),
        });
    }
    if text.is_empty() {
        "0".to_string()
    } else {
        text
    }
}

/// The signed terms of a read's offset along each axis where it is not 0:
/// `('-', "s0")`, `('+', "2")`.
fn offset_terms(offset: &[i64]) -> impl Iterator<Item = (char, String)> + '_ {
    let last = offset.len() - 1;
    offset
        .iter()
        .enumerate()
        .filter(|&(_, &d)| d != 0)
        .map(move |(a, &d)| {
            let sign = if d < 0 { '-' } else { '+' };
            let term = match (a == last, d.unsigned_abs()) {
                (true, m) => m.to_string(),
                (false, 1) => format!("s{a}"),
                (false, m) => format!("{m} * s{a}"),
            };
            (sign, term)
        })
}

/// `i<ax> + d` or `i<ax> - |d|` (`d` not 0).
pub fn shifted(ax: usize, d: i64) -> String {
    format!("i{ax} {} {}", if d < 0 { '-' } else { '+' }, d.abs())
}

/// How a language spells the pieces of a read past a mixed boundary
/// ([`remapped_read`]).
pub trait Remap {
    /// Coordinate `i<ax> + d` wrapped onto the grid (a periodic axis).
    fn wrap(&self, ax: usize, d: i64) -> String;
    /// Coordinate `i<ax> + d` mirrored about the edge cell it passed.
    fn reflect(&self, ax: usize, d: i64) -> String;
    /// Whether `i<ax> + d` is on the grid.
    fn inside(&self, ax: usize, d: i64) -> String;
    /// The value of param `p`.
    fn param(&self, p: usize) -> String;
    /// `then` where `cond` holds, else `otherwise`.
    fn select(&self, cond: &str, then: &str, otherwise: &str) -> String;
}

/// A read of `buf` at `offset` from the cell `i0, i1, ..` under `sides`
/// (`[low, high]` per axis): a coordinate that passes a `periodic` side
/// wraps, one that passes a `reflect` side mirrors, and a read that passes
/// a `value` side is that side's param (the slowest such axis decides
/// where several do). A `fixed` side is never passed: the cells by it are
/// not computed.
pub fn remapped_read(
    sides: &[[crate::ir::Side; 2]],
    offset: &[i64],
    buf: &str,
    spell: &impl Remap,
) -> String {
    use crate::ir::Side;
    let side = |ax: usize, d: i64| sides[ax][usize::from(d > 0)];
    let index = wrapped_index(offset, |ax, d| match side(ax, d) {
        Side::Periodic => spell.wrap(ax, d),
        Side::Reflect => spell.reflect(ax, d),
        // Strided axes multiply the coordinate.
        Side::Fixed | Side::Value(_) if ax + 1 < offset.len() => format!("({})", shifted(ax, d)),
        Side::Fixed | Side::Value(_) => shifted(ax, d),
    });
    let mut text = format!("{buf}[{index}]");
    for (ax, &d) in offset.iter().enumerate().rev() {
        if let (true, Side::Value(p)) = (d != 0, side(ax, d)) {
            text = spell.select(&spell.inside(ax, d), &text, &spell.param(p));
        }
    }
    text
}
