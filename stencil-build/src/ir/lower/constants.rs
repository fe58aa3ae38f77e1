//! `[constants]`: scalars and tables of numbers, or of expressions of
//! numbers in quotes, each within the range of the stencil's dtype.

use std::collections::HashMap;

use super::names::Names;
use crate::diagnostic::Diagnostic;
use crate::ir::Dtype;
use crate::spec::expr::{self, BinOp, Kind, Node};
use crate::spec::{Source, Spec};

/// A compile-time constant.
#[derive(Clone, Debug)]
pub(super) enum Constant {
    Scalar(f64, Option<i64>),
    Table(Vec<f64>),
}

pub(super) fn constants(
    spec: &Spec,
    dtype: Dtype,
    src: &Source,
    names: &mut Names,
) -> Result<HashMap<String, Constant>, Diagnostic> {
    let mut out = HashMap::new();
    for (key, value) in &spec.constants.0 {
        names.declare(key, "constant", src)?;
        let bad = |why: &str| {
            src.error(value.span(), format!("constant `{}` {why}", key.get_ref()))
                .with_hint(format!(
                    "write e.g. `{0} = 0.5`, `{0} = \"4/3\"` or `{0} = [1.0, \"-1/12\", 0.25]`",
                    key.get_ref()
                ))
        };
        let number = |v: &toml::Value| match v {
            toml::Value::Integer(i) => Ok(*i as f64),
            toml::Value::Float(f) if f.is_finite() => Ok(*f),
            toml::Value::String(text) => literal_expression(text).map_err(|why| {
                bad(&format!(
                    "holds `{text}`, which is not an expression of numbers: {why}"
                ))
            }),
            toml::Value::Array(_) => Err(bad(
                "is a nested list; tables have one index: flatten it and index `t[n*i + j]`",
            )),
            _ => Err(bad(
                "must be a number, an expression of numbers in quotes, or a list of them",
            )),
        };
        let c = match value.get_ref() {
            toml::Value::Integer(i) => Constant::Scalar(*i as f64, Some(*i)),
            toml::Value::Array(items) if items.is_empty() => {
                return Err(bad("is an empty list"));
            }
            toml::Value::Array(items) => {
                Constant::Table(items.iter().map(number).collect::<Result<_, _>>()?)
            }
            v => Constant::Scalar(number(v)?, None),
        };
        let values = match &c {
            Constant::Scalar(v, _) => std::slice::from_ref(v),
            Constant::Table(t) => t.as_slice(),
        };
        if let Some(Err(largest)) = values
            .iter()
            .map(|&v| dtype.check_value(v))
            .find(Result::is_err)
        {
            return Err(src
                .error(
                    value.span(),
                    format!(
                        "constant `{}` holds a value beyond the range of {}",
                        key.get_ref(),
                        dtype.rust()
                    ),
                )
                .with_hint(format!("use values of magnitude at most {largest:.6e}")));
        }
        out.insert(key.get_ref().clone(), c);
    }
    Ok(out)
}

/// The value of `text`, an expression of numbers (`4/3`, `-1/12`,
/// `2^-3`, `(1 + 2) * 0.5`), or why it is not one.
fn literal_expression(text: &str) -> Result<f64, String> {
    fn value(node: &Node) -> Result<f64, String> {
        Ok(match &node.kind {
            Kind::Number { value, .. } => *value,
            Kind::Neg(x) => -value(x)?,
            Kind::Binary(BinOp::Pow, base, exp) => match value(exp)? {
                n if n.fract() == 0.0 && n.abs() <= 64.0 => value(base)?.powi(n as i32),
                _ => return Err("an exponent must be an integer from -64 to 64".into()),
            },
            Kind::Binary(op, a, b) => {
                let (a, b) = (value(a)?, value(b)?);
                match op {
                    BinOp::Add => a + b,
                    BinOp::Sub => a - b,
                    BinOp::Mul => a * b,
                    _ => a / b,
                }
            }
            _ => return Err("only numbers, `+ - * / ^` and parentheses may appear".into()),
        })
    }
    let node = expr::parse(text).map_err(|e| e.message)?;
    let v = value(&node)?;
    if v.is_finite() {
        Ok(v)
    } else {
        Err("its value is not a finite number".into())
    }
}
