//! The names a spec declares: the stencil's, and those of its fields,
//! params and constants, each a lower-case identifier that no keyword,
//! reserved word or generated runtime module has, and none declared twice.

use std::collections::HashMap;
use std::ops::Range;

use heck::ToSnakeCase;
use toml::Spanned;

use crate::diagnostic::Diagnostic;
use crate::ir::Func;
use crate::spec::Source;

/// Names the generated code or the expression language keeps for itself.
const RESERVED: [&str; 8] = [
    "sum", "prev", "shape", "params", "steps", "kernels", "cells", "io",
];

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
pub(super) fn identifier(
    name: &str,
    span: Range<usize>,
    what: &str,
    src: &Source,
) -> Result<(), Diagnostic> {
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

pub(super) fn stencil_name(
    name: Option<&Spanned<String>>,
    src: &Source,
) -> Result<String, Diagnostic> {
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

/// Names declared so far across `[fields]`, `[params]` and `[constants]`.
#[derive(Default)]
pub(super) struct Names(HashMap<String, &'static str>);

impl Names {
    pub(super) fn declare(
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
