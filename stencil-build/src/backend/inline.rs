//! A stencil's temporaries computed inline by the statements that read
//! them, so that a step's kernels neither write nor read them in memory:
//! the form both the GPU kernels ([`crate::backend::gpu::gpu_form`]) and
//! the OpenMP-C kernels ([`crate::backend::openmp::host_form`]) compute
//! where it is cheaper.
//!
//! A temporary read at `k` offsets is computed `k` times a cell instead of
//! crossing memory twice (written by its kernel, read by the next): in f64
//! 16 bytes a cell, worth about 125 flops at the H200's balance (33 TFlop/s
//! over 4.25 TB/s) and about 150 at the 16 Xeon cores' (650-1070 GFlop/s
//! of multiply-adds over 70-100 GB/s). Inlining every temporary of a
//! stencil is taken where it adds at most [`INLINE_EXTRA_FLOPS`] a cell,
//! else none is. The values are the same: a read of temporary `t` at
//! offset `o` becomes `t`'s expression with every read shifted by `o`, and
//! a fixed boundary's regions already make `t` computed wherever its
//! readers read it (`analysis`). With a fixed boundary the form also keeps
//! the frame: `analysis` widens a step's radius by each temporary's reach
//! on both sides, so a temporary read one-sidedly (a flux `u[0,1] -
//! u[0,0]` read at `[0,0]` and `[0,-1]`) gives the stencil a wider frame
//! than its inlined reads reach; the form then carries its source's frame
//! (`Stencil::frame`), and its kernels update the cells the source's do.
//!
//! A statement that reads temporaries and is linear in its reads (sums of
//! reads times literals and parameters) is computed as its weighted sum,
//! each distinct read once with its coefficients multiplied out, where that
//! takes fewer flops ([`collapsed`]): a Laplacian smoothed along `x` and
//! then along `z` inlines as 12 copies of the 7-point sum, 119 flops, but
//! collapses to 39 reads, 77 flops. Only the rounding differs (the sum's
//! order and the coefficients' products, computed in f64 and rounded to the
//! dtype once).

use std::collections::BTreeMap;

use crate::analysis::{analyse, flops};
use crate::ir::{Access, Boundary, Expr, Op, Role, Slot, Statement, Stencil, weighted_sum};

/// The most flops a cell may spend on recomputing the temporaries it reads,
/// over what the stencil counts: half the worth of one f64 temporary's trip
/// through memory.
pub const INLINE_EXTRA_FLOPS: usize = 64;

/// `st` with its temporaries computed inline, where it has temporaries
/// that statements read and that adds at most [`INLINE_EXTRA_FLOPS`] a
/// cell; `None` where it does not (the kernels then compute `st` as it is).
pub fn inlined_form(st: &Stencil) -> Option<Stencil> {
    // Past a mixed boundary's edge a temporary is read remapped, which
    // differs from its value recomputed at the remapped reads of its inputs.
    // A statement of a region computes part of its field: the field's
    // value at a read is that of whichever statement's region holds it.
    if matches!(st.boundary, Boundary::Mixed(_)) || st.has_regions() {
        return None;
    }
    inlined(st)
        .filter(|form| total_flops(form) <= total_flops(st) + INLINE_EXTRA_FLOPS)
        .map(|form| framed(st, form))
}

/// `form`, which updates the cells `st` does: with a fixed boundary, those
/// beyond `st`'s frame, which a temporary read one-sidedly makes wider
/// than `form`'s reads reach.
fn framed(st: &Stencil, form: Stencil) -> Stencil {
    if st.boundary == Boundary::Periodic {
        return form;
    }
    let frame = analyse(st).radius;
    debug_assert!(
        analyse(&form)
            .radius
            .iter()
            .zip(&frame)
            .all(|(r, f)| r <= f)
    );
    Stencil { frame, ..form }
}

fn total_flops(st: &Stencil) -> usize {
    st.statements.iter().map(|s| flops(&s.expr)).sum()
}

/// `st` with every temporary that some statement reads computed inline and
/// its field dropped; `None` where there is none.
fn inlined(st: &Stencil) -> Option<Stencil> {
    let read = |field: usize| {
        st.statements.iter().any(|s| {
            let mut any = false;
            s.expr.for_each_read(&mut |a| any |= a.slot.field == field);
            any
        })
    };
    let temps: Vec<usize> = (0..st.fields.len())
        .filter(|&f| st.fields[f].role == Role::Temp && read(f))
        .collect();
    if temps.is_empty() {
        return None;
    }
    let names: Vec<&str> = temps.iter().map(|&t| st.fields[t].name.as_str()).collect();
    let mut values: BTreeMap<usize, Expr> = BTreeMap::new();
    let mut statements = Vec::new();
    for s in &st.statements {
        let expr = substituted(&s.expr, &values);
        if temps.contains(&s.target) {
            values.insert(s.target, expr);
            continue;
        }
        let expr = if expr == s.expr {
            expr
        } else {
            collapsed(&expr)
        };
        statements.push(Statement {
            target: s.target,
            text: format!("{}, with {} computed inline", s.text, names.join(", ")),
            expr,
            edge_params: Vec::new(),
            region: None,
        });
    }
    Some(renumbered(st, &temps, statements))
}

/// `e` with each read of a temporary in `values` replaced by its value,
/// shifted to the read's offset.
fn substituted(e: &Expr, values: &BTreeMap<usize, Expr>) -> Expr {
    map_reads(e, &mut |a| match values.get(&a.slot.field) {
        Some(value) => shifted(value, &a.offset),
        None => Expr::Read(a.clone()),
    })
}

/// `e` as its weighted sum (each distinct read once, times its coefficients
/// folded, reads whose coefficient is 0 left out) where `e` is one and that
/// takes fewer flops, else `e`.
fn collapsed(e: &Expr) -> Expr {
    let Some((terms, constant)) = weighted_sum(e) else {
        return e.clone();
    };
    let bin = |op, a, b| Expr::Bin(op, Box::new(a), Box::new(b));
    let mut sum: Option<Expr> = None;
    for (a, c) in terms {
        if c == Expr::Lit(0.0) {
            continue;
        }
        let read = Expr::Read(a);
        let term = |c: Expr| {
            if c == Expr::Lit(1.0) {
                read.clone()
            } else if c == Expr::Lit(-1.0) {
                Expr::Neg(Box::new(read.clone()))
            } else {
                bin(Op::Mul, c, read.clone())
            }
        };
        sum = match (sum, c) {
            // `s - 0.01 * u[1]`, not `s + -0.01 * u[1]`.
            (Some(s), Expr::Lit(x)) if x < 0.0 => Some(bin(Op::Sub, s, term(Expr::Lit(-x)))),
            (Some(s), c) => Some(bin(Op::Add, s, term(c))),
            (None, c) => Some(term(c)),
        };
    }
    let sum = match (sum, constant) {
        (Some(s), Some(c)) => bin(Op::Add, s, c),
        (s, c) => s.or(c).unwrap_or(Expr::Lit(0.0)),
    };
    if flops(&sum) < flops(e) {
        sum
    } else {
        e.clone()
    }
}

/// `e` with every read moved by `by`.
fn shifted(e: &Expr, by: &[i64]) -> Expr {
    map_reads(e, &mut |a| {
        Expr::Read(Access {
            slot: a.slot,
            offset: a.offset.iter().zip(by).map(|(o, b)| o + b).collect(),
        })
    })
}

/// `e` with each read replaced by `f` of it.
fn map_reads(e: &Expr, f: &mut impl FnMut(&Access) -> Expr) -> Expr {
    match e {
        Expr::Lit(_) | Expr::Param(_) => e.clone(),
        Expr::Read(a) => f(a),
        Expr::Neg(x) => Expr::Neg(Box::new(map_reads(x, f))),
        Expr::PowI(x, n) => Expr::PowI(Box::new(map_reads(x, f)), *n),
        Expr::Bin(op, a, b) => {
            let a = map_reads(a, f);
            Expr::Bin(*op, Box::new(a), Box::new(map_reads(b, f)))
        }
        Expr::Call(func, args) => Expr::Call(*func, args.iter().map(|a| map_reads(a, f)).collect()),
    }
}

/// `st` without the fields `dropped`, its `statements` renumbered to match.
fn renumbered(st: &Stencil, dropped: &[usize], statements: Vec<Statement>) -> Stencil {
    let index: Vec<Option<usize>> = (0..st.fields.len())
        .scan(0, |next, f| {
            Some((!dropped.contains(&f)).then(|| {
                *next += 1;
                *next - 1
            }))
        })
        .collect();
    let field = |f: usize| index[f].expect("a kept field");
    let statements = statements
        .into_iter()
        .map(|s| Statement {
            target: field(s.target),
            expr: map_reads(&s.expr, &mut |a| {
                Expr::Read(Access {
                    slot: Slot {
                        field: field(a.slot.field),
                        version: a.slot.version,
                    },
                    offset: a.offset.clone(),
                })
            }),
            text: s.text,
            edge_params: s.edge_params,
            region: s.region,
        })
        .collect();
    Stencil {
        fields: (0..st.fields.len())
            .filter(|f| index[*f].is_some())
            .map(|f| st.fields[f].clone())
            .collect(),
        statements,
        ..st.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::inlined_form;
    use crate::analysis::analyse;
    use crate::ir::{Role, Stencil};

    /// The stencil spec `text` (as `s.stencil.toml`) lowered.
    fn lowered(text: String) -> Stencil {
        let src = crate::spec::Source {
            path: "s.stencil.toml".into(),
            text,
        };
        crate::ir::lower(&crate::spec::parse(&src).unwrap(), &src).unwrap()
    }

    /// `st` inlined, which it must be.
    fn inline_of(st: &Stencil) -> Stencil {
        inlined_form(st).expect("an inlined form")
    }

    fn spec(temps: &str, updates: &str) -> String {
        format!(
            "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n\
             [fields]\nu = {{ role = \"state\" }}\n{temps}\n{updates}"
        )
    }

    #[test]
    fn temporaries_are_computed_inline_at_each_offset_read() {
        let st = lowered(spec(
            "t = { role = \"temp\" }",
            "[[update]]\ntarget = \"t\"\nexpr = \"u[0,1] - 2*u[0,0] + u[0,-1]\"\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[0,0] + 0.2*(t[0,0] + t[1,0])\"\n",
        ));
        let form = inline_of(&st);
        assert_eq!(form.statements.len(), 1);
        assert_eq!(form.fields.len(), 1);
        assert_eq!(form.fields[0].role, Role::State { levels: 1 });
        let inline = lowered(spec(
            "",
            "[[update]]\ntarget = \"u\"\n\
             expr = \"u[0,0] + 0.2*((u[0,1] - 2*u[0,0] + u[0,-1]) + (u[1,1] - 2*u[1,0] + u[1,-1]))\"\n",
        ));
        assert_eq!(form.statements[0].expr, inline.statements[0].expr);
        assert!(form.statements[0].text.ends_with("with t computed inline"));
    }

    #[test]
    fn chains_of_temporaries_inline_through_each_other() {
        let st = lowered(spec(
            "a = { role = \"temp\" }\nb = { role = \"temp\" }\nw = { role = \"state\" }",
            "[[update]]\ntarget = \"a\"\nexpr = \"u[0,1] - 2*u[0,0] + u[0,-1]\"\n\
             [[update]]\ntarget = \"b\"\nexpr = \"a[0,0] - a[0,-1]\"\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[0,0] + 0.1*b[0,0] + 0.1*w[0,0]\"\n\
             [[update]]\ntarget = \"w\"\nexpr = \"0.5*w[0,0] + 0.1*b[1,0] + 0.1*u[0,0]\"\n",
        ));
        let form = inline_of(&st);
        let names: Vec<&str> = form.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["u", "w"]);
        assert_eq!(form.statements.len(), 2);
        // `w`'s update reads b a row down: u up to two cells left of it, a row down.
        let mut reads = Vec::new();
        form.statements[1]
            .expr
            .for_each_read(&mut |a| reads.push((a.slot.field, a.offset.clone())));
        assert!(reads.contains(&(0, vec![1, -2])), "{reads:?}");
        assert!(reads.contains(&(1, vec![0, 0])), "{reads:?}");
        assert_eq!(form.statements[1].target, 1);
    }

    #[test]
    fn one_sided_temporaries_go_inline_keeping_the_frame() {
        // The flux's reach of one cell counts on both sides of the step's
        // radius (2): inlined, its reads reach 1, and the form keeps the
        // frame of 2, so that its kernels update the cells the stencil's do.
        let flux = spec(
            "t = { role = \"temp\" }",
            "[[update]]\ntarget = \"t\"\nexpr = \"u[0,1] - u[0,0]\"\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[0,0] + 0.2*(t[0,0] - t[0,-1])\"\n",
        );
        let st = lowered(flux.clone());
        let form = inline_of(&st);
        assert_eq!(form.statements.len(), 1);
        assert_eq!(analyse(&st).radius, vec![0, 2]);
        assert_eq!(analyse(&form).radius, vec![0, 2]);
        assert_eq!(analyse(&form).statements[0].halo, vec![0, 2]);
        // Without the frame its reads would reach 1.
        let bare = Stencil {
            frame: Vec::new(),
            ..form.clone()
        };
        assert_eq!(analyse(&bare).radius, vec![0, 1]);
        // With a periodic boundary, which has no frame, none is kept.
        let periodic = lowered(format!("{flux}[boundary]\nkind = \"periodic\"\n"));
        let form = inline_of(&periodic);
        assert_eq!(form.statements.len(), 1);
        assert!(form.frame.is_empty());
    }

    #[test]
    fn linear_temporaries_collapse_into_one_weighted_sum() {
        // A Laplacian smoothed along x, then along y: inlined, 4 copies of
        // b's 22 flops (95 in all, over the budget); collapsed, 21 distinct
        // reads, 41 flops.
        let st = lowered(spec(
            "a = { role = \"temp\" }\nb = { role = \"temp\" }",
            "[[update]]\ntarget = \"a\"\nexpr = \"u[-1,0] + u[1,0] + u[0,-1] + u[0,1] - 4*u[0,0]\"\n\
             [[update]]\ntarget = \"b\"\nexpr = \"0.5*a[0,0] + 0.25*(a[0,-1] + a[0,1])\"\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[0,0] + 0.1*b[0,0] - 0.01*(b[-1,0] + b[1,0] - 2*b[0,0])\"\n",
        ));
        let form = inline_of(&st);
        assert_eq!(form.statements.len(), 1);
        let mut reads = Vec::new();
        form.statements[0]
            .expr
            .for_each_read(&mut |a| reads.push(a.offset.clone()));
        assert_eq!(reads.len(), 21, "{reads:?}");
        assert_eq!(crate::analysis::flops(&form.statements[0].expr), 41);
        // The centre's coefficient: u[0,0] + 0.12*b[0,0] - 0.01*(b[-1,0] +
        // b[1,0]), where b[0,0] takes u[0,0] with 0.5*-4 + 2*0.25 and each
        // b[±1,0] with 0.5.
        let centre = crate::ir::weighted_sum(&form.statements[0].expr)
            .unwrap()
            .0
            .into_iter()
            .find(|(a, _)| a.offset == [0, 0])
            .unwrap()
            .1;
        let crate::ir::Expr::Lit(centre) = centre else {
            panic!("a literal coefficient: {centre:?}")
        };
        assert!((centre - (1.0 + 0.12 * -1.5 - 0.01 * 2.0 * 0.5)).abs() < 1e-12);
        // Where the collapsed sum takes more flops than the inlined form
        // (`0.2*(t[0,0] + t[1,0])` of a 3-point sum: 9 inlined, 6 reads and
        // 11 flops collapsed), the form stays as written.
        let small = lowered(spec(
            "t = { role = \"temp\" }",
            "[[update]]\ntarget = \"t\"\nexpr = \"u[0,1] - 2*u[0,0] + u[0,-1]\"\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[0,0] + 0.2*(t[0,0] + t[1,0])\"\n",
        ));
        assert_eq!(
            crate::analysis::flops(&inline_of(&small).statements[0].expr),
            9
        );
        assert!(matches!(
            inline_of(&small).statements[0].expr,
            crate::ir::Expr::Bin(crate::ir::Op::Add, _, _)
        ));
    }

    #[test]
    fn temporaries_too_costly_to_recompute_stay() {
        // Read at 9 offsets, a temporary of 18 flops adds 144 a cell (a
        // product: no weighted sum to collapse).
        let box9 = (-1..=1)
            .flat_map(|y| (-1..=1).map(move |x| format!("t[{y},{x}]")))
            .collect::<Vec<_>>()
            .join(" + ");
        let wide = (-4..=4)
            .map(|x| format!("0.1*u[0,{x}]"))
            .collect::<Vec<_>>()
            .join(" + ");
        let wide = format!("u[0,0]*({wide})");
        let st = lowered(spec(
            "t = { role = \"temp\" }",
            &format!(
                "[[update]]\ntarget = \"t\"\nexpr = \"{wide}\"\n\
                 [[update]]\ntarget = \"u\"\nexpr = \"0.1*({box9})\"\n"
            ),
        ));
        assert_eq!(inlined_form(&st), None);
    }
}
