//! The in-plane sum of a 3-D statement as a linear form: what the `tensor`
//! strategy computes as matrix products on the tensor cores.
//!
//! A statement qualifies when one subtree of its expression is a sum of
//! reads times read-free coefficients (literals, parameters and arithmetic
//! on them) that holds every read with a non-zero offset along `y` or `x`,
//! and those reads are of one grid, on the two in-plane axes, within 4 cells.
//! The rest of the statement reads grids only along the slowest axis
//! (`[dz, 0, 0]`). The subtree then splits into the sums along `x` and along
//! `y` (banded matrices times the plane) and what is left: its reads along
//! `z`, its centre and its read-free terms.

use super::{Access, Expr, Op, Slot, Statement, Version};

/// The most cells an in-plane read may lie from the cell it updates: the
/// band of a matrix product spans `8 + 2 r` cells of a plane, at most 16
/// (four products of depth 4).
pub const MAX_PLANE_REACH: usize = 4;

/// The most planes a read along the slowest axis may lie from the cell it
/// updates: each lane keeps that many planes on either side in registers.
pub const MAX_DEPTH_REACH: usize = 4;

/// A statement's in-plane sum, split for matrix products.
#[derive(Clone, Debug, PartialEq)]
pub struct PlaneSum {
    /// The grid read in-plane.
    pub slot: Slot,
    /// Coefficient of the read at `[0, 0, d]`, at index `d + MAX_PLANE_REACH`
    /// (`None` where there is none, and at `d = 0`).
    pub x: Vec<Option<Expr>>,
    /// The same for the reads at `[0, d, 0]`.
    pub y: Vec<Option<Expr>>,
    /// The statement's expression with the in-plane sum's subtree replaced by
    /// a read of [`PLANE_SUM`] plus that subtree's other terms.
    pub expr: Expr,
}

/// The slot whose read stands for the in-plane sum in [`PlaneSum::expr`].
pub const PLANE_SUM: Slot = Slot {
    field: usize::MAX,
    version: Version::Start,
};

impl PlaneSum {
    /// Largest in-plane |offset| along `y` and `x`.
    pub fn reach(&self) -> [usize; 2] {
        let far = |c: &[Option<Expr>]| {
            c.iter()
                .enumerate()
                .filter(|(_, e)| e.is_some())
                .map(|(i, _)| i.abs_diff(MAX_PLANE_REACH))
                .max()
                .unwrap_or(0)
        };
        [far(&self.y), far(&self.x)]
    }
}

/// The in-plane sum of statement `s` of a 3-D stencil, or why it has none
/// that matrix products can compute (`name` spells a read, for messages).
pub fn plane_sum(s: &Statement, name: &dyn Fn(&Access) -> String) -> Result<PlaneSum, String> {
    if let Some(read) = first_read(&s.expr, &|a| {
        a.offset.iter().filter(|&&d| d != 0).count() > 1 && in_plane(a)
    }) {
        return Err(format!(
            "it reads `{}` off the axes: matrix products take the in-plane neighbours along `x` and along `y` only",
            name(&read)
        ));
    }
    let total = count(&s.expr);
    if total == 0 {
        return Err("it reads no in-plane neighbour: there is no in-plane sum to take".into());
    }
    let sum = smallest(&s.expr, total);
    let form = linear(sum).ok_or_else(|| {
        "its in-plane neighbours are not a sum of reads times constants (a product or a function of grid values holds some)".to_string()
    })?;
    let (slot, [y, x], rest) = axis_weights(form.terms, name)?;
    let mut replacement = Expr::Read(Access {
        slot: PLANE_SUM,
        offset: vec![0; 3],
    });
    for (a, c) in rest {
        replacement = add(replacement, mul(c, Expr::Read(a)));
    }
    if let Some(c) = form.constant {
        replacement = add(replacement, c);
    }
    let expr = replaced(&s.expr, sum, &replacement);
    if let Some(read) = first_read(&expr, &|a| {
        a.offset[0].unsigned_abs() as usize > MAX_DEPTH_REACH
    }) {
        return Err(format!(
            "it reads `{}`, more than {MAX_DEPTH_REACH} planes away along the slowest axis: a lane keeps {MAX_DEPTH_REACH} on either side",
            name(&read)
        ));
    }
    Ok(PlaneSum { slot, x, y, expr })
}

/// The first read of `expr` that `pick` picks.
fn first_read(expr: &Expr, pick: &dyn Fn(&Access) -> bool) -> Option<Access> {
    let mut first = None;
    expr.for_each_read(&mut |a| {
        if pick(a) {
            first.get_or_insert_with(|| a.clone());
        }
    });
    first
}

/// The grid an in-plane sum reads, its weights along `y` and `x`, and the
/// sum's terms that read other planes.
type AxisWeights = (Slot, [Vec<Option<Expr>>; 2], Vec<(Access, Expr)>);

/// A weighted sum's in-plane terms as the grid they read and their weights
/// along `y` and `x` (by offset, `MAX_PLANE_REACH` at the centre), with the
/// terms that read other planes; an error where the in-plane terms read two
/// grids or reach past `MAX_PLANE_REACH`.
fn axis_weights(
    terms: Vec<(Access, Expr)>,
    name: &dyn Fn(&Access) -> String,
) -> Result<AxisWeights, String> {
    let mut slot = None;
    let mut weights = [
        vec![None; 2 * MAX_PLANE_REACH + 1],
        vec![None; 2 * MAX_PLANE_REACH + 1],
    ];
    let mut rest = Vec::new();
    for (a, c) in terms {
        if !in_plane(&a) {
            rest.push((a, c));
            continue;
        }
        if *slot.get_or_insert(a.slot) != a.slot {
            return Err(format!(
                "it reads two grids in-plane (`{}` too): the products take one",
                name(&a)
            ));
        }
        let (axis, d) = if a.offset[1] != 0 {
            (0, a.offset[1])
        } else {
            (1, a.offset[2])
        };
        if d.unsigned_abs() as usize > MAX_PLANE_REACH {
            return Err(format!(
                "it reads `{}`, {} cells away in-plane: the products reach {MAX_PLANE_REACH}",
                name(&a),
                d.unsigned_abs()
            ));
        }
        weights[axis][(d + MAX_PLANE_REACH as i64) as usize] = Some(c);
    }
    let slot = slot.expect("a sum of in-plane neighbours reads one");
    Ok((slot, weights, rest))
}

/// A weighted sum: each read once with its read-free coefficient (literals,
/// parameters and arithmetic on them), and the read-free constant added.
pub type WeightedSum = (Vec<(Access, Expr)>, Option<Expr>);

/// A statement's whole expression as a [`WeightedSum`]; `None` where a
/// product or a function of grid values holds a read.
pub fn weighted_sum(e: &Expr) -> Option<WeightedSum> {
    linear(e).map(|form| (form.terms, form.constant))
}

/// Whether `a` reads a neighbour within the plane (`y` or `x` offset).
fn in_plane(a: &Access) -> bool {
    a.offset[1] != 0 || a.offset[2] != 0
}

/// The in-plane reads of `e`.
fn count(e: &Expr) -> usize {
    let mut n = 0;
    e.for_each_read(&mut |a| n += usize::from(in_plane(a)));
    n
}

/// The smallest subtree of `e` that holds all `total` in-plane reads of `e`.
fn smallest(e: &Expr, total: usize) -> &Expr {
    let children: Vec<&Expr> = match e {
        Expr::Neg(x) | Expr::PowI(x, _) => vec![x],
        Expr::Bin(_, a, b) => vec![a, b],
        Expr::Call(_, args) => args.iter().collect(),
        Expr::Lit(_) | Expr::Param(_) | Expr::Read(_) => vec![],
    };
    match children.into_iter().find(|c| count(c) == total) {
        Some(c) => smallest(c, total),
        None => e,
    }
}

/// A sum of reads times read-free coefficients, plus a read-free constant.
#[derive(Default)]
struct Linear {
    terms: Vec<(Access, Expr)>,
    constant: Option<Expr>,
}

impl Linear {
    fn scaled(self, k: &Expr) -> Linear {
        Linear {
            terms: self
                .terms
                .into_iter()
                .map(|(a, c)| (a, mul(c, k.clone())))
                .collect(),
            constant: self.constant.map(|c| mul(c, k.clone())),
        }
    }

    fn plus(mut self, other: Linear) -> Linear {
        for (a, c) in other.terms {
            match self.terms.iter_mut().find(|(b, _)| *b == a) {
                Some((_, d)) => *d = add(std::mem::replace(d, Expr::Lit(0.0)), c),
                None => self.terms.push((a, c)),
            }
        }
        self.constant = match (self.constant, other.constant) {
            (Some(a), Some(b)) => Some(add(a, b)),
            (a, b) => a.or(b),
        };
        self
    }
}

/// `e` as a [`Linear`] form, if it is one.
fn linear(e: &Expr) -> Option<Linear> {
    if read_free(e) {
        return Some(Linear {
            terms: Vec::new(),
            constant: Some(e.clone()),
        });
    }
    match e {
        Expr::Read(a) => Some(Linear {
            terms: vec![(a.clone(), Expr::Lit(1.0))],
            constant: None,
        }),
        Expr::Neg(x) => Some(linear(x)?.scaled(&Expr::Lit(-1.0))),
        Expr::Bin(Op::Add, a, b) => Some(linear(a)?.plus(linear(b)?)),
        Expr::Bin(Op::Sub, a, b) => Some(linear(a)?.plus(linear(b)?.scaled(&Expr::Lit(-1.0)))),
        Expr::Bin(Op::Mul, a, b) if read_free(a) => Some(linear(b)?.scaled(a)),
        Expr::Bin(Op::Mul, a, b) if read_free(b) => Some(linear(a)?.scaled(b)),
        Expr::Bin(Op::Div, a, b) if read_free(b) => {
            let inverse = match **b {
                Expr::Lit(v) => Expr::Lit(1.0 / v),
                _ => Expr::Bin(Op::Div, Box::new(Expr::Lit(1.0)), b.clone()),
            };
            Some(linear(a)?.scaled(&inverse))
        }
        _ => None,
    }
}

fn read_free(e: &Expr) -> bool {
    let mut free = true;
    e.for_each_read(&mut |_| free = false);
    free
}

/// `a * b`, folded where both are literals or one is 1.
fn mul(a: Expr, b: Expr) -> Expr {
    match (a, b) {
        (Expr::Lit(x), Expr::Lit(y)) => Expr::Lit(x * y),
        (Expr::Lit(one), e) | (e, Expr::Lit(one)) if one == 1.0 => e,
        (a, b) => Expr::Bin(Op::Mul, Box::new(a), Box::new(b)),
    }
}

/// `a + b`, folded where both are literals.
fn add(a: Expr, b: Expr) -> Expr {
    match (a, b) {
        (Expr::Lit(x), Expr::Lit(y)) => Expr::Lit(x + y),
        (a, b) => Expr::Bin(Op::Add, Box::new(a), Box::new(b)),
    }
}

/// `e` with the subtree at `target` (compared by address) replaced by `with`.
fn replaced(e: &Expr, target: &Expr, with: &Expr) -> Expr {
    if std::ptr::eq(e, target) {
        return with.clone();
    }
    let r = |x: &Expr| Box::new(replaced(x, target, with));
    match e {
        Expr::Neg(x) => Expr::Neg(r(x)),
        Expr::PowI(x, n) => Expr::PowI(r(x), *n),
        Expr::Bin(op, a, b) => Expr::Bin(*op, r(a), r(b)),
        Expr::Call(f, args) => {
            Expr::Call(*f, args.iter().map(|x| replaced(x, target, with)).collect())
        }
        leaf => leaf.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Stencil;

    fn lowered(expr: &str, extra: &str) -> Stencil {
        let text = format!(
            "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = {{ role = \"state\", levels = 2 }}\nvel = {{ role = \"input\" }}\n{extra}[[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n"
        );
        let src = crate::spec::Source {
            path: "s.stencil.toml".into(),
            text,
        };
        crate::ir::lower(&crate::spec::parse(&src).expect("valid spec"), &src).expect("valid spec")
    }

    fn sum(st: &Stencil) -> Result<PlaneSum, String> {
        plane_sum(&st.statements[0], &|a| format!("{:?}", a.offset))
    }

    fn read(field: usize, version: Version, offset: [i64; 3]) -> Expr {
        Expr::Read(Access {
            slot: Slot { field, version },
            offset: offset.to_vec(),
        })
    }

    #[test]
    fn the_leapfrogs_laplacian_splits_into_bands_and_a_rest() {
        let st = lowered(
            "2*u[0,0,0] - u.prev[0,0,0] + vel[0,0,0]*vel[0,0,0]*(-6*u[0,0,0] + 2*(u[0,0,-2] + u[0,0,2]) + u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + (u[0,0,-1] + u[0,0,1])/4)",
            "",
        );
        let p = sum(&st).expect("a plane sum");
        assert_eq!(
            p.slot,
            Slot {
                field: 0,
                version: Version::Start
            }
        );
        let lit = |v| Some(Expr::Lit(v));
        assert_eq!(p.x[2..7], [lit(2.0), lit(0.25), None, lit(0.25), lit(2.0)]);
        assert_eq!(p.y[3..6], [lit(1.0), None, lit(1.0)]);
        assert_eq!(p.reach(), [1, 2]);
        assert!(p.x[..2].iter().chain(&p.x[7..]).all(Option::is_none));
        // The product by vel^2 stays; the sum became the marker plus the centre and the `z` reads.
        let marker = Expr::Read(Access {
            slot: PLANE_SUM,
            offset: vec![0; 3],
        });
        let rest = Expr::Bin(
            Op::Add,
            Box::new(Expr::Bin(
                Op::Add,
                Box::new(Expr::Bin(
                    Op::Add,
                    Box::new(marker),
                    Box::new(Expr::Bin(
                        Op::Mul,
                        Box::new(Expr::Lit(-6.0)),
                        Box::new(read(0, Version::Start, [0, 0, 0])),
                    )),
                )),
                Box::new(read(0, Version::Start, [-1, 0, 0])),
            )),
            Box::new(read(0, Version::Start, [1, 0, 0])),
        );
        let Expr::Bin(Op::Add, _, product) = &p.expr else {
            panic!("{:?}", p.expr)
        };
        let Expr::Bin(Op::Mul, _, inner) = &**product else {
            panic!("{product:?}")
        };
        assert_eq!(**inner, rest);
    }

    #[test]
    fn parameters_scale_the_coefficients() {
        let st = lowered(
            "u[0,0,0] + a*u[0,0,-1] + u[0,0,1]/a",
            "[params]\na = \"f64\"\n",
        );
        let p = sum(&st).expect("a plane sum");
        assert_eq!(p.x[3], Some(Expr::Param(0)));
        let inverse = Expr::Bin(Op::Div, Box::new(Expr::Lit(1.0)), Box::new(Expr::Param(0)));
        assert_eq!(p.x[5], Some(inverse));
        assert_eq!(p.reach(), [0, 1]);
        assert!(p.y.iter().all(Option::is_none));
    }

    #[test]
    fn a_weighted_sum_folds_its_divisor_into_each_weight() {
        let st = lowered("(2*u[-1,0,0] + u[0,1,-1] - u[0,1,-1]/2 + 3)/4", "");
        let (terms, constant) = weighted_sum(&st.statements[0].expr).expect("a weighted sum");
        let at = |offset: [i64; 3]| {
            terms
                .iter()
                .find(|(a, _)| a.offset == offset)
                .map(|(_, c)| c.clone())
        };
        assert_eq!(terms.len(), 2);
        assert_eq!(at([-1, 0, 0]), Some(Expr::Lit(0.5)));
        assert_eq!(at([0, 1, -1]), Some(Expr::Lit(0.125)));
        assert_eq!(constant, Some(Expr::Lit(0.75)));
        assert!(weighted_sum(&lowered("u[0,0,1]*u[0,0,-1]", "").statements[0].expr).is_none());
    }

    #[test]
    fn what_no_product_can_take_is_refused_saying_why() {
        let refused = |expr: &str| sum(&lowered(expr, "")).expect_err(expr);
        assert!(
            refused("u[0,1,1] + u[0,0,0]").contains("off the axes"),
            "{}",
            refused("u[0,1,1]")
        );
        assert!(refused("u[0,0,1]*u[0,0,-1]").contains("not a sum of reads times constants"));
        assert!(refused("u[0,0,1] + vel[0,1,0]").contains("two grids in-plane"));
        assert!(refused("u[0,0,5] + u[0,0,-5]").contains("5 cells away"));
        assert!(refused("u[1,0,0] + u[-1,0,0]").contains("no in-plane neighbour"));
        assert!(refused("u[0,0,1] + u[0,0,-1] + u[5,0,0]").contains("more than 4 planes"));
        assert!(refused("sqrt(u[0,0,1] + u[0,1,0]) + vel[0,0,1]").contains("not a sum"));
    }
}
