//! What the code generators need to know about a stencil beyond its IR:
//! radius per axis, the region each statement computes, and the cost model
//! figures (points, flops, bytes per cell).
//!
//! Regions. With a `fixed` boundary, the stencil's radius `R` (per axis) is
//! the reach of the whole step: a state field is updated on cells at distance
//! `>= R` from every edge and keeps its value elsewhere. A temp field is
//! computed on the larger region its readers need: if statement `t` reads
//! temp `T` at offsets up to `r` and itself computes at distance `h_t`, `T`
//! is computed at distance `h_t - r`. With a `periodic` boundary every
//! statement computes every cell and reads wrap around. With a mixed
//! boundary a statement computes, by each side that is not `fixed`, up to
//! the edge, its reads past it remapped (`ir::Side`); by a `fixed` side as
//! a fixed boundary does.

use crate::ir::{Bound, Boundary, Expr, Region, Role, Slot, Statement, Stencil, Version};

/// Derived facts about a stencil.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// Radius of the whole step per axis: the width of the fixed frame (at
    /// least the stencil's `frame`).
    pub radius: Vec<usize>,
    /// Per statement, in order.
    pub statements: Vec<StatementInfo>,
    /// Distinct grid reads per cell and step.
    pub points: usize,
    /// Floating-point operations per cell and step.
    pub flops: usize,
    /// Bytes a step must move per cell: every grid it reads as it was before
    /// the step (each level of a state field, each input) read once, every
    /// state field it updates written once. Temporaries, and values a
    /// statement reads after an earlier one of the step wrote them, can stay
    /// on chip: they count nothing.
    pub bytes: usize,
    /// Smallest legal extent per axis (`2 R + 1`).
    pub min_shape: Vec<usize>,
}

/// Derived facts about one statement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatementInfo {
    /// Largest |offset| of its reads per axis.
    pub reach: Vec<usize>,
    /// It computes cells at distance `>= halo[a]` from both edges of axis `a`
    /// (all zeros for periodic boundaries). With a mixed boundary, the
    /// region a fixed boundary would give it: the interior its kernels
    /// compute with reads that stay on the grid, before the frame pass.
    pub halo: Vec<usize>,
    /// It computes cells at distance `>= edges[a][0]` from the low edge of
    /// axis `a` and `>= edges[a][1]` from its high edge: `halo` by a fixed
    /// side, 0 by any other.
    pub edges: Vec<[usize; 2]>,
    /// The cells `from <= i < to` per axis its kernels compute: `edges`
    /// within the box of its region (for the grid outside a box, `edges`).
    pub bounds: Vec<[Bound; 2]>,
    /// For a statement of the grid outside a box: that box within
    /// `bounds`, the cells it leaves out.
    pub hole: Option<Vec<[Bound; 2]>>,
    /// Floating-point operations per cell.
    pub flops: usize,
}

/// Analyses a checked stencil.
pub fn analyse(st: &Stencil) -> Analysis {
    let dims = st.dims();
    let reach: Vec<Vec<usize>> = st
        .statements
        .iter()
        .map(|s| reach_of(&s.expr, dims, |_| true))
        .collect();
    let depth = depths(st);
    let radius: Vec<usize> = (0..dims)
        .map(|a| {
            (0..st.statements.len())
                .map(|s| depth[s][a] + reach[s][a])
                .chain(st.frame.get(a).copied())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let statements: Vec<StatementInfo> = st
        .statements
        .iter()
        .zip(reach)
        .zip(&depth)
        .map(|((s, reach), depth)| statement_info(st, s, reach, depth, &radius))
        .collect();
    let (points, values) = reads_and_values(st);
    Analysis {
        min_shape: min_shape(&radius, &statements),
        radius,
        points,
        flops: flops_per_cell(st, &statements),
        bytes: st.dtype.size() * values,
        statements,
    }
}

/// How far beyond the final region each statement must compute, per axis:
/// a temporary as far as the later statements that read it reach, from
/// where they compute.
fn depths(st: &Stencil) -> Vec<Vec<usize>> {
    let dims = st.dims();
    let mut depth = vec![vec![0usize; dims]; st.statements.len()];
    for s in (0..st.statements.len()).rev() {
        let target = st.statements[s].target;
        if st.fields[target].role != Role::Temp {
            continue;
        }
        for t in s + 1..st.statements.len() {
            let r = reach_of(&st.statements[t].expr, dims, |slot| slot.field == target);
            for a in 0..dims {
                depth[s][a] = depth[s][a].max(depth[t][a] + r[a]);
            }
        }
    }
    depth
}

/// Statement `s`'s halo, edges and cells, from its reach, its `depth`
/// beyond the final region and the step's `radius`.
fn statement_info(
    st: &Stencil,
    s: &Statement,
    reach: Vec<usize>,
    depth: &[usize],
    radius: &[usize],
) -> StatementInfo {
    let dims = st.dims();
    let fixed: Vec<usize> = radius.iter().zip(depth).map(|(r, d)| r - d).collect();
    let halo = match st.boundary {
        Boundary::Periodic => vec![0; dims],
        Boundary::Fixed | Boundary::Mixed(_) => fixed,
    };
    let edges: Vec<[usize; 2]> = halo
        .iter()
        .zip(st.boundary.sides(dims))
        .map(|(&h, sides)| sides.map(|side| if side.updates() { 0 } else { h }))
        .collect();
    let whole: Vec<[Bound; 2]> = edges
        .iter()
        .map(|&[lo, hi]| [Bound::Low(lo), Bound::High(hi)])
        .collect();
    let (bounds, hole) = match s.region.map(|r| &st.regions[r].region) {
        None => (whole, None),
        Some(Region::Box(b)) => (within(b, &edges), None),
        Some(Region::Outside(b)) => (whole, Some(within(b, &edges))),
    };
    StatementInfo {
        halo,
        edges,
        bounds,
        hole,
        reach,
        flops: flops(&s.expr),
    }
}

/// The distinct reads of a step (a slot at an offset), and the values a
/// cell it must move: each grid it reads from before the step, and each
/// state field it writes.
fn reads_and_values(st: &Stencil) -> (usize, usize) {
    let mut accesses = Vec::new();
    let mut slots: Vec<Slot> = Vec::new();
    for s in &st.statements {
        s.expr.for_each_read(&mut |a| accesses.push(a.clone()));
        slots.extend(s.slots());
    }
    accesses.sort();
    accesses.dedup();
    slots.retain(|slot| slot.version != Version::Updated);
    slots.sort();
    slots.dedup();
    let mut targets: Vec<usize> = st
        .statements
        .iter()
        .map(|s| s.target)
        .filter(|&t| st.fields[t].role != Role::Temp)
        .collect();
    targets.dedup();
    (accesses.len(), slots.len() + targets.len())
}

/// Flops a cell: a cell is computed by one statement of each field, so the
/// costliest of its regions' statements (consecutive, one target) counts.
fn flops_per_cell(st: &Stencil, statements: &[StatementInfo]) -> usize {
    let pieces: Vec<(usize, usize)> = st
        .statements
        .iter()
        .zip(statements)
        .map(|(s, info)| (s.target, info.flops))
        .collect();
    pieces
        .chunk_by(|a, b| a.0 == b.0)
        .map(|field| field.iter().map(|&(_, f)| f).max().unwrap_or(0))
        .sum()
}

/// The box `b` within the cells at distance `edges` from each edge (on
/// grids large enough: [`min_shape`]).
fn within(b: &[[Bound; 2]], edges: &[[usize; 2]]) -> Vec<[Bound; 2]> {
    b.iter()
        .zip(edges)
        .map(|(&[from, to], &[lo, hi])| {
            let from = match from {
                Bound::Low(a) => Bound::Low(a.max(lo)),
                high => high,
            };
            let to = match to {
                Bound::High(k) => Bound::High(k.max(hi)),
                low => low,
            };
            [from, to]
        })
        .collect()
}

/// The smallest legal extent per axis: `2 R + 1`, and where statements
/// compute boxes, what keeps each box within the statement's halo (the
/// frame of its interior's kernels) and non-empty ([`within`]).
fn min_shape(radius: &[usize], statements: &[StatementInfo]) -> Vec<usize> {
    (0..radius.len())
        .map(|a| {
            let mut n = 2 * radius[a] + 1;
            for info in statements {
                // `halo`, not `edges`: with a mixed boundary the interior's
                // kernels (a fixed boundary's) compute the box within it.
                let (lo, hi) = (info.halo[a], info.halo[a]);
                let mut boxes = vec![info.bounds[a]];
                boxes.extend(info.hole.iter().map(|h| h[a]));
                for [from, to] in boxes {
                    if let Bound::High(k) = from {
                        n = n.max(k.saturating_add(lo));
                    }
                    if let Bound::Low(c) = to {
                        n = n.max(c.saturating_add(hi));
                    }
                    n = n.max(region_extent([from, to]).unwrap_or(0));
                }
            }
            n
        })
        .collect()
}

/// The smallest extent at which the cells `from <= i < to` are some, and
/// stay some on every larger grid; `None` where large grids have none.
pub fn region_extent([from, to]: [Bound; 2]) -> Option<usize> {
    match (from, to) {
        (Bound::Low(a), Bound::Low(b)) => (a < b).then_some(b),
        (Bound::Low(a), Bound::High(k)) => Some(a.saturating_add(k).saturating_add(1)),
        (Bound::High(k1), Bound::High(k2)) => (k1 > k2).then_some(k1),
        (Bound::High(_), Bound::Low(_)) => None,
    }
}

/// Largest |offset| per axis over the reads that `keep` selects.
fn reach_of(expr: &Expr, dims: usize, keep: impl Fn(Slot) -> bool) -> Vec<usize> {
    let mut r = vec![0usize; dims];
    expr.for_each_read(&mut |a| {
        if keep(a.slot) {
            for (r, d) in r.iter_mut().zip(&a.offset) {
                *r = (*r).max(d.unsigned_abs() as usize);
            }
        }
    });
    r
}

/// Flops of an expression: one per `+ - * /`, per function (two for `fma`),
/// `|n| - 1` multiplications (and a division when `n < 0`) per `x^n`;
/// negation is free.
pub fn flops(expr: &Expr) -> usize {
    match expr {
        Expr::Lit(_) | Expr::Param(_) | Expr::Read(_) => 0,
        Expr::Neg(x) => flops(x),
        Expr::Bin(_, a, b) => 1 + flops(a) + flops(b),
        Expr::Call(f, args) => f.flops() + args.iter().map(flops).sum::<usize>(),
        Expr::PowI(x, n) => {
            flops(x) + (n.unsigned_abs() as usize).saturating_sub(1) + usize::from(*n < 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::lower;
    use crate::spec::{Source, parse};

    fn analysed(text: &str) -> Analysis {
        let src = Source {
            path: "t.stencil.toml".into(),
            text: text.into(),
        };
        let spec = parse(&src).unwrap();
        analyse(&lower(&spec, &src).unwrap_or_else(|d| panic!("{d}")))
    }

    #[test]
    fn heat_counts() {
        let a = analysed(
            r#"
[stencil]
dtype = "f64"
axes = ["z", "y", "x"]
[fields]
u = { role = "state" }
[[update]]
target = "u"
expr = "(0.4*u[-1,0,0] + 0.6*u[0,-1,0] + 0.8*u[0,0,-1] + 1.0*u[0,0,0] + 0.8*u[0,0,1] + 0.6*u[0,1,0] + 0.4*u[1,0,0]) / 4.6"
"#,
        );
        assert_eq!(
            (a.radius.clone(), a.points, a.flops, a.bytes),
            (vec![1, 1, 1], 7, 14, 16)
        );
        assert_eq!(a.min_shape, vec![3, 3, 3]);
    }

    #[test]
    fn temps_widen_the_region() {
        let a = analysed(
            r#"
[stencil]
dtype = "f32"
axes = ["y", "x"]
[fields]
u = { role = "state" }
lap = { role = "temp" }
[[update]]
target = "lap"
expr = "u[0,-1] + u[0,1] - 2*u[0,0]"
[[update]]
target = "u"
expr = "u[0,0] - 0.1*(lap[-2,0] + lap[0,1])"
"#,
        );
        assert_eq!(a.radius, vec![2, 2]);
        assert_eq!(a.statements[0].halo, vec![0, 1]);
        assert_eq!(a.statements[1].halo, vec![2, 2]);
        // u read and written; the temporary stays on chip.
        assert_eq!(a.bytes, 4 * (1 + 1));
    }

    #[test]
    fn star3d25_flops_via_sum() {
        let a = analysed(
            r#"
[stencil]
dtype = "f64"
axes = ["z", "y", "x"]
[fields]
u = { role = "state" }
[constants]
c = [-2.847222222, 1.6, -0.2, 0.025396825, -0.001785714]
[[update]]
target = "u"
expr = "3*c[0]*u[0,0,0] + sum(r, 1, 4, c[r]*(u[0,0,r]+u[0,0,-r]+u[0,r,0]+u[0,-r,0]+u[r,0,0]+u[-r,0,0]))"
"#,
        );
        assert_eq!(
            (a.radius.clone(), a.points, a.flops),
            (vec![4, 4, 4], 25, 2 + 4 * 6 + 3 + 1)
        );
    }
}
