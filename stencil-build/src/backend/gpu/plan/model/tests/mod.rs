//! `auto`'s model: what it picks for each family of stencils, and the
//! defaults it fills in for the strategies a spec names; the shared
//! helpers and stencils here, the tests by what they cover.

mod fused;
mod named;
mod single;
mod statements;

use crate::backend::gpu::plan::model::{AUTO_REGISTER_WORDS, COLUMN_CELLS, WIDE_REGISTER_WORDS};
use crate::backend::gpu::plan::{Plan, register_words, resolve, small_planes_plan, step_plan};
use crate::backend::gpu::tests::{heat2d, lowered, stencil};
use crate::backend::gpu::{CUDA, Dialect, HIP, emit, step};
use crate::backend::step::rows_read;
use crate::ir::{GpuTiling, Stencil, Strategy};

/// A plan's strategy, block, chunk, coarsening and vector.
type Shape = (Strategy, Vec<usize>, usize, usize, usize);

fn shape(r: Plan) -> Shape {
    (r.strategy, r.block, r.chunk, r.coarsen, r.vector)
}

/// The plan `t` resolves to for `st` on `d`.
fn plan(st: &Stencil, t: &GpuTiling, d: &Dialect) -> Shape {
    shape(resolve(t, st, d).unwrap())
}

/// `auto`'s strategy, and the plan of its launches of one step.
fn one_step(st: &Stencil, d: &Dialect) -> (Strategy, Shape) {
    let fused = resolve(&GpuTiling::model(Strategy::Auto), st, d).unwrap();
    let r = step_plan(&fused, st, d).unwrap();
    (fused.strategy, shape(r))
}

/// A 3-D leapfrog in f32 reading `reads`.
fn leapfrog(axes: &str, reads: &str) -> Stencil {
    emit::temporal::tests::leapfrog(axes, "f32", reads, "")
}

const J2D5PT: &str = "u[-1,0] + u[0,-1] + u[0,0] + u[0,1] + u[1,0]";
const J3D7PT: &str =
    "u[-1,0,0] + u[0,-1,0] + u[0,0,-1] + u[0,0,0] + u[0,0,1] + u[0,1,0] + u[1,0,0]";
const SKEW: &str = "u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,1] + u[1,1,0]";
const STAR4: &str =
    "sum(r, 1, 4, u[r,0,0] + u[0,r,0] + u[0,0,r] + u[-r,0,0] + u[0,-r,0] + u[0,0,-r])";

/// A 2-D leapfrog in `dtype` on a grid of boundary `kind`, stepping `u`
/// by `expr` less its previous level read off the cell, which no fused
/// strategy takes: a stencil of single steps.
fn unfused2d(dtype: &str, kind: &str, expr: &str) -> Stencil {
    lowered(format!(
        "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [\"y\", \"x\"]\n\
         [fields]\nu = {{ role = \"state\", levels = 2 }}\n\
         [[update]]\ntarget = \"u\"\nexpr = \"{expr} - u.prev[0,1]\"\n[boundary]\nkind = \"{kind}\"\n"
    ))
}

/// The `(2r+1)^3` box of radius `r`, every weight 1.
fn box3(r: i64) -> String {
    let mut terms = Vec::new();
    for z in -r..=r {
        for y in -r..=r {
            for x in -r..=r {
                terms.push(format!("u[{z},{y},{x}]"));
            }
        }
    }
    terms.join(" + ")
}

/// A 3-D stencil in `dtype` stepping `u` by `expr`, which may read input
/// grids `inputs`.
fn with_inputs(dtype: &str, inputs: &[String], expr: &str) -> Stencil {
    let fields: String = inputs
        .iter()
        .map(|k| format!("{k} = {{ role = \"input\" }}\n"))
        .collect();
    lowered(format!(
        "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = {{ role = \"state\" }}\n{fields}\
         [[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n"
    ))
}

/// A 3-D star of radius 1 in `dtype` whose update reads `inputs` coefficient
/// grids at the cell.
fn varcoef3d(dtype: &str, inputs: usize) -> Stencil {
    let grids: Vec<String> = (0..inputs).map(|k| format!("k{k}")).collect();
    let weights: Vec<String> = grids.iter().map(|k| format!("{k}[0,0,0]")).collect();
    let expr = format!("u[0,0,0] + ({})*({J3D7PT})", weights.join(" + "));
    with_inputs(dtype, &grids, &expr)
}
