//! Prints IR expressions as source text for any C-like target language.
//!
//! One printer serves every generator; a [`Dialect`] says how literals,
//! parameters, reads, calls and powers are spelled. Parentheses are added
//! exactly where the tree's grouping differs from left-to-right evaluation,
//! so every backend evaluates the same operations in the same order.

use crate::ir::{Access, Dtype, Expr, Func, Op};

/// How one target language spells the leaves of an expression.
pub trait Dialect {
    /// A read of a grid.
    fn read(&self, access: &Access) -> String;
    /// Runtime parameter `index`.
    fn param(&self, index: usize) -> String;
    /// A call of a math function on printed arguments.
    fn call(&self, func: Func, args: &[String]) -> String;
    /// `base^n` (base already printed, parenthesised if needed).
    fn powi(&self, base: &str, n: i32) -> String;
    /// A literal.
    fn literal(&self, value: f64) -> String;
    /// What to multiply by instead of dividing by the literal `divisor`,
    /// for targets where a division is slow (`None`, the default: divide).
    fn reciprocal(&self, _divisor: f64) -> Option<String> {
        None
    }
    /// What to multiply by instead of dividing by `sqrt(root)` (`arg`: `root`
    /// printed), for targets with a reciprocal square root faster than a
    /// root and a division (`None`, the default: divide by the root).
    fn reciprocal_sqrt(&self, _root: &Expr, _arg: &str) -> Option<String> {
        None
    }
}

/// Spells a literal of `dtype` so it round-trips, with `suffix` for floats
/// where the language needs one (`"f"` in C for `float`).
pub fn float_literal(value: f64, dtype: Dtype, suffix: &str) -> String {
    let text = match dtype {
        Dtype::F64 => format!("{value:?}"),
        Dtype::F32 => format!("{:?}", value as f32),
    };
    let text = if text.contains(['.', 'e', 'E']) {
        text
    } else {
        format!("{text}.0")
    };
    format!("{text}{suffix}")
}

const SUM: u8 = 1;
const PRODUCT: u8 = 2;
const UNARY: u8 = 3;
const ATOM: u8 = 4;

/// Prints `expr` in dialect `d`.
pub fn print(expr: &Expr, d: &impl Dialect) -> String {
    printed(expr, d).0
}

fn printed(expr: &Expr, d: &impl Dialect) -> (String, u8) {
    match expr {
        Expr::Lit(v) if *v < 0.0 || (*v == 0.0 && v.is_sign_negative()) => (d.literal(*v), UNARY),
        Expr::Lit(v) => (d.literal(*v), ATOM),
        Expr::Param(i) => (d.param(*i), ATOM),
        Expr::Read(a) => (d.read(a), ATOM),
        Expr::Neg(x) => (format!("-{}", operand(x, d, ATOM)), UNARY),
        Expr::Bin(Op::Div, a, b)
            if let Expr::Lit(divisor) = **b
                && let Some(r) = d.reciprocal(divisor) =>
        {
            (format!("{} * {r}", operand(a, d, PRODUCT)), PRODUCT)
        }
        Expr::Bin(Op::Div, a, b)
            if let Expr::Call(Func::Sqrt, root) = &**b
                && let Some(r) = d.reciprocal_sqrt(&root[0], &print(&root[0], d)) =>
        {
            match **a {
                Expr::Lit(1.0) => (r, ATOM),
                _ => (format!("{} * {r}", operand(a, d, PRODUCT)), PRODUCT),
            }
        }
        Expr::Bin(op, a, b) => {
            let (prec, sym) = match op {
                Op::Add => (SUM, "+"),
                Op::Sub => (SUM, "-"),
                Op::Mul => (PRODUCT, "*"),
                Op::Div => (PRODUCT, "/"),
            };
            (
                format!("{} {sym} {}", operand(a, d, prec), operand(b, d, prec + 1)),
                prec,
            )
        }
        Expr::Call(f, args) => {
            let args: Vec<String> = args.iter().map(|a| print(a, d)).collect();
            (d.call(*f, &args), ATOM)
        }
        Expr::PowI(x, n) => (d.powi(&print(x, d), *n), ATOM),
    }
}

/// Prints `expr`, parenthesised when it binds looser than `min`.
fn operand(expr: &Expr, d: &impl Dialect, min: u8) -> String {
    let (text, prec) = printed(expr, d);
    if prec < min {
        format!("({text})")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Slot, Version};

    struct Plain;
    impl Dialect for Plain {
        fn read(&self, a: &Access) -> String {
            format!("u{:?}", a.offset)
        }
        fn param(&self, i: usize) -> String {
            format!("p{i}")
        }
        fn call(&self, f: Func, args: &[String]) -> String {
            format!("{}({})", f.name(), args.join(", "))
        }
        fn powi(&self, base: &str, n: i32) -> String {
            format!("powi({base}, {n})")
        }
        fn literal(&self, v: f64) -> String {
            float_literal(v, Dtype::F64, "")
        }
    }

    fn read(d: i64) -> Box<Expr> {
        Box::new(Expr::Read(Access {
            slot: Slot {
                field: 0,
                version: Version::Start,
            },
            offset: vec![d],
        }))
    }

    fn bin(op: Op, a: Box<Expr>, b: Box<Expr>) -> Box<Expr> {
        Box::new(Expr::Bin(op, a, b))
    }

    #[test]
    fn keeps_the_tree_grouping() {
        let e = bin(Op::Sub, read(0), bin(Op::Sub, read(1), read(2)));
        assert_eq!(print(&e, &Plain), "u[0] - (u[1] - u[2])");
        let e = bin(Op::Sub, bin(Op::Sub, read(0), read(1)), read(2));
        assert_eq!(print(&e, &Plain), "u[0] - u[1] - u[2]");
        let e = bin(
            Op::Mul,
            bin(Op::Add, read(0), Box::new(Expr::Lit(-2.0))),
            Box::new(Expr::Param(0)),
        );
        assert_eq!(print(&e, &Plain), "(u[0] + -2.0) * p0");
        let e = Expr::Neg(bin(Op::Div, read(0), Box::new(Expr::Lit(118.0))));
        assert_eq!(print(&e, &Plain), "-(u[0] / 118.0)");
        let e = bin(Op::Mul, Box::new(Expr::Lit(-0.5)), read(0));
        assert_eq!(print(&e, &Plain), "-0.5 * u[0]");
    }

    /// Divides by literals (4 alone) and by roots as multiplications by
    /// their reciprocals.
    struct Reciprocals;
    impl Dialect for Reciprocals {
        fn read(&self, a: &Access) -> String {
            Plain.read(a)
        }
        fn param(&self, i: usize) -> String {
            Plain.param(i)
        }
        fn call(&self, f: Func, args: &[String]) -> String {
            Plain.call(f, args)
        }
        fn powi(&self, base: &str, n: i32) -> String {
            Plain.powi(base, n)
        }
        fn literal(&self, v: f64) -> String {
            Plain.literal(v)
        }
        fn reciprocal(&self, divisor: f64) -> Option<String> {
            (divisor == 4.0).then(|| "0.25".to_string())
        }
        fn reciprocal_sqrt(&self, _root: &Expr, arg: &str) -> Option<String> {
            Some(format!("rsqrt({arg})"))
        }
    }

    #[test]
    fn a_division_by_a_literal_may_become_a_multiplication_in_the_same_place() {
        let quarter = |a| bin(Op::Div, a, Box::new(Expr::Lit(4.0)));
        let e = quarter(bin(Op::Add, read(0), read(1)));
        assert_eq!(print(&e, &Reciprocals), "(u[0] + u[1]) * 0.25");
        // The grouping of the tree is kept: x * (y / 4), and (x / 4) / 3 stays a division by 3.
        let e = bin(Op::Mul, read(0), quarter(read(1)));
        assert_eq!(print(&e, &Reciprocals), "u[0] * (u[1] * 0.25)");
        let e = bin(Op::Div, quarter(read(0)), Box::new(Expr::Lit(3.0)));
        assert_eq!(print(&e, &Reciprocals), "u[0] * 0.25 / 3.0");
        // Not a literal: a division.
        let e = bin(Op::Div, read(0), Box::new(Expr::Param(0)));
        assert_eq!(print(&e, &Reciprocals), "u[0] / p0");
    }

    #[test]
    fn a_division_by_a_root_may_become_a_multiplication_by_its_reciprocal() {
        let root = |x: Box<Expr>| Box::new(Expr::Call(Func::Sqrt, vec![*x]));
        let sum = || bin(Op::Add, read(0), read(1));
        // 1 / sqrt(x) is the reciprocal alone; any other numerator multiplies it.
        let e = bin(Op::Div, Box::new(Expr::Lit(1.0)), root(sum()));
        assert_eq!(print(&e, &Reciprocals), "rsqrt(u[0] + u[1])");
        let e = bin(Op::Div, bin(Op::Sub, read(0), read(1)), root(sum()));
        assert_eq!(
            print(&e, &Reciprocals),
            "(u[0] - u[1]) * rsqrt(u[0] + u[1])"
        );
        let e = bin(Op::Div, Box::new(Expr::Lit(2.0)), root(read(0)));
        assert_eq!(print(&e, &Reciprocals), "2.0 * rsqrt(u[0])");
        // A root that is not the divisor, and a dialect without the hook, stay as written.
        let e = bin(Op::Div, root(read(0)), read(1));
        assert_eq!(print(&e, &Reciprocals), "sqrt(u[0]) / u[1]");
        let e = bin(Op::Div, read(1), root(read(0)));
        assert_eq!(print(&e, &Plain), "u[1] / sqrt(u[0])");
    }

    #[test]
    fn literals_round_trip() {
        assert_eq!(float_literal(5.0, Dtype::F64, ""), "5.0");
        assert_eq!(float_literal(0.1, Dtype::F32, "f"), "0.1f");
        assert_eq!(float_literal(1e-30, Dtype::F64, ""), "1e-30");
        assert_eq!(float_literal(2e20, Dtype::F32, "f"), "2e20f");
        assert_eq!(
            float_literal(0.025396825, Dtype::F64, "")
                .parse::<f64>()
                .unwrap(),
            0.025396825
        );
    }
}
