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
    let last = offset.len() - 1;
    let mut text = String::from("c");
    for (a, &d) in offset.iter().enumerate() {
        if d == 0 {
            continue;
        }
        let sign = if d < 0 { '-' } else { '+' };
        let m = d.unsigned_abs();
        let term = match (a == last, m) {
            (true, m) => m.to_string(),
            (false, 1) => format!("s{a}"),
            (false, m) => format!("{m} * s{a}"),
        };
        text.push_str(&format!(" {sign} {term}"));
    }
    text
}
