//! The plans around a point: the neighbours of a plan in the plan space,
//! one parameter changed at a time, that a spec could name and that fit
//! the stencil on the dialect. What a tuner walks; `auto`'s plan is one
//! point of the space.

use super::{Dialect, Plan, fit, resolve};
use crate::ir::{GpuTiling, Stencil, Strategy, unfusable, untensorable};

/// The strategies a spec names (every one but `auto`).
const NAMED: [Strategy; 6] = [
    Strategy::Naive,
    Strategy::Tiled,
    Strategy::Stream,
    Strategy::Temporal,
    Strategy::Persistent,
    Strategy::Tensor,
];

/// The plans one step from `plan` for `st` on `d`: each of its parameters
/// in turn halved and doubled (every block extent, `chunk`, `coarsen`,
/// `vector`) or one less and one more (`time_block`, `occupancy`), and the
/// model's plan of every other strategy. Each is the plan a spec naming
/// it gets: settled by [`resolve`] and accepted by [`fit()`] and by the
/// spec's own checks ([`spec_accepts`]), both as asked and with every key
/// written out (a model default a spec could not write, such as 32-lane
/// rows on a 64-lane dialect, is left out). Each plan once, `plan` itself
/// not among them.
pub fn candidates(plan: &Plan, st: &Stencil, d: &Dialect) -> Vec<Plan> {
    let mut tilings = neighbours(&plan.tiling());
    tilings.extend(
        NAMED
            .into_iter()
            .filter(|&s| s != plan.strategy)
            .map(GpuTiling::model),
    );
    let mut out: Vec<Plan> = Vec::new();
    for t in &tilings {
        let Some(p) = accepted(t, st, d) else {
            continue;
        };
        let same = Plan {
            chosen: plan.chosen,
            ..p.clone()
        } == *plan;
        if !same && !out.contains(&p) {
            out.push(p);
        }
    }
    out
}

/// The values a sweep of the plan space tries for each key: coarse steps
/// (factors of 2 to 4) over the ranges that measured well somewhere.
const BLOCKS_1D: [&[usize]; 4] = [&[64], &[128], &[256], &[512]];
const BLOCKS_2D: [&[usize]; 7] = [
    &[1, 64],
    &[1, 128],
    &[1, 256],
    &[2, 64],
    &[4, 32],
    &[8, 32],
    &[16, 32],
];
const BLOCKS_3D: [&[usize]; 7] = [
    &[1, 2, 64],
    &[1, 4, 32],
    &[1, 8, 32],
    &[1, 4, 64],
    &[1, 1, 128],
    &[2, 4, 32],
    &[4, 4, 32],
];
const CHUNKS: [usize; 4] = [4, 16, 64, 256];
const COARSENS: [usize; 4] = [1, 2, 4, 8];
const VECTORS: [usize; 3] = [1, 2, 4];
const TIME_BLOCKS: [usize; 5] = [2, 3, 4, 6, 8];
const OCCUPANCIES: [usize; 2] = [1, 2];

/// A coarse sweep of the plan space for `st` on `d`: for every strategy
/// that can compute it, its model plan and that plan with one key at a
/// time set to each value of the sweep's list for it (block shapes,
/// `chunk`, `coarsen`, `vector`, `time_block`, `occupancy`); with
/// `exhaustive`, every combination of those values instead. Each plan once,
/// each as a spec naming it gets it (as [`candidates`]).
pub fn sweep(st: &Stencil, d: &Dialect, exhaustive: bool) -> Vec<Plan> {
    let mut out: Vec<Plan> = Vec::new();
    for strategy in NAMED {
        let model = GpuTiling::model(strategy);
        let Some(base) = accepted(&model, st, d) else {
            continue;
        };
        let keys = swept_keys(&base.tiling(), st.dims());
        let mut tilings = vec![base.tiling()];
        for (set, values) in &keys {
            let next: Vec<GpuTiling> = if exhaustive {
                tilings
                    .iter()
                    .flat_map(|t| values.iter().map(move |v| set(t, v)))
                    .collect()
            } else {
                values.iter().map(|v| set(&base.tiling(), v)).collect()
            };
            tilings.extend(next);
        }
        for t in &tilings {
            if let Some(p) = accepted(t, st, d).filter(|p| !out.contains(p)) {
                out.push(p);
            }
        }
    }
    out
}

/// A way to set one key of a tiling to a value of its list.
type Setter = fn(&GpuTiling, &[usize]) -> GpuTiling;

/// The keys a sweep varies for a plan whose written-out tiling is `t`
/// (those it sets), each with its values.
fn swept_keys(t: &GpuTiling, dims: usize) -> Vec<(Setter, Vec<Vec<usize>>)> {
    let one = |values: &[usize]| values.iter().map(|&v| vec![v]).collect::<Vec<_>>();
    let mut keys: Vec<(Setter, Vec<Vec<usize>>)> = Vec::new();
    if t.block.is_some() {
        let blocks: &[&[usize]] = match dims {
            1 => &BLOCKS_1D,
            2 => &BLOCKS_2D,
            _ => &BLOCKS_3D,
        };
        let set: Setter = |t, v| GpuTiling {
            block: Some(v.to_vec()),
            ..t.clone()
        };
        keys.push((set, blocks.iter().map(|b| b.to_vec()).collect()));
    }
    let scalar: [(bool, Setter, &[usize]); 5] = [
        (
            t.chunk.is_some(),
            |t, v| GpuTiling {
                chunk: Some(v[0]),
                ..t.clone()
            },
            &CHUNKS,
        ),
        (
            t.coarsen.is_some(),
            |t, v| GpuTiling {
                coarsen: Some(v[0]),
                ..t.clone()
            },
            &COARSENS,
        ),
        (
            t.vector.is_some(),
            |t, v| GpuTiling {
                vector: Some(v[0]),
                ..t.clone()
            },
            &VECTORS,
        ),
        (
            t.time_block.is_some(),
            |t, v| GpuTiling {
                time_block: Some(v[0]),
                ..t.clone()
            },
            &TIME_BLOCKS,
        ),
        (
            t.strategy == Strategy::Persistent,
            |t, v| GpuTiling {
                occupancy: Some(v[0]),
                ..t.clone()
            },
            &OCCUPANCIES,
        ),
    ];
    for (applies, set, values) in scalar {
        if applies {
            keys.push((set, one(values)));
        }
    }
    keys
}

/// The plan a spec whose `[tiling.<d>]` is `t` gets, where the spec's
/// checks, [`resolve`] and [`fit()`] accept it, written out as well.
fn accepted(t: &GpuTiling, st: &Stencil, d: &Dialect) -> Option<Plan> {
    if !spec_accepts(t, st, d) {
        return None;
    }
    resolve(t, st, d)
        .ok()
        .and_then(|p| fit(p, t.block.is_some(), st, d).ok())
        .filter(|p| spec_accepts(&p.tiling(), st, d))
}

/// `t` with one parameter halved or doubled, or one less or one more.
fn neighbours(t: &GpuTiling) -> Vec<GpuTiling> {
    let scaled = |v: usize| [v / 2, v * 2];
    let stepped = |v: usize| [v - 1, v + 1];
    let mut out = Vec::new();
    if let Some(block) = &t.block {
        for (a, &b) in block.iter().enumerate() {
            for v in scaled(b) {
                let mut block = block.clone();
                block[a] = v;
                out.push(GpuTiling {
                    block: Some(block),
                    ..t.clone()
                });
            }
        }
    }
    type Key = fn(&mut GpuTiling) -> &mut Option<usize>;
    type Steps = fn(usize) -> [usize; 2];
    let keys: [(Key, Steps); 5] = [
        (|t| &mut t.chunk, scaled),
        (|t| &mut t.coarsen, scaled),
        (|t| &mut t.vector, scaled),
        (|t| &mut t.time_block, stepped),
        (|t| &mut t.occupancy, stepped),
    ];
    for (key, step) in keys {
        let mut base = t.clone();
        let Some(value) = *key(&mut base) else {
            continue;
        };
        for v in step(value) {
            let mut n = base.clone();
            *key(&mut n) = Some(v);
            out.push(n);
        }
    }
    if t.strategy == Strategy::Naive && t.coarsen.is_none() {
        // A column of cells, which computes no vector of the contiguous axis.
        out.push(GpuTiling {
            coarsen: Some(2),
            vector: None,
            ..t.clone()
        });
    }
    if t.strategy == Strategy::Persistent && t.occupancy.is_none() {
        out.push(GpuTiling {
            occupancy: Some(1),
            ..t.clone()
        });
    }
    out
}

/// Whether a spec whose `[tiling.<d>]` is `t` passes the spec's checks of
/// it for `st` (the ranges and combinations of keys, whether the strategy
/// can compute `st`), which [`resolve`] and [`fit()`] assume.
fn spec_accepts(t: &GpuTiling, st: &Stencil, d: &Dialect) -> bool {
    let dims = st.dims();
    let fused = t.strategy.fuses_steps();
    let marches = t.strategy.marches();
    let within = |v: Option<usize>, most: usize| v.is_none_or(|v| (1..=most).contains(&v));
    let block_ok = t.block.as_ref().is_none_or(|b| {
        let cells = match t.vector {
            Some(v @ (2 | 4)) if t.strategy == Strategy::Temporal && dims == 3 => v,
            _ => 1,
        };
        b.iter().all(|&e| (1..=1024).contains(&e))
            && b.iter().product::<usize>() <= 1024
            && (t.strategy == Strategy::Naive || b[dims - 1] * cells % d.warp == 0)
            && (!marches || b[0] == 1)
    });
    let vector_ok = match t.vector {
        None => true,
        Some(v) if t.strategy == Strategy::Naive => dims >= 2 && [1, 2, 4].contains(&v),
        Some(_) if !marches || t.strategy == Strategy::Tensor => false,
        Some(_) if t.strategy == Strategy::Persistent && dims == 3 => false,
        Some(v) if fused && dims != 3 => (1..=8).contains(&v),
        Some(v) => [1, 2, 4].contains(&v),
    };
    let coarsen_ok = match t.coarsen {
        None => true,
        c if t.strategy == Strategy::Naive => within(c, 16),
        Some(_) if !marches || t.strategy == Strategy::Tensor || fused && dims != 3 => false,
        c => within(c, if fused { 32 } else { 16 }),
    };
    let computes = match t.strategy {
        s if s.fuses_steps() => unfusable(st, s.name()).is_none(),
        Strategy::Tensor => d.tensor_cores && untensorable(st, d.name).is_none(),
        _ => true,
    };
    block_ok
        && vector_ok
        && coarsen_ok
        && computes
        && (marches || t.chunk.is_none())
        && within(t.chunk, 1 << 20)
        && (fused || t.time_block.is_none())
        && within(t.time_block, 64)
        && (t.strategy == Strategy::Persistent || t.occupancy.is_none())
        && within(t.occupancy, 64)
        && (!marches || dims >= 2)
        && (t.strategy != Strategy::Tensor || t.block.is_none())
}

#[cfg(test)]
mod tests {
    use super::candidates;
    use crate::backend::gpu::{CUDA, Dialect, HIP, fit, resolve};
    use crate::ir::Strategy;

    /// A spec of `axes` and `dtype` updating `u` (and `v`, a leapfrog's
    /// previous level, where `leapfrog`) by `expr`, with `tiling` appended.
    fn spec(axes: &str, dtype: &str, expr: &str, leapfrog: bool, tiling: &str) -> String {
        let levels = if leapfrog { ", levels = 2" } else { "" };
        format!(
            "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [{axes}]\n\
             [fields]\nu = {{ role = \"state\"{levels} }}\n\
             [[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n{tiling}"
        )
    }

    /// Every candidate around `auto`'s plan and around each of those, for several stencils on both dialects, is what a spec
    /// naming it gets: the spec builds, and its plan is the candidate.
    #[test]
    fn candidates_are_the_plans_specs_naming_them_get() {
        let specs = [
            (
                "\"y\", \"x\"",
                "f32",
                "0.25 * (u[-1,0] + u[1,0] + u[0,-1] + u[0,1])",
                false,
            ),
            (
                "\"z\", \"y\", \"x\"",
                "f64",
                "u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] - u[0,0,1]",
                false,
            ),
            (
                "\"z\", \"y\", \"x\"",
                "f64",
                "sum(r, 1, 4, u[r,0,0] + u[-r,0,0] + u[0,r,0] + u[0,-r,0] + u[0,0,r] + u[0,0,-r])",
                false,
            ),
            (
                "\"y\", \"x\"",
                "f64",
                "2 * u[0,0] - u.prev[0,0] + 0.1 * (u[0,1] + u[0,-1] - 2 * u[0,0])",
                true,
            ),
            ("\"x\"", "f32", "u[-1] + u[1]", false),
        ];
        let mut checked = 0;
        for (axes, dtype, expr, leapfrog) in specs {
            let st = crate::backend::gpu::tests::lowered(spec(axes, dtype, expr, leapfrog, ""));
            for d in [&CUDA, &HIP] {
                let auto = resolve(&st.tiling.cuda, &st, d).unwrap();
                assert!(auto.chosen, "{expr}: the spec names no strategy");
                let around = candidates(&auto, &st, d);
                // (HIP's 3-D `temporal` defaults are rows of 32 lanes, which a spec cannot write.)
                assert!(
                    !super::spec_accepts(&auto.tiling(), &st, d)
                        || around.iter().any(|c| c.strategy == auto.strategy),
                    "{expr} on {}: no neighbour of `auto`'s {:?}",
                    d.name,
                    auto.strategy
                );
                let starts = std::iter::once(auto.clone()).chain(around);
                for start in starts {
                    for c in candidates(&start, &st, d) {
                        assert_eq!(spec_plan(&c, axes, dtype, expr, leapfrog, d), c);
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 100, "only {checked} candidates");
    }

    /// The plan a spec whose `[tiling.<d>]` is `c`'s section gets, after
    /// checking that the spec builds.
    fn spec_plan(
        c: &super::Plan,
        axes: &str,
        dtype: &str,
        expr: &str,
        leapfrog: bool,
        d: &Dialect,
    ) -> super::Plan {
        let text = spec(axes, dtype, expr, leapfrog, &c.section(d.name));
        if let Err(e) = crate::generate("s.stencil.toml", &text) {
            panic!("{text}\n{e}");
        }
        let st = crate::backend::gpu::tests::lowered(text);
        let tiling = if d.name == HIP.name {
            &st.tiling.hip
        } else {
            &st.tiling.cuda
        };
        assert_ne!(tiling.strategy, Strategy::Auto);
        resolve(tiling, &st, d)
            .and_then(|p| fit(p, tiling.block.is_some(), &st, d))
            .unwrap()
    }
}
