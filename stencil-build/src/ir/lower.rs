//! Spec -> IR: resolves names, checks types and roles, unrolls `sum`, and
//! reports every problem at its place in the file.

use std::collections::HashMap;
use std::ops::Range;

use heck::ToSnakeCase;
use toml::Spanned;

use super::{
    Access, Boundary, Dtype, Expr, Field, Func, Op, Role, Slot, Statement, Stencil, Version, tiling,
};
use crate::diagnostic::{Diagnostic, closest};
use crate::spec::expr::{self, BinOp, Kind, Node};
use crate::spec::{Source, Spec};

/// Largest |offset| accepted along an axis.
pub const MAX_OFFSET: i64 = 32;
/// Most terms one `sum` may unroll to.
const MAX_SUM_TERMS: i64 = 4096;
/// Most nodes one statement may have after unrolling.
const MAX_NODES: usize = 1 << 18;

/// Names the generated code or the expression language keeps for itself.
const RESERVED: [&str; 8] = [
    "sum", "prev", "shape", "params", "steps", "kernels", "cells", "io",
];

/// Checks a parsed spec and lowers it to the IR.
pub fn lower(spec: &Spec, src: &Source) -> Result<Stencil, Diagnostic> {
    let section = spec.stencil.get_ref();
    let name = stencil_name(section.name.as_ref(), src)?;
    let dtype = dtype(&section.dtype, src)?;
    let axes = axes(&section.axes, src)?;
    let mut names = Names::default();
    let fields = fields(spec, src, &mut names)?;
    let params = params(spec, dtype, src, &mut names)?;
    let constants = constants(spec, dtype, src, &mut names)?;
    let boundary = boundary(spec, src)?;
    let tiling = tiling::check(&spec.tiling, axes.len(), src)?;
    let ctx = Context {
        src,
        fields: &fields,
        params: &params,
        constants: &constants,
        dims: axes.len(),
        dtype,
    };
    let statements = statements(spec, &ctx)?;
    check_roles(spec, &fields, &statements, src)?;
    let stencil = Stencil {
        name,
        path: src.path.clone(),
        doc: section.doc.clone(),
        dtype,
        axes,
        fields,
        params,
        statements,
        boundary,
        tiling,
    };
    tiling::check_fusion(&spec.tiling, &stencil, src)?;
    Ok(stencil)
}

fn is_keyword(name: &str) -> bool {
    syn::parse_str::<syn::Ident>(name).is_err()
}

/// Lower-case snake case without `__` (the generated code keeps `__` names
/// and upper-case names for itself).
fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !name.contains("__")
}

/// Checks that `name` can be used as a Rust and C identifier.
fn identifier(name: &str, span: Range<usize>, what: &str, src: &Source) -> Result<(), Diagnostic> {
    if !is_identifier(name) {
        let fixed = name.to_snake_case();
        let hint = if is_identifier(&fixed) && fixed != name {
            format!("write `{fixed}`")
        } else {
            "use lower-case letters, digits and single `_`, starting with a letter".into()
        };
        return Err(src
            .error(
                span,
                format!("{what} `{name}` is not a lower-case identifier"),
            )
            .with_hint(hint));
    }
    if is_keyword(name) {
        return Err(src
            .error(span, format!("{what} `{name}` is a Rust keyword"))
            .with_hint(format!("rename it, e.g. `{name}_`")));
    }
    if RESERVED.contains(&name) || Func::ALL.iter().any(|f| f.name() == name) {
        return Err(src
            .error(span, format!("{what} `{name}` is a reserved name"))
            .with_hint(format!("rename it, e.g. `{name}_`")));
    }
    Ok(())
}

/// Refuses a stencil name that a module of the generated runtime has.
fn not_a_runtime_module(name: &str, span: Range<usize>, src: &Source) -> Result<(), Diagnostic> {
    if !crate::codegen::rust::RUNTIME_MODULES.contains(&name) {
        return Ok(());
    }
    Err(src
        .error(
            span,
            format!("stencil name `{name}` is the name of a generated runtime module"),
        )
        .with_hint(format!("rename it, e.g. `{name}_`")))
}

fn stencil_name(name: Option<&Spanned<String>>, src: &Source) -> Result<String, Diagnostic> {
    match name {
        Some(n) => {
            identifier(n.get_ref(), n.span(), "stencil name", src)?;
            not_a_runtime_module(n.get_ref(), n.span(), src)?;
            Ok(n.get_ref().clone())
        }
        None => {
            let stem = src
                .path
                .file_name()
                .and_then(|f| f.to_str())
                .ok_or_else(|| {
                    src.error(
                        0..0,
                        "the spec's file name is not valid UTF-8, so it cannot name the stencil",
                    )
                    .with_hint("add `name = \"...\"` to [stencil], or rename the file")
                })?;
            let stem = stem
                .strip_suffix(".stencil.toml")
                .unwrap_or(stem)
                .to_snake_case();
            identifier(&stem, 0..0, "stencil name (from the file name)", src)
                .and_then(|()| not_a_runtime_module(&stem, 0..0, src))
                .map_err(|d| d.with_hint("add `name = \"...\"` to [stencil]"))?;
            Ok(stem)
        }
    }
}

fn dtype(d: &Spanned<String>, src: &Source) -> Result<Dtype, Diagnostic> {
    match d.get_ref().as_str() {
        "f32" => Ok(Dtype::F32),
        "f64" => Ok(Dtype::F64),
        other => Err(src
            .error(d.span(), format!("unsupported dtype `{other}`"))
            .with_hint("write `dtype = \"f32\"` or `dtype = \"f64\"`")),
    }
}

fn axes(list: &Spanned<Vec<Spanned<String>>>, src: &Source) -> Result<Vec<String>, Diagnostic> {
    let axes = list.get_ref();
    if axes.is_empty() || axes.len() > 3 {
        return Err(src
            .error(
                list.span(),
                format!("a stencil has 1 to 3 axes, not {}", axes.len()),
            )
            .with_hint("list the axes slowest first, e.g. `axes = [\"z\", \"y\", \"x\"]`"));
    }
    for (i, a) in axes.iter().enumerate() {
        identifier(a.get_ref(), a.span(), "axis", src)?;
        if axes[..i].iter().any(|b| b.get_ref() == a.get_ref()) {
            return Err(src
                .error(a.span(), format!("axis `{}` is listed twice", a.get_ref()))
                .with_hint("give each axis its own name"));
        }
    }
    Ok(axes.iter().map(|a| a.get_ref().clone()).collect())
}

/// Names declared so far across [fields], [params] and [constants].
#[derive(Default)]
struct Names(HashMap<String, &'static str>);

impl Names {
    fn declare(
        &mut self,
        key: &Spanned<String>,
        what: &'static str,
        src: &Source,
    ) -> Result<(), Diagnostic> {
        identifier(key.get_ref(), key.span(), what, src)?;
        if let Some(earlier) = self.0.insert(key.get_ref().clone(), what) {
            return Err(src
                .error(
                    key.span(),
                    format!("`{}` is already declared as a {earlier}", key.get_ref()),
                )
                .with_hint(
                    "fields, params and constants share one namespace: rename one of them",
                ));
        }
        Ok(())
    }
}

fn fields(spec: &Spec, src: &Source, names: &mut Names) -> Result<Vec<Field>, Diagnostic> {
    let mut fields = Vec::new();
    for (key, decl) in &spec.fields.0 {
        names.declare(key, "field", src)?;
        let d = decl.get_ref();
        let role = match d.role.get_ref().as_str() {
            "state" => Role::State { levels: 1 },
            "input" => Role::Input,
            "temp" => Role::Temp,
            other => {
                return Err(src
                    .error(d.role.span(), format!("unknown role `{other}`"))
                    .with_hint("use `state` (updated each step), `input` (read-only) or `temp` (scratch within a step)"));
            }
        };
        let role = match (&d.levels, role) {
            (None, role) => role,
            (Some(l), Role::State { .. }) => match *l.get_ref() {
                n @ (1 | 2) => Role::State { levels: n as u8 },
                n => {
                    return Err(src
                        .error(l.span(), format!("`levels = {n}` cannot work"))
                        .with_hint("use `levels = 2` to read `f.prev[..]`, or 1"));
                }
            },
            (Some(l), _) => {
                return Err(src
                    .error(l.span(), "only state fields keep time levels")
                    .with_hint("remove `levels`, or make the field `role = \"state\"`"));
            }
        };
        fields.push(Field {
            name: key.get_ref().clone(),
            role,
            doc: d.doc.clone(),
        });
    }
    for (key, _) in &spec.fields.0 {
        if let Some(base) = key.get_ref().strip_suffix("_prev")
            && fields.iter().any(|f| f.name == base && f.has_prev())
        {
            return Err(src
                .error(
                    key.span(),
                    format!(
                        "`{}` clashes with the generated argument for `{base}.prev`",
                        key.get_ref()
                    ),
                )
                .with_hint("rename this field"));
        }
    }
    if fields.is_empty() {
        return Err(src
            .error(spec.stencil.span(), "the stencil declares no fields")
            .with_hint("add `[fields]` with e.g. `u = { role = \"state\" }`"));
    }
    Ok(fields)
}

fn params(
    spec: &Spec,
    dtype: Dtype,
    src: &Source,
    names: &mut Names,
) -> Result<Vec<String>, Diagnostic> {
    let mut params = Vec::new();
    for (key, ty) in &spec.params.0 {
        names.declare(key, "param", src)?;
        let t = ty.get_ref().as_str();
        if t != dtype.rust() {
            let what = if t == "f32" || t == "f64" {
                "type mismatch: "
            } else {
                ""
            };
            return Err(src
                .error(
                    ty.span(),
                    format!(
                        "{what}param `{}` is declared `{t}` but the stencil's dtype is `{}`",
                        key.get_ref(),
                        dtype.rust()
                    ),
                )
                .with_hint(format!("write `{} = \"{}\"`", key.get_ref(), dtype.rust())));
        }
        params.push(key.get_ref().clone());
    }
    Ok(params)
}

/// A compile-time constant.
#[derive(Clone, Debug)]
enum Constant {
    Scalar(f64, Option<i64>),
    Table(Vec<f64>),
}

fn constants(
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

fn boundary(spec: &Spec, src: &Source) -> Result<Boundary, Diagnostic> {
    let Some(b) = &spec.boundary else {
        return Ok(Boundary::Fixed);
    };
    let kind = &b.get_ref().kind;
    match kind.get_ref().as_str() {
        "fixed" => Ok(Boundary::Fixed),
        "periodic" => Ok(Boundary::Periodic),
        other => Err(src
            .error(kind.span(), format!("unknown boundary `{other}`"))
            .with_hint("use `kind = \"fixed\"` or `kind = \"periodic\"`")),
    }
}

/// Everything an expression may refer to.
struct Context<'a> {
    src: &'a Source,
    fields: &'a [Field],
    params: &'a [String],
    constants: &'a HashMap<String, Constant>,
    dims: usize,
    dtype: Dtype,
}

fn statements(spec: &Spec, ctx: &Context) -> Result<Vec<Statement>, Diagnostic> {
    if spec.update.is_empty() {
        return Err(ctx
            .src
            .error(
                spec.stencil.span(),
                "the stencil has no [[update]] statement",
            )
            .with_hint("add `[[update]]` with `target = \"u\"` and `expr = \"...\"`"));
    }
    let mut written = vec![false; ctx.fields.len()];
    let mut out = Vec::new();
    for update in &spec.update {
        let u = update.get_ref();
        let target = target(&u.target, ctx, &written)?;
        let mut lowerer = Lowerer {
            ctx,
            text: &u.expr,
            written: &written,
            vars: Vec::new(),
            nodes: 0,
        };
        let node = expr::parse(u.expr.get_ref()).map_err(|e| {
            let d = ctx
                .src
                .error(ctx.src.inner_span(&u.expr, e.span), e.message);
            match e.hint {
                Some(h) => d.with_hint(h),
                None => d,
            }
        })?;
        let expr = lowerer.value(&node)?;
        written[target] = true;
        out.push(Statement {
            target,
            expr,
            text: u.expr.get_ref().trim().to_string(),
        });
    }
    Ok(out)
}

fn target(t: &Spanned<String>, ctx: &Context, written: &[bool]) -> Result<usize, Diagnostic> {
    let name = t.get_ref();
    let Some(i) = ctx.fields.iter().position(|f| &f.name == name) else {
        let known: Vec<_> = ctx
            .fields
            .iter()
            .filter(|f| f.role != Role::Input)
            .map(|f| f.name.as_str())
            .collect();
        let hint = match closest(name, known.iter().copied()) {
            Some(c) => format!("did you mean `{c}`?"),
            None => format!(
                "declare it in [fields]; writable fields: {}",
                known.join(", ")
            ),
        };
        return Err(ctx
            .src
            .error(t.span(), format!("unknown field `{name}`"))
            .with_hint(hint));
    };
    match ctx.fields[i].role {
        Role::Input => Err(ctx
            .src
            .error(t.span(), format!("`{name}` is an input grid and cannot be written"))
            .with_hint(format!("declare it `{name} = {{ role = \"state\" }}` to update it each step"))),
        _ if written[i] => Err(ctx
            .src
            .error(t.span(), format!("`{name}` is already written by an earlier [[update]]"))
            .with_hint("each field is written once per step: compute intermediate values into a `temp` field")),
        _ => Ok(i),
    }
}

/// After all statements: every state field updated, every temp read.
fn check_roles(
    spec: &Spec,
    fields: &[Field],
    statements: &[Statement],
    src: &Source,
) -> Result<(), Diagnostic> {
    for ((key, _), (i, f)) in spec.fields.0.iter().zip(fields.iter().enumerate()) {
        let written = statements.iter().any(|s| s.target == i);
        let read = statements
            .iter()
            .any(|s| s.slots().iter().any(|slot| slot.field == i));
        if matches!(f.role, Role::State { .. }) && !written {
            return Err(src
                .error(
                    key.span(),
                    format!("state field `{}` is never updated", f.name),
                )
                .with_hint(format!(
                    "add an [[update]] with `target = \"{}\"`, or declare it `role = \"input\"`",
                    f.name
                )));
        }
        if f.role == Role::Temp && !read {
            return Err(src
                .error(
                    key.span(),
                    format!("temp field `{}` is written but never read", f.name),
                )
                .with_hint("read it in a later [[update]], or remove it"));
        }
    }
    Ok(())
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

/// Lowers one expression string.
struct Lowerer<'a> {
    ctx: &'a Context<'a>,
    text: &'a Spanned<String>,
    written: &'a [bool],
    /// `sum` indices in scope, innermost last.
    vars: Vec<(String, i64)>,
    nodes: usize,
}

impl Lowerer<'_> {
    fn error(&self, span: &Range<usize>, message: impl Into<String>) -> Diagnostic {
        self.ctx
            .src
            .error(self.ctx.src.inner_span(self.text, span.clone()), message)
    }

    fn var(&self, name: &str) -> Option<i64> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|&(_, v)| v)
    }

    /// Lowers a node in value position.
    fn value(&mut self, node: &Node) -> Result<Expr, Diagnostic> {
        self.nodes += 1;
        if self.nodes > MAX_NODES {
            return Err(self
                .error(
                    &node.span,
                    format!("the expression unrolls to more than {MAX_NODES} operations"),
                )
                .with_hint("use fewer or shorter `sum` terms"));
        }
        Ok(match &node.kind {
            Kind::Number { value, .. } => {
                Expr::Lit(self.ctx.dtype.check_value(*value).map_err(|largest| {
                    self.error(
                        &node.span,
                        format!(
                            "`{}` is beyond the range of {}",
                            &self.text.get_ref()[node.span.clone()],
                            self.ctx.dtype.rust()
                        ),
                    )
                    .with_hint(format!("use a value of magnitude at most {largest:.6e}"))
                })?)
            }
            Kind::Name(name) => self.name(name, &node.span)?,
            Kind::Index {
                name,
                name_span,
                prev,
                args,
            } => self.index(name, name_span, *prev, args, &node.span)?,
            Kind::Call {
                name,
                name_span,
                args,
            } => self.call(name, name_span, args, &node.span)?,
            Kind::Neg(x) => match self.value(x)? {
                Expr::Lit(v) => Expr::Lit(-v),
                e => Expr::Neg(Box::new(e)),
            },
            Kind::Binary(op, a, b) => {
                let op = match op {
                    BinOp::Add => Op::Add,
                    BinOp::Sub => Op::Sub,
                    BinOp::Mul => Op::Mul,
                    BinOp::Div => Op::Div,
                    BinOp::Pow => return self.power(a, b),
                };
                Expr::Bin(op, Box::new(self.value(a)?), Box::new(self.value(b)?))
            }
        })
    }

    fn power(&mut self, base: &Node, exp: &Node) -> Result<Expr, Diagnostic> {
        let n = self.integer(exp, "an exponent")?;
        if !(-64..=64).contains(&n) {
            return Err(self
                .error(&exp.span, format!("exponent {n} is too large"))
                .with_hint("use an integer exponent between -64 and 64"));
        }
        Ok(Expr::PowI(Box::new(self.value(base)?), n as i32))
    }

    fn name(&self, name: &str, span: &Range<usize>) -> Result<Expr, Diagnostic> {
        if let Some(v) = self.var(name) {
            return Ok(Expr::Lit(v as f64));
        }
        if let Some(i) = self.ctx.params.iter().position(|p| p == name) {
            return Ok(Expr::Param(i));
        }
        match self.ctx.constants.get(name) {
            Some(Constant::Scalar(v, _)) => return Ok(Expr::Lit(*v)),
            Some(Constant::Table(t)) => {
                return Err(self
                    .error(
                        span,
                        format!(
                            "type mismatch: `{name}` is a table of {} values, not a scalar",
                            t.len()
                        ),
                    )
                    .with_hint(format!("index it, e.g. `{name}[0]`")));
            }
            None => {}
        }
        if self.ctx.fields.iter().any(|f| f.name == name) {
            let zeros = vec!["0"; self.ctx.dims].join(",");
            return Err(self
                .error(span, format!("field `{name}` is read without offsets"))
                .with_hint(format!("write `{name}[{zeros}]` for the cell itself")));
        }
        Err(self.unknown(name, span, "name"))
    }

    fn unknown(&self, name: &str, span: &Range<usize>, what: &str) -> Diagnostic {
        let mut known: Vec<&str> = self.ctx.fields.iter().map(|f| f.name.as_str()).collect();
        known.extend(self.ctx.params.iter().map(String::as_str));
        known.extend(self.ctx.constants.keys().map(String::as_str));
        known.extend(self.vars.iter().map(|(n, _)| n.as_str()));
        let hint = match closest(name, known.iter().copied()) {
            Some(c) => format!("did you mean `{c}`?"),
            None => "declare it in [fields], [params] or [constants]".to_string(),
        };
        self.error(span, format!("unknown {what} `{name}`"))
            .with_hint(hint)
    }

    fn index(
        &mut self,
        name: &str,
        name_span: &Range<usize>,
        prev: bool,
        args: &[Node],
        span: &Range<usize>,
    ) -> Result<Expr, Diagnostic> {
        if let Some(field) = self.ctx.fields.iter().position(|f| f.name == name) {
            return self.read(field, name_span, prev, args, span);
        }
        if prev {
            return Err(self.error(
                name_span,
                format!("`{name}` is not a field; only fields have a `.prev` level"),
            ));
        }
        match self.ctx.constants.get(name) {
            Some(Constant::Table(t)) => {
                let [arg] = args else {
                    return Err(self
                        .error(
                            span,
                            format!("table `{name}` takes one index, not {}", args.len()),
                        )
                        .with_hint(format!("write `{name}[i]`")));
                };
                let i = self.integer(arg, "a table index")?;
                match usize::try_from(i).ok().and_then(|i| t.get(i)) {
                    Some(v) => Ok(Expr::Lit(*v)),
                    None => Err(self
                        .error(
                            &arg.span,
                            format!(
                                "index {i} is out of range for table `{name}` of {} values",
                                t.len()
                            ),
                        )
                        .with_hint(format!("use an index from 0 to {}", t.len() - 1))),
                }
            }
            Some(Constant::Scalar(..)) => Err(self
                .error(
                    span,
                    format!("type mismatch: constant `{name}` is a scalar and cannot be indexed"),
                )
                .with_hint(format!("write `{name}` without brackets"))),
            None if self.ctx.params.iter().any(|p| p == name) || self.var(name).is_some() => {
                Err(self
                    .error(
                        span,
                        format!("type mismatch: `{name}` is a scalar and cannot be indexed"),
                    )
                    .with_hint(format!("write `{name}` without brackets")))
            }
            None => Err(self.unknown(name, name_span, "field or table")),
        }
    }

    fn read(
        &mut self,
        field: usize,
        name_span: &Range<usize>,
        prev: bool,
        args: &[Node],
        span: &Range<usize>,
    ) -> Result<Expr, Diagnostic> {
        let f = &self.ctx.fields[field];
        let dims = self.ctx.dims;
        if args.len() != dims {
            let zeros = vec!["0"; dims].join(",");
            return Err(self
                .error(
                    span,
                    format!(
                        "field `{}` is read with {} offsets but the stencil has {dims} axes",
                        f.name,
                        args.len()
                    ),
                )
                .with_hint(format!(
                    "give one offset per axis, slowest first: `{}[{zeros}]`",
                    f.name
                )));
        }
        let version = match (f.role, prev) {
            (Role::State { levels: 2 }, true) => Version::Prev,
            (Role::State { .. }, true) => {
                return Err(self
                    .error(
                        name_span,
                        format!(
                            "field `{}` keeps one time level, so `.prev` cannot be read",
                            f.name
                        ),
                    )
                    .with_hint(format!(
                        "declare it `{} = {{ role = \"state\", levels = 2 }}`",
                        f.name
                    )));
            }
            (_, true) => {
                return Err(self.error(
                    name_span,
                    format!(
                        "only state fields have a `.prev` level; `{}` is not one",
                        f.name
                    ),
                ));
            }
            (Role::Input, false) => Version::Start,
            (Role::State { .. }, false) if !self.written[field] => Version::Start,
            (Role::State { .. }, false) => Version::Updated,
            (Role::Temp, false) if self.written[field] => Version::Updated,
            (Role::Temp, false) => {
                return Err(self
                    .error(
                        name_span,
                        format!(
                            "temp field `{}` is read before any [[update]] writes it",
                            f.name
                        ),
                    )
                    .with_hint("move the [[update]] that computes it before this one"));
            }
        };
        let mut offset = Vec::with_capacity(dims);
        for arg in args {
            let d = self.integer(arg, "an offset")?;
            if d.abs() > MAX_OFFSET {
                return Err(self
                    .error(
                        &arg.span,
                        format!("offset {d} is beyond the largest radius supported ({MAX_OFFSET})"),
                    )
                    .with_hint("use offsets between -32 and 32"));
            }
            offset.push(d);
        }
        Ok(Expr::Read(Access {
            slot: Slot { field, version },
            offset,
        }))
    }

    /// Evaluates a compile-time integer (offsets, table indices, exponents, sum bounds).
    fn integer(&self, node: &Node, what: &str) -> Result<i64, Diagnostic> {
        let not_const = |why: String| {
            self.error(
                &node.span,
                format!("{what} must be a compile-time integer; {why}"),
            )
            .with_hint(
                "use integer literals, `sum` indices, integer constants and `+ - *` between them",
            )
        };
        let v = match &node.kind {
            Kind::Number {
                integer: Some(i), ..
            } => Some(*i),
            Kind::Number { value, .. } => {
                let text = &self.text.get_ref()[node.span.clone()];
                if text.bytes().all(|b| b.is_ascii_digit()) {
                    let most = if what == "an offset" {
                        MAX_OFFSET
                    } else {
                        i64::MAX
                    };
                    return Err(self
                        .error(&node.span, format!("{what} `{text}` is too large"))
                        .with_hint(format!("use an integer of at most {most}")));
                }
                let diagnostic = not_const(format!("`{text}` is not an integer"));
                return Err(if value.fract() == 0.0 && value.abs() < 1e15 {
                    diagnostic.with_hint(format!("write `{}`", *value as i64))
                } else {
                    diagnostic
                });
            }
            Kind::Name(n) => match (self.var(n), self.ctx.constants.get(n)) {
                (Some(v), _) => Some(v),
                (None, Some(Constant::Scalar(_, Some(i)))) => Some(*i),
                _ if self.ctx.params.iter().any(|p| p == n) => {
                    return Err(not_const(format!("`{n}` is a runtime parameter")));
                }
                (None, None) if !self.ctx.fields.iter().any(|f| &f.name == n) => {
                    return Err(self.unknown(n, &node.span, "name"));
                }
                _ => return Err(not_const(format!("`{n}` is not an integer constant"))),
            },
            Kind::Neg(x) => self.integer(x, what)?.checked_neg(),
            Kind::Binary(op @ (BinOp::Add | BinOp::Sub | BinOp::Mul), a, b) => {
                let (a, b) = (self.integer(a, what)?, self.integer(b, what)?);
                match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    _ => a.checked_mul(b),
                }
            }
            _ => {
                return Err(not_const(
                    "it depends on values known only at run time".into(),
                ));
            }
        };
        v.ok_or_else(|| not_const("it overflows".into()))
    }

    fn call(
        &mut self,
        name: &str,
        name_span: &Range<usize>,
        args: &[Node],
        span: &Range<usize>,
    ) -> Result<Expr, Diagnostic> {
        if name == "sum" {
            return self.sum(args, span);
        }
        let Some(func) = Func::ALL.into_iter().find(|f| f.name() == name) else {
            let names: Vec<_> = Func::ALL.iter().map(|f| f.name()).chain(["sum"]).collect();
            let hint = match closest(name, names.iter().copied()) {
                _ if matches!(name, "pow" | "powf" | "powi") => {
                    "write `x^n` for an integer power n from -64 to 64".to_string()
                }
                Some(c) => format!("did you mean `{c}`?"),
                None => format!("the functions are: {}", names.join(", ")),
            };
            return Err(self
                .error(name_span, format!("unknown function `{name}`"))
                .with_hint(hint));
        };
        if args.len() != func.arity() {
            return Err(self.error(
                span,
                format!(
                    "`{name}` takes {} argument(s), not {}",
                    func.arity(),
                    args.len()
                ),
            ));
        }
        let args = args
            .iter()
            .map(|a| self.value(a))
            .collect::<Result<_, _>>()?;
        Ok(Expr::Call(func, args))
    }

    /// `sum(i, lo, hi, body)`: `body` for i = lo..=hi, added left to right.
    fn sum(&mut self, args: &[Node], span: &Range<usize>) -> Result<Expr, Diagnostic> {
        let usage =
            "write `sum(r, 1, 4, c[r]*u[0,r])`: an index name, first and last value, and the term";
        let [index, lo, hi, body] = args else {
            return Err(self
                .error(span, format!("`sum` takes 4 arguments, not {}", args.len()))
                .with_hint(usage));
        };
        let Kind::Name(var) = &index.kind else {
            return Err(self
                .error(
                    &index.span,
                    "the first argument of `sum` must be a new index name",
                )
                .with_hint(usage));
        };
        let taken = self.ctx.fields.iter().any(|f| &f.name == var)
            || self.ctx.params.contains(var)
            || self.ctx.constants.contains_key(var)
            || self.var(var).is_some();
        if taken {
            return Err(self
                .error(
                    &index.span,
                    format!("sum index `{var}` hides a name already in use"),
                )
                .with_hint("pick another index name, e.g. `r`"));
        }
        let (lo_v, hi_v) = (
            self.integer(lo, "a sum bound")?,
            self.integer(hi, "a sum bound")?,
        );
        if hi_v < lo_v || hi_v - lo_v >= MAX_SUM_TERMS {
            return Err(self
                .error(span, format!("`sum` from {lo_v} to {hi_v} cannot work"))
                .with_hint(format!(
                    "the last value must be at least the first, and at most {MAX_SUM_TERMS} terms"
                )));
        }
        let mut total: Option<Expr> = None;
        for v in lo_v..=hi_v {
            self.vars.push((var.clone(), v));
            let term = self.value(body);
            self.vars.pop();
            let term = term?;
            total = Some(match total {
                None => term,
                Some(t) => Expr::Bin(Op::Add, Box::new(t), Box::new(term)),
            });
        }
        Ok(total.expect("a sum has at least one term"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::parse;

    const HEAD: &str = "[stencil]\ndtype = \"f64\"\naxes = [\"y\", \"x\"]\n";
    const FIELDS: &str = "[fields]\nu = { role = \"state\" }\nk = { role = \"input\" }\n[params]\na = \"f64\"\n[constants]\nc = [1.0, 2.0]\ns = 3\n";

    fn update(expr: &str) -> String {
        format!("{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n")
    }

    /// Lowers `text`, expecting an error; returns "line:col: message".
    fn error(text: &str) -> (String, Option<String>) {
        let src = Source {
            path: "bad.stencil.toml".into(),
            text: text.into(),
        };
        let d = match parse(&src) {
            Err(d) => d,
            Ok(spec) => lower(&spec, &src).expect_err("the spec should be rejected"),
        };
        let shown = d.to_string();
        assert!(
            shown.contains(&format!("--> bad.stencil.toml:{}:{}", d.line, d.column)),
            "{shown}"
        );
        (format!("{}:{}: {}", d.line, d.column, d.message), d.hint)
    }

    /// `line:col` of `needle` on the last line of `text` that starts with `key`.
    fn at(text: &str, key: &str, needle: &str) -> String {
        let (n, l) = text
            .lines()
            .enumerate()
            .filter(|(_, l)| l.starts_with(key))
            .last()
            .unwrap_or_else(|| panic!("no line starts with {key}"));
        format!(
            "{}:{}",
            n + 1,
            l.find(needle)
                .unwrap_or_else(|| panic!("{needle} not in {l}"))
                + 1
        )
    }

    /// Expects `text` to be rejected at `needle` on the last line starting with `key`.
    fn assert_error(text: &str, key: &str, needle: &str, message: &str, hint: Option<&str>) {
        let (got, got_hint) = error(text);
        assert_eq!(got, format!("{}: {message}", at(text, key, needle)));
        if let Some(h) = hint {
            let got_hint = got_hint.unwrap_or_default();
            assert!(got_hint.contains(h), "hint `{got_hint}` lacks `{h}`");
        }
    }

    #[test]
    fn toml_syntax() {
        let text = format!("{HEAD}[fields\nu = 1\n");
        let (got, _) = error(&text);
        assert!(got.starts_with("4:8: "), "{got}");
    }

    #[test]
    fn unknown_keys() {
        let text = format!("{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpresion = \"u[0,0]\"\n");
        let (got, hint) = error(&text);
        assert!(
            got.starts_with("14:1: unknown field `expresion`, expected `target` or `expr`"),
            "{got}"
        );
        assert!(hint.is_some());
        let text = format!("{HEAD}[tiling.cudaa]\nstrategy = \"naive\"\n");
        let (got, _) = error(&text);
        assert!(got.contains("unknown field `cudaa`"), "{got}");
    }

    #[test]
    fn unknown_names() {
        let text = update("u[0,0] + kk[0,0]");
        assert_error(
            &text,
            "expr",
            "kk",
            "unknown field or table `kk`",
            Some("did you mean `k`?"),
        );
        let text = update("u[0,0] * alpha");
        assert_error(
            &text,
            "expr",
            "alpha",
            "unknown name `alpha`",
            Some("declare it"),
        );
        let text = update("sqr(u[0,0])");
        assert_error(
            &text,
            "expr",
            "sqr",
            "unknown function `sqr`",
            Some("did you mean `sqrt`?"),
        );
        let text = format!("{HEAD}{FIELDS}[[update]]\ntarget = \"w\"\nexpr = \"u[0,0]\"\n");
        assert_error(&text, "target", "\"w\"", "unknown field `w`", None);
    }

    #[test]
    fn offset_arity_and_constness() {
        let text = update("u[0,0,1]");
        assert_error(
            &text,
            "expr",
            "u[0,0,1]",
            "field `u` is read with 3 offsets but the stencil has 2 axes",
            Some("`u[0,0]`"),
        );
        let text = update("u[0,a]");
        assert_error(
            &text,
            "expr",
            "a]",
            "an offset must be a compile-time integer; `a` is a runtime parameter",
            None,
        );
        let text = update("u[0,0.5]");
        assert_error(
            &text,
            "expr",
            "0.5",
            "an offset must be a compile-time integer; `0.5` is not an integer",
            None,
        );
        let text = update("u[0,40]");
        assert_error(
            &text,
            "expr",
            "40",
            "offset 40 is beyond the largest radius supported (32)",
            None,
        );
        let text = update("u[0,s-1] + u[0,-s]");
        let src = Source {
            path: "ok.stencil.toml".into(),
            text,
        };
        assert!(
            lower(&parse(&src).unwrap(), &src).is_ok(),
            "integer constants are compile-time offsets"
        );
    }

    #[test]
    fn writing_an_input_grid() {
        let text = format!("{HEAD}{FIELDS}[[update]]\ntarget = \"k\"\nexpr = \"u[0,0]\"\n");
        assert_error(
            &text,
            "target",
            "\"k\"",
            "`k` is an input grid and cannot be written",
            Some("role = \"state\""),
        );
    }

    #[test]
    fn invalid_identifiers_and_keywords() {
        let text = format!("{HEAD}[fields]\nType = {{ role = \"state\" }}\n");
        assert_error(
            &text,
            "Type",
            "Type",
            "field `Type` is not a lower-case identifier",
            Some("write `type`"),
        );
        let text = format!("{HEAD}[fields]\nfn = {{ role = \"state\" }}\n");
        assert_error(
            &text,
            "fn",
            "fn",
            "field `fn` is a Rust keyword",
            Some("`fn_`"),
        );
        let text =
            format!("{HEAD}[fields]\nu = {{ role = \"state\" }}\n[params]\nsteps = \"f64\"\n");
        assert_error(
            &text,
            "steps",
            "steps",
            "param `steps` is a reserved name",
            None,
        );
        let text = "[stencil]\nname = \"heat-2d\"\ndtype = \"f64\"\naxes = [\"x\"]\n";
        assert_error(
            text,
            "name",
            "\"heat-2d\"",
            "stencil name `heat-2d` is not a lower-case identifier",
            Some("write `heat_2d`"),
        );
        let text = format!("{HEAD}[fields]\nu__v = {{ role = \"state\" }}\n");
        assert_error(
            &text,
            "u__v",
            "u__v",
            "field `u__v` is not a lower-case identifier",
            None,
        );
    }

    #[test]
    fn duplicate_names() {
        let text = format!("{HEAD}[fields]\nu = {{ role = \"state\" }}\n[params]\nu = \"f64\"\n");
        assert_error(
            &text,
            "u =",
            "u",
            "`u` is already declared as a field",
            Some("one namespace"),
        );
        let text = "[stencil]\ndtype = \"f64\"\naxes = [\"x\", \"x\"]\n";
        assert_error(text, "axes", "\"x\"]", "axis `x` is listed twice", None);
        let text = format!(
            "{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"u[0,0]\"\n[[update]]\ntarget = \"u\"\nexpr = \"u[0,0]\"\n"
        );
        assert_error(
            &text,
            "target",
            "\"u\"",
            "`u` is already written by an earlier [[update]]",
            Some("temp"),
        );
    }

    #[test]
    fn type_mismatches() {
        let text = format!("{HEAD}[fields]\nu = {{ role = \"state\" }}\n[params]\na = \"f32\"\n");
        assert_error(
            &text,
            "a =",
            "\"f32\"",
            "type mismatch: param `a` is declared `f32` but the stencil's dtype is `f64`",
            Some("a = \"f64\""),
        );
        let text = update("c * u[0,0]");
        assert_error(
            &text,
            "expr",
            "c *",
            "type mismatch: `c` is a table of 2 values, not a scalar",
            Some("`c[0]`"),
        );
        let text = update("s[0] * u[0,0]");
        assert_error(
            &text,
            "expr",
            "s[0]",
            "type mismatch: constant `s` is a scalar and cannot be indexed",
            None,
        );
        let text = update("a[1] * u[0,0]");
        assert_error(
            &text,
            "expr",
            "a[1]",
            "type mismatch: `a` is a scalar and cannot be indexed",
            None,
        );
        let text = update("u * 2");
        assert_error(
            &text,
            "expr",
            "u *",
            "field `u` is read without offsets",
            Some("`u[0,0]`"),
        );
        let text = update("u[0,0]^a");
        assert_error(
            &text,
            "expr",
            "a\"",
            "an exponent must be a compile-time integer; `a` is a runtime parameter",
            None,
        );
        let text = update("c[2] * u[0,0]");
        assert_error(
            &text,
            "expr",
            "2]",
            "index 2 is out of range for table `c` of 2 values",
            Some("from 0 to 1"),
        );
        let text = update("min(u[0,0])");
        assert_error(
            &text,
            "expr",
            "min",
            "`min` takes 2 argument(s), not 1",
            None,
        );
        let text =
            format!("{HEAD}[fields]\nu = {{ role = \"state\" }}\n[constants]\nw = \"big\"\n");
        assert_error(
            &text,
            "w =",
            "\"big\"",
            "constant `w` holds `big`, which is not an expression of numbers: only numbers, `+ - * / ^` and parentheses may appear",
            None,
        );
        let text = text.replace("\"big\"", "true");
        assert_error(
            &text,
            "w =",
            "true",
            "constant `w` must be a number, an expression of numbers in quotes, or a list of them",
            None,
        );
    }

    #[test]
    fn time_levels_and_temps() {
        let text = update("u.prev[0,0]");
        assert_error(
            &text,
            "expr",
            "u.prev",
            "field `u` keeps one time level, so `.prev` cannot be read",
            Some("levels = 2"),
        );
        let text = format!("{HEAD}[fields]\nu = {{ role = \"input\", levels = 2 }}\n");
        assert_error(
            &text,
            "u =",
            "2 }",
            "only state fields keep time levels",
            None,
        );
        let text = format!(
            "{HEAD}[fields]\nu = {{ role = \"state\" }}\nt = {{ role = \"temp\" }}\n[[update]]\ntarget = \"u\"\nexpr = \"t[0,0]\"\n"
        );
        assert_error(
            &text,
            "expr",
            "t[0,0]",
            "temp field `t` is read before any [[update]] writes it",
            Some("move"),
        );
        let text = format!(
            "{HEAD}[fields]\nu = {{ role = \"state\" }}\nv = {{ role = \"state\" }}\n[[update]]\ntarget = \"u\"\nexpr = \"v[0,0]\"\n"
        );
        assert_error(
            &text,
            "v =",
            "v",
            "state field `v` is never updated",
            Some("role = \"input\""),
        );
        let text = format!("{HEAD}[fields]\nu = {{ role = \"stat\" }}\n");
        assert_error(
            &text,
            "u =",
            "\"stat\"",
            "unknown role `stat`",
            Some("`state`"),
        );
    }

    #[test]
    fn sums_and_expression_syntax() {
        let text = update("sum(r, 1, 0, u[0,r])");
        assert_error(&text, "expr", "sum", "`sum` from 1 to 0 cannot work", None);
        let text = update("sum(u, 1, 2, u[0,0])");
        assert_error(
            &text,
            "expr",
            "u, 1",
            "sum index `u` hides a name already in use",
            None,
        );
        let text = update("sum(r, 1, 2)");
        assert_error(
            &text,
            "expr",
            "sum",
            "`sum` takes 4 arguments, not 3",
            Some("sum(r, 1, 4"),
        );
        let text = update("u[0,0] +* 2");
        assert_error(&text, "expr", "* 2", "expected a value, found `*`", None);
        let text = format!("{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = '''u[0,0] + @'''\n");
        assert_error(&text, "expr", "@", "unexpected character `@`", None);
    }

    #[test]
    fn sections_that_cannot_work() {
        let text = "[stencil]\ndtype = \"f16\"\naxes = [\"x\"]\n";
        assert_error(
            text,
            "dtype",
            "\"f16\"",
            "unsupported dtype `f16`",
            Some("\"f32\""),
        );
        let text = "[stencil]\ndtype = \"f64\"\naxes = [\"a\", \"b\", \"c\", \"d\"]\n";
        assert_error(text, "axes", "[", "a stencil has 1 to 3 axes, not 4", None);
        let text = format!("{HEAD}{FIELDS}[boundary]\nkind = \"wrap\"\n");
        assert_error(
            &text,
            "kind",
            "\"wrap\"",
            "unknown boundary `wrap`",
            Some("periodic"),
        );
        let text = format!("{HEAD}[fields]\nu = {{ role = \"state\" }}\n");
        assert_error(
            &text,
            "[stencil]",
            "[stencil]",
            "the stencil has no [[update]] statement",
            None,
        );
    }

    #[test]
    fn temporal_keys_that_belong_to_the_other_dimension_are_refused_where_written() {
        let fused = |strategy: &str, head: &str, expr: &str, key: &str| {
            format!(
                "{head}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n[tiling.cuda]\nstrategy = \"{strategy}\"\n{key} = 3\n"
            )
        };
        let temporal = |head: &str, expr: &str, key: &str| fused("temporal", head, expr, key);
        let head3 = HEAD.replace("[\"y\", \"x\"]", "[\"z\", \"y\", \"x\"]");
        assert_error(
            &fused("persistent", &head3, "u[0,0,1]", "vector"),
            "vector",
            "3",
            "`vector` of `persistent` sets the cells per lane of a 2-D stencil",
            Some("set its rows with `coarsen`"),
        );
        assert_error(
            &temporal(&head3, "u[0,0,1]", "vector"),
            "vector",
            "3",
            "`vector = 3` cannot work",
            Some("use 1, 2 or 4 cells"),
        );
        assert_error(
            &temporal(HEAD, "u[0,1]", "coarsen"),
            "coarsen",
            "3",
            "`coarsen` of `temporal` sets the cells per thread along the middle axis of a 3-D stencil",
            Some("a 2-D `temporal` thread computes one row"),
        );
    }

    #[test]
    fn a_3d_temporal_block_of_vectors_counts_the_warp_in_cells() {
        let head3 = HEAD.replace("[\"y\", \"x\"]", "[\"z\", \"y\", \"x\"]");
        let spec = |block: &str| {
            format!(
                "{head3}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"u[0,0,-2] + u[0,0,2]\"\n\
                 [tiling.cuda]\nstrategy = \"temporal\"\nvector = 2\nblock = {block}\n"
            )
        };
        // 16 threads of 2 cells: a warp's 32 cells.
        let src = Source {
            path: "ok.stencil.toml".into(),
            text: spec("[1, 8, 16]"),
        };
        lower(&parse(&src).unwrap(), &src).expect("16 threads of 2 cells fill a warp");
        assert_error(
            &spec("[1, 8, 12]"),
            "block",
            "12]",
            "the contiguous axis gets 12 threads of 2 cells, not a multiple of the cuda warp (32)",
            Some("try block = [1, 8, 16]"),
        );
    }

    #[test]
    fn fused_strategies_refuse_what_they_cannot_fuse_at_the_strategy_that_asks() {
        for name in ["temporal", "persistent"] {
            refuses_what_it_cannot_fuse(name);
        }
    }

    /// The refusals of fused strategy `name` (`temporal`, `persistent`), each at its `strategy` key.
    fn refuses_what_it_cannot_fuse(name: &str) {
        let temporal = format!("[tiling.hip]\nstrategy = \"{name}\"\n");
        let fused = |spec: String| {
            let text = format!("{spec}{temporal}");
            let (got, hint) = error(&text);
            assert!(
                got.starts_with(&at(&text, "strategy", &format!("\"{name}\""))),
                "{got}"
            );
            (got, hint.unwrap_or_default())
        };
        let periodic = format!(
            "{}[boundary]\nkind = \"periodic\"\n",
            update("u[0,1] + k[0,0]")
        );
        let (got, hint) = fused(periodic);
        assert!(got.contains(&format!("`{name}` fuses steps")), "{got}");
        assert!(got.contains("fixed boundary"), "{got}");
        assert!(hint.contains("`kind = \"fixed\"`"), "{hint}");
        let two = format!(
            "{HEAD}[fields]\nu = {{ role = \"state\" }}\nt = {{ role = \"temp\" }}\n[[update]]\ntarget = \"t\"\nexpr = \"u[0,1]\"\n[[update]]\ntarget = \"u\"\nexpr = \"t[0,-1]\"\n"
        );
        assert!(fused(two).0.contains("one [[update]]; this one has 2"));
        let leapfrog = |prev: &str| {
            format!(
                "{HEAD}[fields]\nu = {{ role = \"state\", levels = 2 }}\n[[update]]\ntarget = \"u\"\nexpr = \"u[0,1] - u.prev[{prev}]\"\n"
            )
        };
        // Leapfrog steps fuse where the previous level is read at the cell itself.
        let ok = format!("{}{temporal}", leapfrog("0,0"));
        assert!(crate::generate("ok", &ok).is_ok());
        let (got, hint) = fused(leapfrog("0,1"));
        assert!(
            got.contains(
                "read the previous level at the cell itself; this update reads `u.prev[0,1]`"
            ),
            "{got}"
        );
        assert!(hint.contains("stream"), "{hint}");
        // `persistent` starts its sweeps from the previous level: the update must read it.
        let unread = format!(
            "{HEAD}[fields]\nu = {{ role = \"state\", levels = 2 }}\n[[update]]\ntarget = \"u\"\nexpr = \"u[0,1]\"\n"
        );
        if name == "temporal" {
            assert!(crate::generate("ok", &format!("{unread}{temporal}")).is_ok());
        } else {
            let (got, hint) = fused(unread);
            assert!(got.contains("this update never reads `u.prev`"), "{got}");
            assert!(hint.contains("`levels = 1`"), "{hint}");
        }
        let line = "[stencil]\ndtype = \"f64\"\naxes = [\"x\"]\n[fields]\nu = { role = \"state\" }\n[[update]]\ntarget = \"u\"\nexpr = \"u[1]\"\n";
        let (got, _) = error(&format!("{line}{temporal}"));
        assert!(
            got.contains(&format!(
                "`{name}` marches along the slowest axis and needs at least 2 axes"
            )),
            "{got}"
        );
        let text = format!("{}{temporal}coarsen = 4\n", update("u[0,1]"));
        let (got, _) = error(&text);
        assert!(
            got.contains(&format!("`coarsen` of `{name}` sets")),
            "{got}"
        );
        assert!(got.contains("the middle axis of a 3-D stencil"), "{got}");
        let text = format!("{}{temporal}block = [2, 64]\n", update("u[0,1]"));
        let (got, hint) = error(&text);
        assert!(
            got.contains(&format!("`{name}` marches each block")),
            "{got}"
        );
        assert!(got.contains("its block extent there is 1, not 2"), "{got}");
        assert!(hint.unwrap_or_default().contains("[1, 64]"));
    }

    #[test]
    fn tiling_values_that_cannot_work() {
        let base = update("u[0,0]");
        let cases: [(&str, &str, &str, Option<&str>); 14] = [
            (
                "[tiling.openmp]\nblock = [4]\n",
                "[4]",
                "`block` has 1 entries but the stencil has 2 axes",
                Some("[8, 32]"),
            ),
            (
                "[tiling.openmp]\nblock = [0, 64]\n",
                "0",
                "block extent 0 cannot work",
                None,
            ),
            (
                "[tiling.cuda]\nstrategy = \"fastest\"\n",
                "\"fastest\"",
                "unknown strategy `fastest`",
                Some("naive"),
            ),
            (
                "[tiling.cuda]\nstrategy = \"tiled\"\nblock = [32, 8]\n",
                "8]",
                "the contiguous axis gets 8 threads, not a multiple of the cuda warp (32)",
                Some("[32, 32]"),
            ),
            (
                "[tiling.cuda]\nstrategy = \"naive\"\nblock = [64, 32]\n",
                "[64, 32]",
                "a block of 2048 threads is more than the 1024 a GPU block can hold",
                None,
            ),
            (
                "[tiling.hip]\nstrategy = \"stream\"\nblock = [4, 32]\n",
                "32]",
                "the contiguous axis gets 32 threads, not a multiple of the hip warp (64)",
                None,
            ),
            (
                "[tiling.cuda]\nstrategy = \"tiled\"\ntime_block = 4\n",
                "4",
                "`time_block` only applies to the temporal strategies",
                None,
            ),
            (
                "[tiling.cuda]\nstrategy = \"temporal\"\ntime_block = 0\n",
                "0",
                "`time_block = 0` cannot work",
                Some("between 1 and 64"),
            ),
            (
                "[tiling.cuda]\nstrategy = \"naive\"\ncoarsen = 2\n",
                "2",
                "`coarsen` only applies to `strategy = \"stream\"`, `\"temporal\"` or `\"persistent\"`",
                None,
            ),
            (
                "[tiling.cuda]\nstrategy = \"stream\"\ncoarsen = 17\n",
                "17",
                "`coarsen = 17` cannot work",
                Some("between 1 and 16"),
            ),
            (
                "[tiling.cuda]\nstrategy = \"tiled\"\nvector = 2\n",
                "2",
                "`vector` only applies to `strategy = \"stream\"`, `\"temporal\"` or `\"persistent\"`",
                None,
            ),
            (
                "[tiling.cuda]\nstrategy = \"stream\"\nchunk = 4\ncoarsen = 4\nvector = 3\n",
                "3",
                "`vector = 3` cannot work",
                Some("1, 2 or 4 cells"),
            ),
            (
                "[tiling.cuda]\nstrategy = \"temporal\"\noccupancy = 1\n",
                "1",
                "`occupancy` only applies to the `persistent` strategy",
                Some("set `strategy = \"persistent\"`, or remove `occupancy`"),
            ),
            (
                "[tiling.hip]\nstrategy = \"persistent\"\noccupancy = 0\n",
                "0",
                "`occupancy = 0` cannot work",
                Some("between 1 and 64"),
            ),
        ];
        for (section, needle, message, hint) in cases {
            let text = format!("{base}{section}");
            let key = section
                .lines()
                .rfind(|l| l.contains(needle) && !l.starts_with('['))
                .and_then(|l| l.split(' ').next())
                .unwrap_or("[");
            assert_error(&text, key, needle, message, hint);
        }
    }

    #[test]
    fn tensor_keys_and_the_stencils_it_cannot_run() {
        let star = |dtype: &str, expr: &str| {
            format!(
                "[stencil]\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = {{ role = \"state\" }}\n\
                 [[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n"
            )
        };
        let ok = star("f64", "u[0,0,0] + u[0,0,1] + u[0,-1,0] + u[1,0,0]");
        let tensor = "[tiling.cuda]\nstrategy = \"tensor\"\n";
        assert!(crate::generate("ok", &format!("{ok}{tensor}chunk = 7\n")).is_ok());
        let keys = [
            (
                "block = [1, 16, 32]\n",
                "[1, 16, 32]",
                "`tensor` blocks are 16 warps",
                "remove `block`",
            ),
            (
                "coarsen = 2\n",
                "2",
                "`coarsen` does not apply to `tensor`",
                "remove `coarsen`",
            ),
            (
                "vector = 2\n",
                "2",
                "`vector` does not apply to `tensor`",
                "`chunk`",
            ),
        ];
        for (line, needle, message, hint) in keys {
            let (got, got_hint) = error(&format!("{ok}{tensor}{line}"));
            let key = line.split(' ').next().unwrap_or_default();
            assert!(
                got.starts_with(&at(&format!("{ok}{tensor}{line}"), key, needle)),
                "{got}"
            );
            assert!(got.contains(message), "{got}");
            assert!(got_hint.unwrap_or_default().contains(hint));
        }
        let (got, _) = error(&format!(
            "{ok}[tiling.cuda]\nstrategy = \"naive\"\nchunk = 4\n"
        ));
        assert!(
            got.contains("`chunk` only applies to `strategy = \"stream\"`, `\"tensor\"`"),
            "{got}"
        );
        // What `tensor` cannot run is refused at `strategy`, saying why and what to write.
        let refused = [
            (
                ok.clone(),
                "[tiling.hip]\nstrategy = \"tensor\"\n",
                "the HIP backend has no such kernel",
            ),
            (
                star("f32", "u[0,0,1]"),
                tensor,
                "an f32 stencil there would round",
            ),
            (
                update("u[0,1] + u[1,0]"),
                tensor,
                "streams a 3-D stencil plane by plane; this one has 2 axes",
            ),
            (
                format!("{ok}[boundary]\nkind = \"periodic\"\n"),
                tensor,
                "a periodic grid's reads would wrap",
            ),
            (
                star("f64", "u[0,1,1] + u[0,0,0]"),
                tensor,
                "it reads `u[0,1,1]` off the axes",
            ),
            (
                star("f64", "u[0,0,1]*u[0,1,0]"),
                tensor,
                "not a sum of reads times constants",
            ),
            (
                "[stencil]\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n[fields]\nu = { role = \"state\" }\n\
                 t = { role = \"temp\" }\n[[update]]\ntarget = \"t\"\nexpr = \"u[0,0,1] + u[0,0,-1]\"\n\
                 [[update]]\ntarget = \"u\"\nexpr = \"t[0,1,0] + t[0,-1,0]\"\n"
                    .to_string(),
                tensor,
                "`tensor` runs stencils of one [[update]]; this one has 2",
            ),
        ];
        for (spec, section, message) in refused {
            let text = format!("{spec}{section}");
            let (got, hint) = error(&text);
            assert!(
                got.starts_with(&at(&text, "strategy", "\"tensor\"")),
                "{got}"
            );
            assert!(got.contains(message), "{got}");
            assert!(hint.unwrap_or_default().contains("`strategy = \"stream\"`"));
        }
    }

    /// Lowers `text`, expecting success.
    fn lowered(text: &str) -> Stencil {
        let src = Source {
            path: "good.stencil.toml".into(),
            text: text.into(),
        };
        lower(&parse(&src).unwrap(), &src).unwrap()
    }

    #[test]
    fn literals_beyond_the_dtype_and_integers_beyond_i64() {
        let f32_fields = FIELDS.replace("\"f64\"", "\"f32\"");
        let f32_head = HEAD.replace("f64", "f32");
        let text =
            format!("{f32_head}{f32_fields}[[update]]\ntarget = \"u\"\nexpr = \"u[0,0]*1e39\"\n");
        assert_error(
            &text,
            "expr",
            "1e39",
            "`1e39` is beyond the range of f32",
            Some("at most 3.402823e38"),
        );
        // The same literal fits an f64 stencil.
        assert_eq!(lowered(&update("u[0,0]*1e39")).statements.len(), 1);
        let text = format!(
            "{f32_head}[fields]\nu = {{ role = \"state\" }}\n[constants]\nbig = [1.0, 1e39]\n\
             [[update]]\ntarget = \"u\"\nexpr = \"big[0]*u[0,0]\"\n"
        );
        assert_error(
            &text,
            "big",
            "[1.0",
            "constant `big` holds a value beyond the range of f32",
            None,
        );
        assert_error(
            &update("u[0,99999999999999999999]"),
            "expr",
            "9999",
            "an offset `99999999999999999999` is too large",
            Some("at most 32"),
        );
        assert_error(
            &update("u[0,0]^2.0"),
            "expr",
            "2.0",
            "an exponent must be a compile-time integer; `2.0` is not an integer",
            Some("write `2`"),
        );
        assert_error(
            &update("pow(u[0,0], 2)"),
            "expr",
            "pow",
            "unknown function `pow`",
            Some("write `x^n`"),
        );
    }

    #[test]
    fn constants_may_be_expressions_of_numbers() {
        let text = format!(
            "{HEAD}[fields]\nu = {{ role = \"state\" }}\n[constants]\nc = [\"4/3\", -0.5, \"-1/12\", \"2^-3\"]\n\
             d = \"(1 + 2) * 0.5\"\n[[update]]\ntarget = \"u\"\n\
             expr = \"d*u[0,0] + c[0]*u[0,1] + c[2]*u[0,-1] + c[3]*u[1,0]\"\n"
        );
        let mut lits = Vec::new();
        collect_literals(&lowered(&text).statements[0].expr, &mut lits);
        assert_eq!(lits, [1.5, 4.0 / 3.0, -1.0 / 12.0, 0.125]);
        let with = |value: &str| text.replace("d = \"(1 + 2) * 0.5\"", &format!("d = {value}"));
        let (got, _) = error(&with("\"u*2\""));
        assert!(
            got.contains("constant `d` holds `u*2`, which is not an expression of numbers"),
            "{got}"
        );
        let (got, _) = error(&with("[[1, 2], [3, 4]]"));
        assert!(
            got.contains("constant `d` is a nested list; tables have one index"),
            "{got}"
        );
        let unquoted = with("[4/3]");
        let (got, hint) = error(&unquoted);
        assert!(got.starts_with(&at(&unquoted, "d =", "4/3")), "{got}");
        assert!(hint.unwrap_or_default().contains("`\"4/3\"`"));
    }

    fn collect_literals(e: &crate::ir::Expr, out: &mut Vec<f64>) {
        use crate::ir::Expr;
        match e {
            Expr::Lit(v) => out.push(*v),
            Expr::Neg(x) | Expr::PowI(x, _) => collect_literals(x, out),
            Expr::Bin(_, a, b) => {
                collect_literals(a, out);
                collect_literals(b, out);
            }
            _ => {}
        }
    }

    #[test]
    fn errors_in_multi_line_and_escaped_expressions_point_at_their_text() {
        let lines = "\n  u[0,0]\n  + 0.1 * \\\n        u[0,1] + 0.1*v[1,0]\n";
        let basic =
            format!("{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"\"\"{lines}\"\"\"\n");
        assert_error(
            &basic,
            "        u[0,1]",
            "v[",
            "unknown field or table `v`",
            None,
        );
        // A literal string keeps its backslash, which is no operator.
        let literal = format!("{HEAD}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = '''{lines}'''\n");
        assert_error(&literal, "  + 0.1", "\\", "unexpected character `\\`", None);
        let escaped = update("u[0,0] + \\u00e9");
        assert_error(
            &escaped,
            "expr",
            "\\u00e9",
            "unexpected character `é`",
            None,
        );
    }

    #[test]
    fn fused_strategies_refuse_updates_that_do_not_read_their_target_and_1d_grids() {
        for name in ["temporal", "persistent"] {
            let text = format!(
                "{HEAD}[fields]\nout = {{ role = \"state\" }}\nimg = {{ role = \"input\" }}\n[[update]]\ntarget = \"out\"\n\
                 expr = \"img[-1,0] + img[1,0] - 2*img[0,0]\"\n[tiling.cuda]\nstrategy = \"{name}\"\n"
            );
            let (got, hint) = error(&text);
            assert!(got.starts_with(&at(&text, "strategy", "\"")), "{got}");
            assert!(got.contains("this update never reads `out`"), "{got}");
            assert!(hint.unwrap_or_default().contains("stream"));
            let st =
                lowered(&text.replace(&format!("strategy = \"{name}\""), "strategy = \"auto\""));
            assert!(crate::ir::unfusable(&st, name).is_some());
        }
        let leapfrog = "[stencil]\ndtype = \"f64\"\naxes = [\"x\"]\n[fields]\nu = { role = \"state\", levels = 2 }\n\
                        [[update]]\ntarget = \"u\"\nexpr = \"2*u[0] - u.prev[0] + 0.1*(u[1] + u[-1] - 2*u[0])\"\n";
        let (why, hint) = crate::ir::unfusable(&lowered(leapfrog), "temporal").unwrap();
        assert!(why.contains("this stencil has 1"), "{why}");
        assert!(hint.contains("tiled"), "{hint}");
    }

    #[test]
    fn stencils_cannot_take_the_names_of_runtime_modules() {
        for module in crate::codegen::rust::RUNTIME_MODULES {
            let text = HEAD.replace("[stencil]\n", &format!("[stencil]\nname = \"{module}\"\n"));
            let text = format!("{text}{FIELDS}[[update]]\ntarget = \"u\"\nexpr = \"u[0,1]\"\n");
            assert_error(
                &text,
                "name",
                &format!("\"{module}\""),
                &format!("stencil name `{module}` is the name of a generated runtime module"),
                Some(&format!("`{module}_`")),
            );
        }
    }
}
