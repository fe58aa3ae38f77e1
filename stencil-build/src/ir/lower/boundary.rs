//! `[boundary]`: the kind of each side of each axis.
//!
//! `kind` gives every side not named otherwise (default `fixed`); a key
//! named for an axis gives that axis's sides, one kind for both or
//! `[low, high]`. A kind is `"fixed"`, `"periodic"`, `"reflect"` or
//! `{ value = "<param>" }`.

use toml::Spanned;

use crate::diagnostic::{Diagnostic, closest};
use crate::ir::{Boundary, Side};
use crate::spec::{Source, Spec};

const KINDS: &str =
    "`\"fixed\"`, `\"periodic\"`, `\"reflect\"` or `{ value = \"<param>\" }` (a param of [params])";

/// The boundary `spec` asks for over `axes`, whose values may name `params`.
pub fn boundary(
    spec: &Spec,
    axes: &[String],
    params: &[String],
    src: &Source,
) -> Result<Boundary, Diagnostic> {
    let Some(section) = &spec.boundary else {
        return Ok(Boundary::Fixed);
    };
    let mut default = Side::Fixed;
    let mut named: Vec<Option<[Side; 2]>> = vec![None; axes.len()];
    for (key, value) in &section.get_ref().0 {
        if key.get_ref() == "kind" {
            default = side(value.get_ref(), value, params, src)?;
            continue;
        }
        let Some(a) = axes.iter().position(|x| x == key.get_ref()) else {
            let mut known: Vec<&str> = vec!["kind"];
            known.extend(axes.iter().map(String::as_str));
            let hint = match closest(key.get_ref(), known.iter().copied()) {
                Some(c) => format!("did you mean `{c}`?"),
                None => format!("[boundary] takes `kind` and the axes: {}", known.join(", ")),
            };
            return Err(src
                .error(
                    key.span(),
                    format!("unknown key `{}` in [boundary]", key.get_ref()),
                )
                .with_hint(hint));
        };
        named[a] = Some(axis_sides(value, params, src)?);
    }
    let sides: Vec<[Side; 2]> = named
        .into_iter()
        .map(|s| s.unwrap_or([default; 2]))
        .collect();
    for (a, &[lo, hi]) in sides.iter().enumerate() {
        if (lo == Side::Periodic) != (hi == Side::Periodic) {
            let at = section
                .get_ref()
                .0
                .iter()
                .find(|(k, _)| k.get_ref() == &axes[a])
                .map_or(section.span(), |(_, v)| v.span());
            return Err(src
                .error(
                    at,
                    format!("axis `{}` is periodic on one side only", axes[a]),
                )
                .with_hint(format!(
                    "a read past one edge wraps to the other: write `{} = \"periodic\"` for both sides",
                    axes[a]
                )));
        }
    }
    Ok(Boundary::of_sides(sides))
}

/// An axis's value: one kind for both sides, or `[low, high]`.
fn axis_sides(
    value: &Spanned<toml::Value>,
    params: &[String],
    src: &Source,
) -> Result<[Side; 2], Diagnostic> {
    match value.get_ref() {
        toml::Value::Array(pair) => match &pair[..] {
            [lo, hi] => Ok([side(lo, value, params, src)?, side(hi, value, params, src)?]),
            _ => Err(src
                .error(
                    value.span(),
                    format!("an axis's sides are [low, high]: {} given", pair.len()),
                )
                .with_hint("write one kind for both sides, or two: `[\"reflect\", \"fixed\"]`")),
        },
        one => {
            let side = side(one, value, params, src)?;
            Ok([side; 2])
        }
    }
}

/// One side's kind, `value` the spanned value it was written in.
fn side<T>(
    kind: &toml::Value,
    value: &Spanned<T>,
    params: &[String],
    src: &Source,
) -> Result<Side, Diagnostic> {
    let unknown = |what: String| {
        src.error(value.span(), format!("unknown boundary {what}"))
            .with_hint(format!("a side is {KINDS}"))
    };
    match kind {
        toml::Value::String(s) => match s.as_str() {
            "fixed" => Ok(Side::Fixed),
            "periodic" => Ok(Side::Periodic),
            "reflect" => Ok(Side::Reflect),
            "value" => Err(src
                .error(value.span(), "a `value` side names the param it reads")
                .with_hint("write `{ value = \"<param>\" }` with a param of [params]")),
            other => Err(unknown(format!("`{other}`"))),
        },
        toml::Value::Table(t) => {
            let name = match (t.len(), t.get("value")) {
                (1, Some(toml::Value::String(name))) => name,
                _ => return Err(unknown("table".into())),
            };
            match params.iter().position(|p| p == name) {
                Some(p) => Ok(Side::Value(p)),
                None => Err(src
                    .error(
                        value.span(),
                        format!("the boundary value `{name}` is not a param"),
                    )
                    .with_hint(match closest(name, params.iter().map(String::as_str)) {
                        Some(c) => format!("did you mean `{c}`?"),
                        None => format!("declare it in [params]: `{name} = \"real\"`"),
                    })),
            }
        }
        other => Err(unknown(other.type_str().to_string())),
    }
}
