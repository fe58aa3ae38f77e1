//! Random valid stencil specs, as a proptest [`Strategy`]: 1 to 3 axes,
//! offsets up to 4 cells, one or two state fields (the first optionally
//! leapfrog, `levels = 2`), optionally an input grid, a temp field and up to
//! two params, linear terms with random coefficients, a product term, f32 or
//! f64, a `fixed` or `periodic` boundary, and a random OpenMP cache block.
//!
//! Shared by `tests/random_stencils.rs` (each case compiled as a crate and
//! compared with its reference, shrunk on failure) and `build.rs` (a fixed
//! set drawn from the same strategy, compiled with every GPU strategy).
//!
//! Every generated update keeps its target's own cell with a weight in
//! [0.2, 0.5] and the weights' magnitudes sum to less than 1: values stay
//! bounded over steps, and a step never leaves a grid as it was (so the
//! harness can tell 1 step from 2, and a comparison can fail).

use std::fmt::Write as _;

use proptest::prelude::*;

/// One read of a field at an offset.
#[derive(Clone, Debug)]
pub struct Read {
    /// The field's name as the expression spells it (`u`, `u.prev`, `k`, ...).
    pub field: &'static str,
    /// Offset per axis.
    pub offset: Vec<i64>,
}

/// `coef * [param *] reads[0] [* reads[1]]`.
#[derive(Clone, Debug)]
pub struct Term {
    /// The weight.
    pub coef: f64,
    /// A param factor (`p0`, `p1`), if any.
    pub param: Option<usize>,
    /// One read (linear) or two (a product).
    pub reads: Vec<Read>,
}

/// One `[[update]]`: the target and the terms summed.
#[derive(Clone, Debug)]
pub struct Update {
    /// The field written.
    pub target: &'static str,
    /// The terms.
    pub terms: Vec<Term>,
}

/// A random stencil.
#[derive(Clone, Debug)]
pub struct RandomStencil {
    /// `f32` or `f64`.
    pub dtype: &'static str,
    /// Axes, slowest first.
    pub axes: Vec<&'static str>,
    /// `fixed` or `periodic`.
    pub boundary: &'static str,
    /// `u` keeps two time levels.
    pub leapfrog: bool,
    /// A second state field `w`.
    pub second_state: bool,
    /// An input grid `k`.
    pub input: bool,
    /// A temp field `t`, computed first.
    pub temp: bool,
    /// How many params (`p0`, `p1`).
    pub params: usize,
    /// The updates, in order.
    pub updates: Vec<Update>,
    /// `[tiling.openmp] block`.
    pub block: Vec<usize>,
}

/// The shape of a stencil before its terms: (dims, dtype, boundary,
/// leapfrog, second state, input, temp, params, largest offset).
type Layout = (
    usize,
    &'static str,
    &'static str,
    bool,
    bool,
    bool,
    bool,
    usize,
    i64,
);

fn layout() -> impl Strategy<Value = Layout> {
    (
        1usize..=3,
        prop_oneof![Just("f32"), Just("f64")],
        prop_oneof![Just("fixed"), Just("periodic")],
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        0usize..=2,
        1i64..=4,
    )
}

fn read(fields: Vec<&'static str>, dims: usize, reach: i64) -> impl Strategy<Value = Read> {
    (
        proptest::sample::select(fields),
        proptest::collection::vec(-reach..=reach, dims),
    )
        .prop_map(|(field, offset)| Read { field, offset })
}

/// Extra terms of one update: 0 to 5 linear ones and at most one product.
fn terms(
    fields: Vec<&'static str>,
    dims: usize,
    reach: i64,
    params: usize,
) -> impl Strategy<Value = Vec<Term>> {
    let param = if params == 0 {
        Just(None).boxed()
    } else {
        proptest::option::weighted(0.3, 0..params).boxed()
    };
    let linear = (
        0.02f64..0.3,
        any::<bool>(),
        param,
        read(fields.clone(), dims, reach),
    )
        .prop_map(|(c, negative, param, r)| Term {
            coef: if negative { -c } else { c },
            param,
            reads: vec![r],
        });
    let product = (
        0.01f64..0.05,
        read(fields.clone(), dims, reach),
        read(fields, dims, reach),
    )
        .prop_map(|(coef, a, b)| Term {
            coef,
            param: None,
            reads: vec![a, b],
        });
    (
        proptest::collection::vec(linear, 0..=5),
        proptest::option::of(product),
    )
        .prop_map(|(mut t, p)| {
            t.extend(p);
            t
        })
}

/// A term reading `field` at `offset`, weight `coef`.
fn term(coef: f64, field: &'static str, offset: Vec<i64>) -> Term {
    Term {
        coef,
        param: None,
        reads: vec![Read { field, offset }],
    }
}

/// Scales the extra terms (after the first) so the weights' magnitudes sum
/// to at most 0.95.
fn bounded(mut terms: Vec<Term>) -> Vec<Term> {
    let total: f64 = terms.iter().map(|t| t.coef.abs()).sum();
    if total > 0.95 {
        let scale = (0.95 - terms[0].coef.abs()) / (total - terms[0].coef.abs());
        for t in &mut terms[1..] {
            t.coef *= scale;
        }
    }
    terms
}

impl RandomStencil {
    /// Random valid stencils.
    pub fn strategy() -> impl Strategy<Value = RandomStencil> {
        layout().prop_flat_map(
            |(dims, dtype, boundary, leapfrog, second_state, input, temp, params, reach)| {
                let mut sources = vec!["u"];
                if second_state {
                    sources.push("w");
                }
                if leapfrog {
                    sources.push("u.prev");
                }
                if input {
                    sources.push("k");
                }
                let mut readable = sources.clone();
                if temp {
                    readable.push("t");
                }
                let targets: Vec<&'static str> = ["t", "u", "w"]
                    .into_iter()
                    .filter(|t| match *t {
                        "t" => temp,
                        "w" => second_state,
                        _ => true,
                    })
                    .collect();
                let updates: Vec<_> = targets
                    .iter()
                    .map(|&target| {
                        let from = if target == "t" {
                            sources.clone()
                        } else {
                            readable.clone()
                        };
                        (
                            0.2f64..0.5,
                            terms(from.clone(), dims, reach, params),
                            read(from, dims, reach),
                        )
                            .prop_map(move |(own, extra, must)| (target, own, extra, must))
                    })
                    .collect();
                (updates, proptest::collection::vec(1usize..=48, dims)).prop_map(
                    move |(updates, block)| {
                        let axes = ["z", "y", "x"][3 - dims..].to_vec();
                        let zero = vec![0; dims];
                        let updates = updates
                            .into_iter()
                            .map(|(target, own, extra, must)| {
                                // The target's own cell (a temp: `u`'s), one
                                // read of a field every update may read (so
                                // that each declared field is read), then the rest.
                                let own_field = if target == "t" { "u" } else { target };
                                let mut terms = vec![term(own, own_field, zero.clone())];
                                terms.push(term(0.1, must.field, must.offset));
                                for (field, needed) in [
                                    ("u.prev", leapfrog && target == "u"),
                                    ("k", input && target == "u"),
                                    ("t", temp && target == "u"),
                                ] {
                                    if needed {
                                        terms.push(term(0.05, field, zero.clone()));
                                    }
                                }
                                terms.extend(extra);
                                Update {
                                    target,
                                    terms: bounded(terms),
                                }
                            })
                            .collect();
                        RandomStencil {
                            dtype,
                            axes,
                            boundary,
                            leapfrog,
                            second_state,
                            input,
                            temp,
                            params,
                            updates,
                            block,
                        }
                    },
                )
            },
        )
    }

    /// The spec, named `name`.
    pub fn to_toml(&self, name: &str) -> String {
        let mut s = String::new();
        let axes: Vec<String> = self.axes.iter().map(|a| format!("\"{a}\"")).collect();
        let _ = writeln!(
            s,
            "[stencil]\nname = \"{name}\"\ndtype = \"{}\"\naxes = [{}]\n\n[fields]",
            self.dtype,
            axes.join(", ")
        );
        let levels = if self.leapfrog { ", levels = 2" } else { "" };
        let _ = writeln!(s, "u = {{ role = \"state\"{levels} }}");
        for (on, line) in [
            (self.second_state, "w = { role = \"state\" }"),
            (self.input, "k = { role = \"input\" }"),
            (self.temp, "t = { role = \"temp\" }"),
        ] {
            if on {
                let _ = writeln!(s, "{line}");
            }
        }
        if self.params > 0 {
            s.push_str("\n[params]\n");
            for p in 0..self.params {
                let _ = writeln!(s, "p{p} = \"{}\"", self.dtype);
            }
        }
        for u in &self.updates {
            let terms: Vec<String> = u.terms.iter().map(render).collect();
            let _ = writeln!(
                s,
                "\n[[update]]\ntarget = \"{}\"\nexpr = \"{}\"",
                u.target,
                terms.join(" + ")
            );
        }
        let block: Vec<String> = self.block.iter().map(usize::to_string).collect();
        let _ = writeln!(
            s,
            "\n[boundary]\nkind = \"{}\"\n\n[tiling.openmp]\nblock = [{}]",
            self.boundary,
            block.join(", ")
        );
        s
    }
}

fn render(t: &Term) -> String {
    let mut s = format!("({:.6})", t.coef);
    if let Some(p) = t.param {
        let _ = write!(s, "*p{p}");
    }
    for r in &t.reads {
        let offset: Vec<String> = r.offset.iter().map(i64::to_string).collect();
        let _ = write!(s, "*{}[{}]", r.field, offset.join(","));
    }
    s
}
