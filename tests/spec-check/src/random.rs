//! Random valid stencil specs, as proptest [`Strategy`]s: 1 to 3 axes,
//! offsets up to 4 cells, one or two state fields (the first optionally
//! leapfrog, `levels = 2`), optionally an input grid, a temp field and up to
//! two params, linear terms with random coefficients, a product term, f32 or
//! f64, a `fixed` or `periodic` boundary or a kind per axis side (`mixed`:
//! `fixed`, `reflect`, `value` of the first param, `periodic` pairs), a
//! random OpenMP cache block, the first state's update split in two
//! regions (the cells of the slowest axis past a bound beyond the step's
//! reach, and the grid outside them, whose update is scaled); the
//! first state's update may read only other fields, terms may carry
//! literals at the edges of the dtype's range, and the names may be drawn
//! from [`hostile_names`] (the generated code's own identifiers and C, C++,
//! CUDA and Rust words) instead of `u`, `w`, `k`, `t`, `p0`, `p1`.
//!
//! [`RandomStencil::strategy`] draws stencils that run against their
//! reference: the cross-backend tests' `build.rs` builds a fixed set of them
//! with every GPU strategy, and `tests/random_stencils.rs` compiles each
//! case as a crate and compares its OpenMP backend with its reference.
//! [`RandomStencil::compilable`] adds what only compiles (an update of input
//! grids only, whose steps all give the same grid) and a random GPU
//! strategy: the compile check of `tests/accepted_specs.rs` and the fuzz
//! target `accepted`.
//!
//! In runnable stencils every state field's cell is read by some update with
//! a weight in [0.2, 0.5] (the first state's own update, or the second
//! state's, which the first then reads) and the weights' magnitudes sum to
//! less than 1: values stay bounded over steps, and a step never leaves a
//! grid as it was (so the harness can tell 1 step from 2, and a comparison
//! can fail).

use std::fmt::Write as _;

use std::sync::OnceLock;

use proptest::prelude::*;

/// One read of a field at an offset.
#[derive(Clone, Debug)]
pub struct Read {
    /// The field's role as the expression spells it with the default names
    /// (`u`, `u.prev`, `w`, `k`, `t`); [`Names`] spells it in the spec.
    pub field: &'static str,
    /// Offset per axis.
    pub offset: Vec<i64>,
}

/// `coef * [param *] reads[0] [* reads[1]] [factor]`.
#[derive(Clone, Debug)]
pub struct Term {
    /// The weight.
    pub coef: f64,
    /// A param factor (`p0`, `p1`), if any.
    pub param: Option<usize>,
    /// One read (linear) or two (a product).
    pub reads: Vec<Read>,
    /// A literal at an edge of the dtype's range that the term is
    /// multiplied or divided by (`*1.0e-30`, `/3.0e38`): it exercises the
    /// printing of such literals and leaves the term's value negligible.
    pub factor: Option<&'static str>,
}

/// One `[[update]]`: the target and the terms summed.
#[derive(Clone, Debug)]
pub struct Update {
    /// The field written (its role: `u`, `w` or `t`).
    pub target: &'static str,
    /// The terms.
    pub terms: Vec<Term>,
}

/// The names a spec gives its fields and params.
#[derive(Clone, Debug)]
pub struct Names {
    /// The first state field.
    pub u: &'static str,
    /// The second state field.
    pub w: &'static str,
    /// The input grid.
    pub k: &'static str,
    /// The temp field.
    pub t: &'static str,
    /// The params.
    pub p: [&'static str; 2],
}

impl Default for Names {
    fn default() -> Self {
        Names {
            u: "u",
            w: "w",
            k: "k",
            t: "t",
            p: ["p0", "p1"],
        }
    }
}

impl Names {
    /// The spelling of `role` (`u`, `u.prev`, `w`, `k`, `t`).
    fn of(&self, role: &str) -> String {
        match role {
            "u" => self.u.to_string(),
            "u.prev" => format!("{}.prev", self.u),
            "w" => self.w.to_string(),
            "k" => self.k.to_string(),
            "t" => self.t.to_string(),
            other => other.to_string(),
        }
    }

    /// Default names, or six distinct ones drawn from [`hostile_names`].
    fn strategy() -> impl Strategy<Value = Names> {
        prop_oneof![
            Just(Names::default()),
            proptest::sample::subsequence(hostile_names(), 6)
                .prop_shuffle()
                .prop_map(|n| Names {
                    u: n[0],
                    w: n[1],
                    k: n[2],
                    t: n[3],
                    p: [n[4], n[5]],
                }),
        ]
    }
}

/// Every value of `[tiling.cuda]`'s and `[tiling.hip]`'s `strategy`.
pub const GPU_STRATEGIES: [&str; 7] = [
    "naive",
    "tiled",
    "stream",
    "temporal",
    "persistent",
    "tensor",
    "auto",
];

/// Names the generated code also uses (its functions, locals, members and
/// modules), for [`hostile_names`].
const GENERATED_NAMES: &[&str] = &[
    // The generated Rust's functions, locals, members and modules.
    "run",
    "run_with",
    "run_grids",
    "check_arguments",
    "unpack_grids",
    "session",
    "stream",
    "fusion",
    "graphs",
    "level",
    "levels",
    "turn",
    "turns",
    "trial",
    "measurement",
    "replays",
    "captures",
    "updates",
    "failed",
    "seen",
    "kept",
    "grids",
    "cur",
    "next",
    "next_prev",
    "out",
    "out_prev",
    "p",
    "n0",
    "n1",
    "s0",
    "c",
    "i0",
    "i1",
    "count",
    "values",
    "buffer",
    "len",
    "field",
    "stencil",
    "dev",
    "rt",
    "reference",
    "openmp",
    "cuda",
    "hip",
    "code",
    "graph",
    "exec",
    "ptr",
    "bytes",
    "src",
    "dst",
    "left",
    "most",
    "fused",
    "launches",
    "frame",
    // The generated C and CUDA's locals and helpers.
    "plane",
    "win",
    "tile",
    "lane",
    "warp",
    "ring",
    "on_grid",
    "block",
    "grid",
    "z0",
    "i2",
    "stencil_min",
    "stencil_mod",
    "stencil_wrap",
    "stencil_powi",
    "shared",
    "nb0",
    "o0",
    "w0",
];

/// Names a spec may give that could collide with the generated code's or a
/// target language's: `GENERATED_NAMES` and the words of
/// [`crate::names::LANGUAGE_WORDS`] that the validator takes (it refuses
/// Rust's keywords and its own reserved names).
pub fn hostile_names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        let taken = |name: &&'static str| {
            let spec = crate::names::spec_of_one(name);
            matches!(
                crate::compile::generate("one.stencil.toml", &spec),
                Ok(Some(_))
            )
        };
        let words = crate::names::LANGUAGE_WORDS.iter().copied().filter(taken);
        let mut names: Vec<&'static str> = GENERATED_NAMES.iter().copied().chain(words).collect();
        names.sort_unstable();
        names.dedup();
        names
    })
}

/// A random stencil.
#[derive(Clone, Debug)]
pub struct RandomStencil {
    /// `f32` or `f64`.
    pub dtype: &'static str,
    /// Axes, slowest first.
    pub axes: Vec<&'static str>,
    /// `fixed`, `periodic`, or `mixed`: a kind per side ([`Self::sides`]).
    pub boundary: &'static str,
    /// With a `mixed` boundary, each axis's `[low, high]` kinds: `fixed`,
    /// `reflect`, `value` (of the first param) or `periodic`.
    pub sides: Vec<[&'static str; 2]>,
    /// The first state's update in two regions: `zone_a`, the cells
    /// `i >= lo` of the slowest axis (`lo` past any fixed frame the step
    /// can have), and `zone_b` outside it, whose update is scaled by 0.8.
    pub regions: Option<usize>,
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
    /// The names of the fields and params.
    pub names: Names,
    /// `[tiling.cuda]` and `[tiling.hip]`'s `strategy`, if any.
    pub gpu_strategy: Option<&'static str>,
}

/// What the first state's update reads of its own field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Own {
    /// Its own cell, weighted, and any other reads.
    Cell,
    /// No read of `u`: the second state and the other fields.
    Others,
    /// The input grid only.
    InputsOnly,
}

/// The shape of a stencil before its terms.
#[derive(Clone, Debug)]
struct Layout {
    dims: usize,
    dtype: &'static str,
    boundary: &'static str,
    sides: Vec<[&'static str; 2]>,
    regions: Option<usize>,
    leapfrog: bool,
    second_state: bool,
    input: bool,
    temp: bool,
    params: usize,
    reach: i64,
    own: Own,
    extreme: bool,
}

/// The kinds of a `mixed` boundary's sides, from a code per side (0 fixed,
/// 1 reflect, 2 value where there is a param to name, 3 periodic, which
/// takes the whole axis); some side is not fixed.
fn mixed_sides(codes: &[(u8, u8)], params: usize) -> Vec<[&'static str; 2]> {
    let kind = |c: u8| match c {
        1 => "reflect",
        2 if params > 0 => "value",
        2 => "reflect",
        _ => "fixed",
    };
    let mut sides: Vec<[&'static str; 2]> = codes
        .iter()
        .map(|&(lo, hi)| {
            if lo == 3 || hi == 3 {
                ["periodic"; 2]
            } else {
                [kind(lo), kind(hi)]
            }
        })
        .collect();
    if sides.iter().flatten().all(|&k| k == "fixed") {
        sides[0][0] = "reflect";
    }
    sides
}

/// Layouts of runnable stencils; with `compilable`, also updates of input
/// grids only.
fn layout(compilable: bool) -> impl Strategy<Value = Layout> {
    let own = if compilable {
        prop_oneof![
            4 => Just(Own::Cell),
            1 => Just(Own::Others),
            1 => Just(Own::InputsOnly)
        ]
        .boxed()
    } else {
        prop_oneof![4 => Just(Own::Cell), 1 => Just(Own::Others)].boxed()
    };
    (
        (
            1usize..=3,
            prop_oneof![Just("f32"), Just("f64")],
            prop_oneof![2 => Just("fixed"), 2 => Just("periodic"), 1 => Just("mixed")],
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
        ),
        (
            0usize..=2,
            1i64..=4,
            own,
            proptest::bool::weighted(0.2),
            proptest::collection::vec((0u8..4, 0u8..4), 3),
            proptest::option::weighted(0.25, 0usize..=3),
        ),
    )
        .prop_map(
            |((dims, dtype, boundary, leapfrog, second_state, input, temp), rest)| {
                let (params, reach, own, extreme, codes, regions) = rest;
                // A first state that does not read itself changes each step
                // through the second state, which does; one of input grids
                // only has no other field to read.
                let own = match own {
                    Own::Others if leapfrog || !second_state => Own::Cell,
                    Own::InputsOnly if leapfrog => Own::Cell,
                    own => own,
                };
                let inputs_only = own == Own::InputsOnly;
                // Past the widest frame: a temp read at the reach, itself reaching as far.
                let regions = regions.map(|extra| 2 * reach as usize + 1 + extra);
                let sides = if boundary == "mixed" {
                    mixed_sides(&codes[..dims], params)
                } else {
                    Vec::new()
                };
                Layout {
                    dims,
                    dtype,
                    boundary,
                    sides,
                    regions,
                    leapfrog,
                    second_state: second_state && !inputs_only,
                    input: input || inputs_only,
                    temp: temp && !inputs_only,
                    params,
                    reach,
                    own,
                    extreme,
                }
            },
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
            factor: None,
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
            factor: None,
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
        factor: None,
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

/// Literals at the edges of `dtype`'s range, as factors of a term: the
/// smallest normal magnitudes' neighbourhood and the largest.
fn extreme_factors(dtype: &str) -> [&'static str; 2] {
    match dtype {
        "f32" => ["*1.0e-30", "/3.0e38"],
        _ => ["*1.0e-300", "/1.0e308"],
    }
}

/// The fields (by role) an update of `target` reads from, and those it must read.
fn reads_of(l: &Layout, target: &'static str) -> (Vec<&'static str>, Vec<&'static str>) {
    let mut sources = vec!["u"];
    if l.second_state {
        sources.push("w");
    }
    if l.leapfrog {
        sources.push("u.prev");
    }
    if l.input {
        sources.push("k");
    }
    let mut readable = sources.clone();
    if l.temp {
        readable.push("t");
    }
    match target {
        "t" => (sources, vec![]),
        "w" => (readable, vec![]),
        _ => {
            let from = match l.own {
                Own::Cell => readable,
                Own::Others => readable.into_iter().filter(|f| *f != "u").collect(),
                Own::InputsOnly => vec!["k"],
            };
            let must = ["u.prev", "k", "t", "w"]
                .into_iter()
                .filter(|f| from.contains(f) && (*f != "w" || l.own == Own::Others))
                .collect();
            (from, must)
        }
    }
}

impl RandomStencil {
    /// Random valid stencils that run against their reference.
    pub fn strategy() -> impl Strategy<Value = RandomStencil> {
        Self::drawn(false)
    }

    /// Random valid specs, some of which only compile (an update of input
    /// grids only), each with a random GPU strategy or none (`auto`).
    pub fn compilable() -> impl Strategy<Value = RandomStencil> {
        let strategies = proptest::option::of(proptest::sample::select(&GPU_STRATEGIES[..]));
        (Self::drawn(true), strategies).prop_map(|(mut s, gpu)| {
            s.gpu_strategy = gpu;
            s
        })
    }

    fn drawn(compilable: bool) -> impl Strategy<Value = RandomStencil> {
        layout(compilable).prop_flat_map(|l| {
            let targets: Vec<&'static str> = ["t", "u", "w"]
                .into_iter()
                .filter(|t| match *t {
                    "t" => l.temp,
                    "w" => l.second_state,
                    _ => true,
                })
                .collect();
            let (dims, reach, params) = (l.dims, l.reach, l.params);
            let updates: Vec<_> = targets
                .iter()
                .map(|&target| {
                    let (from, must) = reads_of(&l, target);
                    (
                        0.2f64..0.5,
                        terms(from.clone(), dims, reach, params),
                        read(from, dims, reach),
                    )
                        .prop_map(move |(own, extra, any)| (target, own, extra, any, must.clone()))
                })
                .collect();
            (
                updates,
                proptest::collection::vec(1usize..=48, dims),
                Names::strategy(),
            )
                .prop_map(move |(updates, block, names)| {
                    let updates = updates
                        .into_iter()
                        .map(|(target, own, extra, any, must)| {
                            update(&l, target, own, extra, any, must)
                        })
                        .collect();
                    RandomStencil {
                        dtype: l.dtype,
                        axes: ["z", "y", "x"][3 - l.dims..].to_vec(),
                        boundary: l.boundary,
                        sides: l.sides.clone(),
                        regions: l.regions,
                        leapfrog: l.leapfrog,
                        second_state: l.second_state,
                        input: l.input,
                        temp: l.temp,
                        params: l.params,
                        updates,
                        block,
                        names,
                        gpu_strategy: None,
                    }
                })
        })
    }

    /// The keys of its `[boundary]`: `kind`, or a `mixed` boundary's axes.
    fn boundary_keys(&self) -> String {
        if self.boundary != "mixed" {
            return format!("kind = \"{}\"\n", self.boundary);
        }
        let side = |k: &str| match k {
            "value" => format!("{{ value = \"{}\" }}", self.names.p[0]),
            k => format!("\"{k}\""),
        };
        self.axes
            .iter()
            .zip(&self.sides)
            .map(|(axis, [lo, hi])| format!("{axis} = [{}, {}]\n", side(lo), side(hi)))
            .collect()
    }

    /// The spec, named `name`.
    pub fn to_toml(&self, name: &str) -> String {
        let n = &self.names;
        let mut s = String::new();
        let axes: Vec<String> = self.axes.iter().map(|a| format!("\"{a}\"")).collect();
        let _ = writeln!(
            s,
            "[stencil]\nname = \"{name}\"\ndtype = \"{}\"\naxes = [{}]\n\n[fields]",
            self.dtype,
            axes.join(", ")
        );
        let levels = if self.leapfrog { ", levels = 2" } else { "" };
        let _ = writeln!(s, "{} = {{ role = \"state\"{levels} }}", n.u);
        for (on, name, role) in [
            (self.second_state, n.w, "state"),
            (self.input, n.k, "input"),
            (self.temp, n.t, "temp"),
        ] {
            if on {
                let _ = writeln!(s, "{name} = {{ role = \"{role}\" }}");
            }
        }
        if self.params > 0 {
            s.push_str("\n[params]\n");
            for p in &n.p[..self.params] {
                let _ = writeln!(s, "{p} = \"{}\"", self.dtype);
            }
        }
        if let Some(lo) = self.regions {
            let _ = writeln!(
                s,
                "\n[regions]\nzone_a = {{ {} = [{lo}, \"n\"] }}\nzone_b = {{ outside = \"zone_a\" }}",
                self.axes[0]
            );
        }
        for u in &self.updates {
            let terms: Vec<String> = u.terms.iter().map(|t| render(t, n)).collect();
            let expr = terms.join(" + ");
            let pieces = match self.regions {
                Some(_) if u.target == "u" => vec![
                    ("zone_a", expr.clone()),
                    ("zone_b", format!("0.8*({expr})")),
                ],
                _ => vec![("", expr)],
            };
            for (region, expr) in pieces {
                let region = match region {
                    "" => String::new(),
                    r => format!("\nregion = \"{r}\""),
                };
                let _ = writeln!(
                    s,
                    "\n[[update]]\ntarget = \"{}\"{region}\nexpr = \"{expr}\"",
                    n.of(u.target)
                );
            }
        }
        let block: Vec<String> = self.block.iter().map(usize::to_string).collect();
        let _ = writeln!(
            s,
            "\n[boundary]\n{}\n[tiling.openmp]\nblock = [{}]",
            self.boundary_keys(),
            block.join(", ")
        );
        if let Some(strategy) = self.gpu_strategy {
            for backend in ["cuda", "hip"] {
                let _ = writeln!(s, "\n[tiling.{backend}]\nstrategy = \"{strategy}\"");
            }
        }
        s
    }
}

/// The update of `target`: its own cell (a temp: `u`'s) where it reads it,
/// one read of a field it may read (`any`, so that each declared field is
/// read), those it must read, then the rest.
fn update(
    l: &Layout,
    target: &'static str,
    own: f64,
    extra: Vec<Term>,
    any: Read,
    must: Vec<&'static str>,
) -> Update {
    let zero = vec![0; l.dims];
    let mut terms = Vec::new();
    match target {
        "t" => terms.push(term(own, "u", zero.clone())),
        "u" if l.own != Own::Cell => terms.push(term(own, any.field, any.offset.clone())),
        _ => terms.push(term(own, target, zero.clone())),
    }
    terms.push(term(0.1, any.field, any.offset));
    terms.extend(must.into_iter().map(|f| term(0.05, f, zero.clone())));
    terms.extend(extra);
    if l.extreme && target == "u" {
        for (factor, read) in extreme_factors(l.dtype).into_iter().zip(terms.clone()) {
            terms.push(Term {
                factor: Some(factor),
                ..read
            });
        }
    }
    Update {
        target,
        terms: bounded(terms),
    }
}

fn render(t: &Term, names: &Names) -> String {
    let mut s = format!("({:.6})", t.coef);
    if let Some(p) = t.param {
        let _ = write!(s, "*{}", names.p[p]);
    }
    for r in &t.reads {
        let offset: Vec<String> = r.offset.iter().map(i64::to_string).collect();
        let _ = write!(s, "*{}[{}]", names.of(r.field), offset.join(","));
    }
    if let Some(factor) = t.factor {
        s.push_str(factor);
    }
    s
}

/// Whether the slow tests run in full (`STENCIL_TESTS=full`, as CI sets
/// it), or a representative part of their cases: the README's
/// `cargo test --workspace`, which a contributor runs often.
pub fn whole_matrix() -> bool {
    std::env::var("STENCIL_TESTS").is_ok_and(|v| v == "full")
}

/// The proptest configuration of a test whose cases are slow (each a build
/// or a run of the compilers): `PROPTEST_CASES` cases, else `full_cases`
/// where `STENCIL_TESTS=full` (as CI sets it) and a quarter of them
/// otherwise (the README's quick `cargo test --workspace`), and at most
/// `max_shrink_iters` steps of shrinking, so that a failure shrinks in
/// minutes.
pub fn slow_cases(full_cases: u32, max_shrink_iters: u32) -> proptest::test_runner::Config {
    let default_cases = if whole_matrix() {
        full_cases
    } else {
        (full_cases / 4).max(1)
    };
    proptest::test_runner::Config {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(default_cases),
        max_shrink_iters,
        ..proptest::test_runner::Config::default()
    }
}
