//! The checked, resolved form of a stencil: expression trees over field reads
//! at constant offsets. Every backend generates code from this, never from the
//! spec.

mod columns;
mod linear;
mod lower;
mod tiling;

use std::path::PathBuf;

pub use columns::{Columns, columns, dense_along, full_along, table_terms};
pub use linear::{MAX_PLANE_REACH, PLANE_SUM, PlaneSum, plane_sum, weighted_sum};
#[cfg(test)]
pub use lower::lower;
pub use lower::lower_all;
pub use tiling::{
    GpuTiling, STREAM_CHUNK, Strategy, TENSOR_CHUNK, Tiling, WHOLE_AXIS, check_gpu, check_strategy,
    fuse_form, refused_for, settled_by_form, unfusable, untensorable,
};

/// Element type of every grid and parameter of a stencil.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// 32-bit IEEE float.
    F32,
    /// 64-bit IEEE float.
    F64,
}

impl Dtype {
    /// `value` where this type holds it as a finite number, else the largest
    /// finite magnitude it holds.
    pub fn check_value(self, value: f64) -> Result<f64, f64> {
        match self {
            Dtype::F32 if !(value as f32).is_finite() => Err(f32::MAX.into()),
            Dtype::F64 if !value.is_finite() => Err(f64::MAX),
            _ => Ok(value),
        }
    }

    /// The Rust type name.
    pub fn rust(self) -> &'static str {
        match self {
            Dtype::F32 => "f32",
            Dtype::F64 => "f64",
        }
    }

    /// The C type name.
    pub fn c(self) -> &'static str {
        match self {
            Dtype::F32 => "float",
            Dtype::F64 => "double",
        }
    }

    /// Size in bytes.
    pub fn size(self) -> usize {
        match self {
            Dtype::F32 => 4,
            Dtype::F64 => 8,
        }
    }
}

/// What a field is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Updated every step; `levels == 2` also keeps the previous time level.
    State {
        /// Time levels kept (1 or 2).
        levels: u8,
    },
    /// Read-only grid.
    Input,
    /// Scratch grid written and read within one step.
    Temp,
}

/// A grid of the stencil.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// Its name in expressions and in the generated API.
    pub name: String,
    /// What it is.
    pub role: Role,
    /// Documentation from the spec.
    pub doc: Option<String>,
}

impl Field {
    /// Whether the field keeps its previous time level.
    pub fn has_prev(&self) -> bool {
        self.role == Role::State { levels: 2 }
    }
}

/// What happens to reads that fall off the grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Boundary {
    /// Cells within the radius of the edge keep their value; reads never leave the grid.
    Fixed,
    /// Reads wrap around; every cell is updated.
    Periodic,
    /// A kind per side of each axis (`sides[a] = [low, high]`), not all
    /// `Fixed` nor all `Periodic`: cells by a `Fixed` side keep their value,
    /// the others are updated with reads past the edge remapped
    /// (`codegen::index::remapped_read`).
    Mixed(Vec<[Side; 2]>),
}

impl Boundary {
    /// The kind of each side of each axis (`[low, high]`), for `dims` axes.
    pub fn sides(&self, dims: usize) -> Vec<[Side; 2]> {
        match self {
            Boundary::Fixed => vec![[Side::Fixed; 2]; dims],
            Boundary::Periodic => vec![[Side::Periodic; 2]; dims],
            Boundary::Mixed(sides) => sides.clone(),
        }
    }

    /// The boundary of `sides`: `Fixed` or `Periodic` where every side is,
    /// else `Mixed`.
    pub fn of_sides(sides: Vec<[Side; 2]>) -> Boundary {
        let all = |k: Side| sides.iter().flatten().all(|&s| s == k);
        if all(Side::Fixed) {
            Boundary::Fixed
        } else if all(Side::Periodic) {
            Boundary::Periodic
        } else {
            Boundary::Mixed(sides)
        }
    }

    /// The params of the `value` sides that `expr`'s reads pass, on a
    /// grid of `dims` axes, in declaration order.
    pub fn params_passed(&self, expr: &Expr, dims: usize) -> Vec<usize> {
        let sides = self.sides(dims);
        let mut out = Vec::new();
        expr.for_each_read(&mut |a| {
            for (ax, &d) in a.offset.iter().enumerate() {
                if let (true, Side::Value(p)) = (d != 0, sides[ax][usize::from(d > 0)]) {
                    out.push(p);
                }
            }
        });
        out.sort();
        out.dedup();
        out
    }

    /// Its name in generated documentation: `fixed`, `periodic`, or each
    /// axis's sides (`mixed (z: reflect/fixed, y: fixed, x: periodic)`).
    pub fn describe(&self, axes: &[String], params: &[String]) -> String {
        match self {
            Boundary::Fixed => "fixed".into(),
            Boundary::Periodic => "periodic".into(),
            Boundary::Mixed(sides) => format!(
                "mixed ({})",
                axes.iter()
                    .zip(sides)
                    .map(|(axis, [lo, hi])| {
                        if lo == hi {
                            format!("{axis}: {}", lo.describe(params))
                        } else {
                            format!("{axis}: {}/{}", lo.describe(params), hi.describe(params))
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }
}

/// What one side of an axis does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// Cells within the radius of this edge keep their value.
    Fixed,
    /// A read past this edge wraps to the far side (both sides of the axis are periodic).
    Periodic,
    /// A read `k` cells past this edge reads the cell `k` cells inside it,
    /// mirrored about the edge cell: a zero normal derivative there.
    Reflect,
    /// A read past this edge reads the runtime parameter (an index into
    /// [`Stencil::params`]).
    Value(usize),
}

impl Side {
    /// Its spelling in a spec: `fixed`, `periodic`, `reflect`, `value = <param>`.
    pub fn describe(self, params: &[String]) -> String {
        match self {
            Side::Fixed => "fixed".into(),
            Side::Periodic => "periodic".into(),
            Side::Reflect => "reflect".into(),
            Side::Value(p) => format!("value = {}", params[p]),
        }
    }

    /// Whether the cells by this side are updated (every kind but `Fixed`).
    pub fn updates(self) -> bool {
        self != Side::Fixed
    }
}

/// A bound of a region along one axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Bound {
    /// The coordinate `k`: `k` cells from the low edge.
    Low(usize),
    /// The coordinate `n - k`: `k` cells from the high edge.
    High(usize),
}

impl Bound {
    /// Its spelling in a spec: `16`, `"n"`, `"n-16"`.
    pub fn describe(self) -> String {
        match self {
            Bound::Low(k) => k.to_string(),
            Bound::High(0) => "n".into(),
            Bound::High(k) => format!("n-{k}"),
        }
    }
}

/// Where an update applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Region {
    /// The cells `from <= i < to` along each axis (`[from, to]` per axis).
    Box(Vec<[Bound; 2]>),
    /// The cells of the grid outside a box.
    Outside(Vec<[Bound; 2]>),
}

impl Region {
    /// Its cells in words: `z in [0, 16), x in [4, n-4)`, or `outside` that.
    pub fn describe(&self, axes: &[String]) -> String {
        let spans = |b: &[[Bound; 2]]| {
            axes.iter()
                .zip(b)
                .filter(|(_, s)| **s != [Bound::Low(0), Bound::High(0)])
                .map(|(axis, [from, to])| {
                    format!("{axis} in [{}, {})", from.describe(), to.describe())
                })
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Region::Box(b) => spans(b),
            Region::Outside(b) => format!("outside {}", spans(b)),
        }
    }
}

/// A region of `[regions]`, by name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedRegion {
    /// Its name in the spec and in generated names.
    pub name: String,
    /// Its cells.
    pub region: Region,
}

/// Which version of a field a read sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    /// The previous time level of a two-level state field.
    Prev,
    /// The value at the start of the step (state and input fields).
    Start,
    /// The value written by an earlier statement of this step (state and temp fields).
    Updated,
}

/// A buffer a statement reads: a field at a version.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Slot {
    /// Index into [`Stencil::fields`].
    pub field: usize,
    /// Which version.
    pub version: Version,
}

/// A read of a slot at a constant offset (one entry per axis, in axis order).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Access {
    /// What is read.
    pub slot: Slot,
    /// Relative offset per axis.
    pub offset: Vec<i64>,
}

/// Arithmetic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
}

/// Math functions of the expression language.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// Square root.
    Sqrt,
    /// Absolute value.
    Abs,
    /// Minimum of two values.
    Min,
    /// Maximum of two values.
    Max,
    /// Exponential.
    Exp,
    /// Sine.
    Sin,
    /// Cosine.
    Cos,
    /// Fused multiply-add `a*b + c`.
    Fma,
}

impl Func {
    /// Every function, for name lookup.
    pub const ALL: [Func; 8] = [
        Func::Sqrt,
        Func::Abs,
        Func::Min,
        Func::Max,
        Func::Exp,
        Func::Sin,
        Func::Cos,
        Func::Fma,
    ];

    /// Its name in expressions.
    pub fn name(self) -> &'static str {
        match self {
            Func::Sqrt => "sqrt",
            Func::Abs => "abs",
            Func::Min => "min",
            Func::Max => "max",
            Func::Exp => "exp",
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Fma => "fma",
        }
    }

    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            Func::Min | Func::Max => 2,
            Func::Fma => 3,
            _ => 1,
        }
    }

    /// Floating-point operations it counts for.
    pub fn flops(self) -> usize {
        match self {
            Func::Fma => 2,
            _ => 1,
        }
    }
}

/// An expression tree, fully resolved: constants are literals, sums unrolled.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// A literal value.
    Lit(f64),
    /// A runtime parameter (index into [`Stencil::params`]).
    Param(usize),
    /// A grid read.
    Read(Access),
    /// Negation.
    Neg(Box<Expr>),
    /// A binary operation.
    Bin(Op, Box<Expr>, Box<Expr>),
    /// A function call.
    Call(Func, Vec<Expr>),
    /// An integer power, computed by repeated multiplication.
    PowI(Box<Expr>, i32),
}

impl Expr {
    /// Calls `f` on every read, in evaluation order.
    pub fn for_each_read(&self, f: &mut impl FnMut(&Access)) {
        match self {
            Expr::Lit(_) | Expr::Param(_) => {}
            Expr::Read(a) => f(a),
            Expr::Neg(x) | Expr::PowI(x, _) => x.for_each_read(f),
            Expr::Bin(_, a, b) => {
                a.for_each_read(f);
                b.for_each_read(f);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.for_each_read(f)),
        }
    }
}

/// One `[[update]]`: `target <- expr` at every cell of its region.
#[derive(Clone, Debug, PartialEq)]
pub struct Statement {
    /// Index into [`Stencil::fields`].
    pub target: usize,
    /// What is computed.
    pub expr: Expr,
    /// The expression as written, for comments in generated code.
    pub text: String,
    /// The params of the `value` sides its reads may pass (see
    /// [`Side::Value`]), which it reads beside its expression's.
    pub edge_params: Vec<usize>,
    /// The region it applies to (an index into [`Stencil::regions`]);
    /// `None`: all of its field's cells.
    pub region: Option<usize>,
}

impl Statement {
    /// The params the statement reads, its expression's and its `value`
    /// sides', in declaration order.
    pub fn params_used(&self) -> Vec<usize> {
        let mut used = self.edge_params.clone();
        collect_params(&self.expr, &mut used);
        used.sort();
        used.dedup();
        used
    }

    /// The params of its `value` sides that its expression does not read:
    /// only the cells whose reads pass those sides read them.
    pub fn edge_only_params(&self) -> Vec<usize> {
        let mut read = Vec::new();
        collect_params(&self.expr, &mut read);
        let mut only: Vec<usize> = self
            .edge_params
            .iter()
            .copied()
            .filter(|p| !read.contains(p))
            .collect();
        only.sort();
        only.dedup();
        only
    }

    /// The distinct offsets at which the statement reads `slot`, sorted.
    pub fn offsets(&self, slot: Slot) -> Vec<Vec<i64>> {
        let mut out = std::collections::BTreeSet::new();
        self.expr.for_each_read(&mut |a| {
            if a.slot == slot {
                out.insert(a.offset.clone());
            }
        });
        out.into_iter().collect()
    }

    /// The distinct slots read, sorted.
    pub fn slots(&self) -> Vec<Slot> {
        let mut slots = Vec::new();
        self.expr.for_each_read(&mut |a| slots.push(a.slot));
        slots.sort();
        slots.dedup();
        slots
    }
}

/// A checked stencil, ready for analysis and code generation.
#[derive(Clone, Debug, PartialEq)]
pub struct Stencil {
    /// Module name (a Rust identifier): the spec's name, or for a spec
    /// that lists its dtypes `<name>_<dtype>` (the symbols and files of
    /// this precision).
    pub name: String,
    /// For a spec that lists its dtypes (`dtype = ["f32", "f64"]`), its
    /// name: the generated Rust holds this precision in module
    /// `<family>::<dtype>`.
    pub family: Option<String>,
    /// The spec it came from.
    pub path: PathBuf,
    /// Documentation from the spec.
    pub doc: Option<String>,
    /// Element type.
    pub dtype: Dtype,
    /// Axis names, slowest to fastest.
    pub axes: Vec<String>,
    /// Grids, in declaration order.
    pub fields: Vec<Field>,
    /// Runtime parameter names, in declaration order.
    pub params: Vec<String>,
    /// Statements, in execution order.
    pub statements: Vec<Statement>,
    /// Boundary handling.
    pub boundary: Boundary,
    /// `[regions]`, in declaration order.
    pub regions: Vec<NamedRegion>,
    /// Tiling chosen per backend.
    pub tiling: Tiling,
    /// The fixed frame's width per axis where it is wider than the step's
    /// reads reach: the GPU form of a stencil whose temporaries, read
    /// one-sidedly, go inline keeps its source's frame
    /// (`backend::inline`). Empty for a stencil as lowered.
    pub frame: Vec<usize>,
}

impl Stencil {
    /// The name of statement `s`'s kernel: `update_<field>`, or for an
    /// update of a region `update_<field>_in_<region>` (lowering refuses a
    /// spec where two would share one).
    pub fn statement_name(&self, s: &Statement) -> String {
        match s.region {
            None => format!("update_{}", self.fields[s.target].name),
            Some(r) => format!(
                "update_{}_in_{}",
                self.fields[s.target].name, self.regions[r].name
            ),
        }
    }

    /// The params some statement of a step reads ([`Statement::params_used`]),
    /// in declaration order.
    pub fn params_used(&self) -> Vec<usize> {
        let mut used: Vec<usize> = self
            .statements
            .iter()
            .flat_map(Statement::params_used)
            .collect();
        used.sort();
        used.dedup();
        used
    }

    /// The last statement before statement `before` that updates `field`:
    /// the one whose value a read of `field`'s [`Version::Updated`] there
    /// finds (with `before` the number of statements, the field's value at
    /// the end of the step). `None` where no statement before it does.
    pub fn producer(&self, before: usize, field: usize) -> Option<usize> {
        (0..before).rfind(|&j| self.statements[j].target == field)
    }

    /// Whether some update applies to a region only.
    pub fn has_regions(&self) -> bool {
        self.statements.iter().any(|s| s.region.is_some())
    }

    /// Whether one update computes each step: a single `[[update]]`, or the
    /// updates of one field in regions, which partition its cells (each
    /// then runs as the stencil of that update alone would).
    pub fn one_update(&self) -> bool {
        let Some(first) = self.statements.first() else {
            return false;
        };
        self.statements.len() == 1
            || self
                .statements
                .iter()
                .all(|s| s.target == first.target && s.region.is_some())
    }

    /// Number of axes.
    pub fn dims(&self) -> usize {
        self.axes.len()
    }

    /// The fields the caller passes in: state and input grids, in declaration order.
    pub fn arguments(&self) -> impl Iterator<Item = (usize, &Field)> {
        self.fields
            .iter()
            .enumerate()
            .filter(|(_, f)| f.role != Role::Temp)
    }
}

fn collect_params(e: &Expr, out: &mut Vec<usize>) {
    match e {
        Expr::Param(i) => out.push(*i),
        Expr::Lit(_) | Expr::Read(_) => {}
        Expr::Neg(x) | Expr::PowI(x, _) => collect_params(x, out),
        Expr::Bin(_, a, b) => {
            collect_params(a, out);
            collect_params(b, out);
        }
        Expr::Call(_, args) => args.iter().for_each(|a| collect_params(a, out)),
    }
}
