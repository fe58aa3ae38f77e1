//! `[regions]` and the updates that apply to one.
//!
//! A region is a box, `{ z = [0, 16], x = [4, "n-4"] }` (per named axis
//! the cells `from <= i < to`; a bound is a count from the low edge, or
//! `"n"` / `"n-K"` from the high edge; an axis not named is whole), or the
//! grid outside a box, `{ outside = "<box>" }`. The updates of a field
//! that name regions partition its cells, so that every cell is still
//! computed once a step: a box and the grid outside it, or boxes that
//! name one axis only and tile it.

use toml::Spanned;

use super::names::Names;
use crate::diagnostic::{Diagnostic, closest};
use crate::ir::{Bound, NamedRegion, Region, Statement, Stencil};
use crate::spec::{Source, Spec};

const BOUNDS: &str = "a bound is a count of cells from the low edge (`16`) or from the high one (`\"n-16\"`, `\"n\"`)";

/// The regions `spec` declares over `axes`.
pub(super) fn regions(
    spec: &Spec,
    axes: &[String],
    names: &mut Names,
    src: &Source,
) -> Result<Vec<NamedRegion>, Diagnostic> {
    let mut out: Vec<NamedRegion> = Vec::new();
    for (key, value) in &spec.regions.0 {
        names.declare(key, "region", src)?;
        let toml::Value::Table(t) = value.get_ref() else {
            return Err(src
                .error(value.span(), "a region is a table")
                .with_hint("write `{ z = [0, 16] }` (a box) or `{ outside = \"<box>\" }`"));
        };
        let region = match t.get("outside") {
            Some(inner) => outside(inner, t.len(), &out, value, src)?,
            None => Region::Box(boxed(t, axes, value, src)?),
        };
        out.push(NamedRegion {
            name: key.get_ref().clone(),
            region,
        });
    }
    Ok(out)
}

/// `{ outside = "<box>" }`, the boxes declared before it in `earlier`.
fn outside(
    inner: &toml::Value,
    keys: usize,
    earlier: &[NamedRegion],
    value: &Spanned<toml::Value>,
    src: &Source,
) -> Result<Region, Diagnostic> {
    let hint = "write `{ outside = \"<box>\" }` with a box declared above it";
    let (1, toml::Value::String(name)) = (keys, inner) else {
        return Err(src
            .error(
                value.span(),
                "`outside` names one region and is alone in its table",
            )
            .with_hint(hint));
    };
    match earlier.iter().find(|r| &r.name == name) {
        Some(NamedRegion {
            region: Region::Box(b),
            ..
        }) if b
            .iter()
            .any(|&[lo, hi]| lo != Bound::Low(0) || hi != Bound::High(0)) =>
        {
            Ok(Region::Outside(b.clone()))
        }
        Some(NamedRegion {
            region: Region::Box(_),
            ..
        }) => Err(src
            .error(
                value.span(),
                format!("region `{name}` is the whole grid: nothing is outside it"),
            )
            .with_hint("give the box a bound on some axis")),
        _ => Err(src
            .error(
                value.span(),
                format!("`{name}` is not a box declared above"),
            )
            .with_hint(
                match closest(name, earlier.iter().map(|r| r.name.as_str())) {
                    Some(c) => format!("did you mean `{c}`?"),
                    None => hint.into(),
                },
            )),
    }
}

/// A box: `[from, to]` per named axis, the others whole.
fn boxed(
    t: &toml::Table,
    axes: &[String],
    value: &Spanned<toml::Value>,
    src: &Source,
) -> Result<Vec<[Bound; 2]>, Diagnostic> {
    let mut b = vec![[Bound::Low(0), Bound::High(0)]; axes.len()];
    for (axis, range) in t {
        let Some(a) = axes.iter().position(|x| x == axis) else {
            return Err(src
                .error(value.span(), format!("`{axis}` is not an axis"))
                .with_hint(format!(
                    "a box names axes ({}) or is `{{ outside = \"<box>\" }}`",
                    axes.join(", ")
                )));
        };
        let bounds = match range.as_array().map(Vec::as_slice) {
            Some([from, to]) => [bound(from, value, src)?, bound(to, value, src)?],
            _ => {
                return Err(src
                    .error(value.span(), format!("`{axis}` takes [from, to]"))
                    .with_hint(BOUNDS));
            }
        };
        if crate::analysis::region_extent(bounds).is_none() {
            return Err(src
                .error(
                    value.span(),
                    format!(
                        "`{axis} = [{}, {}]` has no cells on large grids",
                        bounds[0].describe(),
                        bounds[1].describe()
                    ),
                )
                .with_hint("the lower bound comes first: cells `from <= i < to`"));
        }
        b[a] = bounds;
    }
    Ok(b)
}

/// The largest count of cells a bound may give: every grid a backend
/// indexes fits it many times over.
const MAX_BOUND: usize = 1 << 30;

fn bound(v: &toml::Value, value: &Spanned<toml::Value>, src: &Source) -> Result<Bound, Diagnostic> {
    let b =
        parse_bound(v).ok_or_else(|| src.error(value.span(), "not a bound").with_hint(BOUNDS))?;
    let (Bound::Low(k) | Bound::High(k)) = b;
    if k > MAX_BOUND {
        return Err(src
            .error(
                value.span(),
                format!("a bound of {k} cells is more than {MAX_BOUND}"),
            )
            .with_hint(BOUNDS));
    }
    Ok(b)
}

fn parse_bound(v: &toml::Value) -> Option<Bound> {
    match v {
        toml::Value::Integer(k) => usize::try_from(*k).ok().map(Bound::Low),
        toml::Value::String(s) => {
            let s: String = s.chars().filter(|c| !c.is_whitespace()).collect();
            match s.strip_prefix('n')? {
                "" => Some(Bound::High(0)),
                rest => rest.strip_prefix('-')?.parse().ok().map(Bound::High),
            }
        }
        _ => None,
    }
}

/// The region an update names, by index.
pub(super) fn of_update(
    region: Option<&Spanned<String>>,
    regions: &[NamedRegion],
    src: &Source,
) -> Result<Option<usize>, Diagnostic> {
    let Some(name) = region else { return Ok(None) };
    match regions.iter().position(|r| &r.name == name.get_ref()) {
        Some(k) => Ok(Some(k)),
        None => Err(src
            .error(name.span(), format!("unknown region `{}`", name.get_ref()))
            .with_hint(
                match closest(name.get_ref(), regions.iter().map(|r| r.name.as_str())) {
                    Some(c) => format!("did you mean `{c}`?"),
                    None => "declare it in [regions]".into(),
                },
            )),
    }
}

/// Checks that the updates of each field that name regions partition its
/// cells: consecutive updates of one field whose regions are a box and
/// the grid outside it, or boxes that name one axis only and tile it.
pub(super) fn check_pieces(
    spec: &Spec,
    statements: &[Statement],
    regions: &[NamedRegion],
    src: &Source,
) -> Result<(), Diagnostic> {
    // `statements` refused a field's update without a region beside one
    // with: a field's run of updates names regions in all or none.
    let mut end = 0;
    for field in statements.chunk_by(|a, b| a.target == b.target) {
        end += field.len();
        let named: Vec<&Region> = field
            .iter()
            .filter_map(|s| s.region.map(|r| &regions[r].region))
            .collect();
        if named.is_empty() {
            continue;
        }
        if let Err(why) = partition(&named) {
            return Err(src
                .error(update_span(spec, end - 1), format!("these regions do not partition the field's cells: {why}"))
                .with_hint("write a box and `{ outside = \"<box>\" }`, or boxes of one axis that tile it (`z = [0, 16]`, `z = [16, \"n\"]`)"));
        }
    }
    Ok(())
}

/// Whether `pieces` partition the grid (see [`check_pieces`]).
fn partition(pieces: &[&Region]) -> Result<(), String> {
    if let [Region::Box(b), Region::Outside(o)] | [Region::Outside(o), Region::Box(b)] = pieces {
        return if b == o {
            Ok(())
        } else {
            Err("`outside` names another box".into())
        };
    }
    let mut slabs = Vec::new();
    for piece in pieces {
        let Region::Box(b) = piece else {
            return Err("the grid outside a box goes with that box alone".into());
        };
        let bounded: Vec<usize> = (0..b.len())
            .filter(|&a| b[a] != [Bound::Low(0), Bound::High(0)])
            .collect();
        match bounded[..] {
            [a] => slabs.push((a, b[a])),
            [] => slabs.push((0, b[0])),
            _ => return Err("a box of several axes goes with the grid outside it".into()),
        }
    }
    let axis = slabs[0].0;
    if slabs.iter().any(|&(a, _)| a != axis) {
        return Err("the boxes bound different axes".into());
    }
    let mut spans: Vec<[Bound; 2]> = slabs.into_iter().map(|(_, s)| s).collect();
    // By where each starts: from the low edge up, then from the high edge.
    spans.sort_by_key(|[from, _]| match *from {
        Bound::Low(k) => (0, k as isize),
        Bound::High(k) => (1, -(k as isize)),
    });
    let mut at = Bound::Low(0);
    for [from, to] in spans {
        if from != at {
            return Err(format!("nothing covers cells from {} on", at.describe()));
        }
        at = to;
    }
    if at != Bound::High(0) {
        return Err(format!("nothing covers cells from {} on", at.describe()));
    }
    Ok(())
}

/// Checks that no two updates' kernels share a name (`update_u_in_top`
/// is also field `u_in_top`'s).
pub(super) fn check_names(spec: &Spec, st: &Stencil, src: &Source) -> Result<(), Diagnostic> {
    for (k, s) in st.statements.iter().enumerate() {
        let name = st.statement_name(s);
        let Some(other) = st.statements[..k]
            .iter()
            .find(|o| st.statement_name(o) == name)
        else {
            continue;
        };
        let at = update_span(spec, k);
        return Err(src
            .error(
                at,
                format!(
                    "this update's kernel would be named `{name}`, as the update of `{}` is",
                    st.fields[other.target].name
                ),
            )
            .with_hint("rename the region or the field"));
    }
    Ok(())
}

/// Checks that each update of a region computes some cells: its box
/// within the frame that fixed sides keep is not empty on large grids.
pub(super) fn check_spans(spec: &Spec, st: &Stencil, src: &Source) -> Result<(), Diagnostic> {
    let an = crate::analysis::analyse(st);
    for (k, (s, info)) in st.statements.iter().zip(&an.statements).enumerate() {
        let Some(r) = s.region else { continue };
        if info.hole.as_ref() == Some(&info.bounds) {
            return Err(src
                .error(
                    update_span(spec, k),
                    format!(
                        "region `{}` has no cell this update computes: the box it is outside holds all of `{}`'s cells",
                        st.regions[r].name, st.fields[s.target].name
                    ),
                )
                .with_hint("bound the box further in, or update the field without regions"));
        }
        if info.hole.is_some() {
            continue;
        }
        let Some(a) =
            (0..st.dims()).find(|&a| crate::analysis::region_extent(info.bounds[a]).is_none())
        else {
            continue;
        };
        let at = update_span(spec, k);
        let [lo, hi] = info.edges[a];
        return Err(src
            .error(
                at,
                format!(
                    "region `{}` has no cell this update computes: along `{}` it lies in the frame that the fixed sides keep ({lo} cells at the low edge, {hi} at the high one)",
                    st.regions[r].name, st.axes[a]
                ),
            )
            .with_hint("move the region inward, or make that side `reflect`, `periodic` or a `value`"));
    }
    Ok(())
}

/// Where update `k` names its region, else its target.
fn update_span(spec: &Spec, k: usize) -> std::ops::Range<usize> {
    let u = spec.update[k].get_ref();
    u.region.as_ref().map_or(u.target.span(), Spanned::span)
}
