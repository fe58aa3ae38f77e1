//! Spec -> IR: resolves names, checks types and roles, unrolls `sum`, and
//! reports every problem at its place in the file.

use std::collections::HashMap;
use std::ops::Range;

use toml::Spanned;

use super::{
    Access, Boundary, Dtype, Expr, Field, Func, NamedRegion, Op, Role, Slot, Statement, Stencil,
    Version, tiling,
};
use crate::diagnostic::{Diagnostic, closest};
use crate::spec::expr::{self, BinOp, Kind, Node};
use crate::spec::{Source, Spec};
use constants::{Constant, constants};
use names::{Names, identifier, stencil_name};

mod boundary;
mod constants;
mod names;
mod regions;

/// Largest |offset| accepted along an axis.
pub const MAX_OFFSET: i64 = 32;
/// Most terms one `sum` may unroll to.
const MAX_SUM_TERMS: i64 = 4096;
/// Most nodes one statement may have after unrolling.
const MAX_NODES: usize = 1 << 18;

/// Checks a parsed spec and lowers it to the IR: one stencil per dtype it
/// lists, in its order (one for `dtype = "f64"`).
pub fn lower_all(spec: &Spec, src: &Source) -> Result<Vec<Stencil>, Diagnostic> {
    let section = spec.stencil.get_ref();
    let name = stencil_name(section.name.as_ref(), src)?;
    let (dtypes, listed) = dtypes(&section.dtype, src)?;
    dtypes
        .into_iter()
        .map(|dtype| {
            let family = listed.then(|| name.clone());
            let name = if listed {
                format!("{name}_{}", dtype.rust())
            } else {
                name.clone()
            };
            lower_as(spec, src, name, family, dtype)
        })
        .collect()
}

/// [`lower_all`]'s first stencil: the spec in its only (or first) dtype.
#[cfg(test)]
pub fn lower(spec: &Spec, src: &Source) -> Result<Stencil, Diagnostic> {
    lower_all(spec, src).map(|mut stencils| stencils.remove(0))
}

/// The spec as the stencil `name` of `dtype` (of `family` where the spec lists its dtypes).
fn lower_as(
    spec: &Spec,
    src: &Source,
    name: String,
    family: Option<String>,
    dtype: Dtype,
) -> Result<Stencil, Diagnostic> {
    let section = spec.stencil.get_ref();
    let axes = axes(&section.axes, src)?;
    let mut names = Names::default();
    let fields = fields(spec, src, &mut names)?;
    let params = params(spec, dtype, family.is_some(), src, &mut names)?;
    let constants = constants(spec, dtype, src, &mut names)?;
    let boundary = boundary::boundary(spec, &axes, &params, src)?;
    let regions = regions::regions(spec, &axes, &mut names, src)?;
    let tiling = tiling::check(&spec.tiling, axes.len(), src)?;
    let ctx = Context {
        src,
        fields: &fields,
        params: &params,
        constants: &constants,
        dims: axes.len(),
        dtype,
        boundary: &boundary,
        regions: &regions,
    };
    let statements = statements(spec, &ctx)?;
    check_roles(spec, &fields, &statements, src)?;
    regions::check_pieces(spec, &statements, &regions, src)?;
    let mut stencil = Stencil {
        name,
        family,
        path: src.path.clone(),
        doc: section.doc.clone(),
        dtype,
        axes,
        fields,
        params,
        statements,
        boundary,
        regions,
        tiling,
        frame: Vec::new(),
    };
    regions::check_names(spec, &stencil, src)?;
    regions::check_spans(spec, &stencil, src)?;
    tiling::check_fusion(&spec.tiling, &mut stencil, src)?;
    Ok(stencil)
}

/// The precisions `dtype` asks for, and whether it lists them (an array:
/// each becomes a module of the stencil's).
fn dtypes(d: &Spanned<toml::Value>, src: &Source) -> Result<(Vec<Dtype>, bool), Diagnostic> {
    let unsupported = |what: String| {
        src.error(d.span(), format!("unsupported dtype {what}"))
            .with_hint(
                "write `dtype = \"f32\"`, `dtype = \"f64\"` or both: `dtype = [\"f32\", \"f64\"]`",
            )
    };
    let one = |v: &toml::Value| match v.as_str() {
        Some("f32") => Ok(Dtype::F32),
        Some("f64") => Ok(Dtype::F64),
        Some(other) => Err(unsupported(format!("`{other}`"))),
        None => Err(unsupported(format!("(a {}, not a string)", v.type_str()))),
    };
    let toml::Value::Array(list) = d.get_ref() else {
        return Ok((vec![one(d.get_ref())?], false));
    };
    let dtypes = list.iter().map(one).collect::<Result<Vec<_>, _>>()?;
    let repeated = dtypes
        .iter()
        .enumerate()
        .any(|(i, t)| dtypes[..i].contains(t));
    if dtypes.is_empty() || repeated {
        return Err(src
            .error(d.span(), "a list of dtypes names each precision once")
            .with_hint("write `dtype = [\"f32\", \"f64\"]`, or one dtype as a string"));
    }
    Ok((dtypes, true))
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

/// The run-time parameters: each declared `"real"` (the stencil's dtype)
/// or, where the spec names one dtype, that dtype.
fn params(
    spec: &Spec,
    dtype: Dtype,
    listed: bool,
    src: &Source,
    names: &mut Names,
) -> Result<Vec<String>, Diagnostic> {
    let mut params = Vec::new();
    for (key, ty) in &spec.params.0 {
        names.declare(key, "param", src)?;
        let t = ty.get_ref().as_str();
        if t == "real" || (t == dtype.rust() && !listed) {
            params.push(key.get_ref().clone());
            continue;
        }
        let key = key.get_ref();
        let error = if listed {
            src.error(
                ty.span(),
                format!("param `{key}` is declared `{t}` but the stencil lists its dtypes"),
            )
            .with_hint(format!(
                "write `{key} = \"real\"`: the stencil's dtype in each precision"
            ))
        } else {
            let what = if t == "f32" || t == "f64" {
                "type mismatch: "
            } else {
                ""
            };
            src.error(
                ty.span(),
                format!(
                    "{what}param `{key}` is declared `{t}` but the stencil's dtype is `{}`",
                    dtype.rust()
                ),
            )
            .with_hint(format!(
                "write `{key} = \"{}\"` (or `\"real\"`, the stencil's dtype)",
                dtype.rust()
            ))
        };
        return Err(error);
    }
    Ok(params)
}

/// Everything an expression may refer to.
struct Context<'a> {
    src: &'a Source,
    fields: &'a [Field],
    params: &'a [String],
    constants: &'a HashMap<String, Constant>,
    dims: usize,
    dtype: Dtype,
    boundary: &'a Boundary,
    regions: &'a [NamedRegion],
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
    // The field whose updates in regions are being read: it counts as
    // written after the last of them (each of them reads its start value).
    let mut pieces: Option<usize> = None;
    let mut out = Vec::new();
    for update in &spec.update {
        let u = update.get_ref();
        let region = regions::of_update(u.region.as_ref(), ctx.regions, ctx.src)?;
        let field = ctx
            .fields
            .iter()
            .position(|f| &f.name == u.target.get_ref());
        if let Some(p) = pieces.filter(|&p| region.is_none() || field != Some(p)) {
            if field == Some(p) {
                return Err(ctx
                    .src
                    .error(
                        u.target.span(),
                        "this update of a field written in regions names none",
                    )
                    .with_hint(
                        "give every update of the field a region; together they cover the grid",
                    ));
            }
            written[p] = true;
            pieces = None;
        }
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
        match region {
            Some(_) => pieces = Some(target),
            None => written[target] = true,
        }
        out.push(Statement {
            target,
            region,
            edge_params: ctx.boundary.params_passed(&expr, ctx.dims),
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
        let version = self.version(field, name_span, prev)?;
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

    /// The level a read of `field` (`.prev` where `prev`) takes at this point
    /// of the step, or why it cannot be read there.
    fn version(
        &self,
        field: usize,
        name_span: &Range<usize>,
        prev: bool,
    ) -> Result<Version, Diagnostic> {
        let f = &self.ctx.fields[field];
        Ok(match (f.role, prev) {
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
        })
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
mod tests;
