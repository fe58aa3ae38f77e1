//! The defaults the model fills in for the strategies a spec names.

use super::*;

#[test]
fn named_strategies_get_the_models_defaults() {
    let auto = GpuTiling::model(Strategy::Auto);
    let j2d64 = stencil("\"y\", \"x\"", "f64", J2D5PT);
    let j3d64 = stencil("\"z\", \"y\", \"x\"", "f64", J3D7PT);
    let skew64 = stencil("\"z\", \"y\", \"x\"", "f64", SKEW);
    let stream = GpuTiling {
        strategy: Strategy::Stream,
        ..auto.clone()
    };
    assert_eq!(
        plan(&j3d64, &stream, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 1)
    );
    let tiled = GpuTiling {
        strategy: Strategy::Tiled,
        ..auto.clone()
    };
    assert_eq!(plan(&j2d64, &tiled, &CUDA).1, vec![8, 32]);
    let temporal = GpuTiling {
        strategy: Strategy::Temporal,
        ..auto.clone()
    };
    let t = resolve(&temporal, &j2d64, &CUDA).unwrap();
    assert_eq!(
        (t.block, t.chunk, t.vector, t.time_block),
        (vec![1, 128], 256, 2, 7),
        "2-D f64: 64-cell warp tiles, 7 skewed steps in seven eighths of the register budget"
    );
    // Skewed steps of stencils that are not lean keep three quarters of it.
    let steps_in = |dtype: &str, expr: &str, fields: &str| {
        let st = lowered(format!(
            "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [\"y\", \"x\"]\n[fields]\n\
             u = {{ role = \"state\" }}\n{fields}[[update]]\ntarget = \"u\"\nexpr = \"{expr}\"\n"
        ));
        resolve(&temporal, &st, &CUDA).unwrap().time_block
    };
    let steps = |expr: &str, fields: &str| steps_in("f64", expr, fields);
    let star2 =
        "u[-2,0] + u[-1,0] + u[0,-2] + u[0,-1] + u[0,0] + u[0,1] + u[0,2] + u[1,0] + u[2,0]";
    assert_eq!(steps(star2, ""), 4, "a lean star of radius 2");
    assert_eq!(
        steps(&format!("({star2}) / 118"), ""),
        4,
        "divided by a constant"
    );
    assert_eq!(
        steps(&format!("u[0,0] + 1 / sqrt({star2})"), ""),
        3,
        "a square root"
    );
    assert_eq!(
        steps(&format!("k[0,0] * ({star2})"), "k = { role = \"input\" }\n"),
        3,
        "an input grid"
    );
    assert_eq!(steps(J2D5PT, ""), 7);
    assert_eq!(
        steps(
            &format!("k[0,0] * ({J2D5PT})"),
            "k = { role = \"input\" }\n"
        ),
        6
    );
    // Chained (f32) steps: the whole budget, seven eighths for a box (a
    // weighted sum whose columns along the rows are full).
    let box2 = (-2..=2)
        .flat_map(|y| (-2..=2).map(move |x| format!("0.04*u[{y},{x}]")))
        .collect::<Vec<_>>()
        .join(" + ");
    assert_eq!(steps_in("f32", star2, ""), 6, "a star of radius 2");
    assert_eq!(steps_in("f32", &box2, ""), 5, "a box of radius 2");
    let diamond = "u[-2,0] + u[-1,-1] + u[-1,0] + u[-1,1] + u[0,-2] + u[0,-1] + u[0,0] \
                   + u[0,1] + u[0,2] + u[1,-1] + u[1,0] + u[1,1] + u[2,0]";
    assert_eq!(steps_in("f32", diamond, ""), 6, "a diamond of radius 2");
    let column = "u[-2,0] + u[-1,0] + u[0,0] + u[1,0] + u[2,0]";
    assert_eq!(steps_in("f32", column, ""), 6, "a column of radius 2");
    assert_eq!(
        steps_in(
            "f32",
            &format!("k[0,0] * ({star2})"),
            "k = { role = \"input\" }\n"
        ),
        6,
        "a star of radius 2 and an input grid"
    );
    assert_eq!(
        steps_in("f32", J2D5PT, ""),
        10,
        "radius 1: the most steps either way"
    );
    let t = resolve(&temporal, &j3d64, &CUDA).unwrap();
    assert_eq!(
        (t.block, t.chunk, t.coarsen, t.vector, t.time_block),
        (vec![1, 8, 64], 128, 4, 1, 3),
        "3-D f64 stars of radius 1: tiles of 64 x 32 cells, 3 steps (rings of 2 planes, 108 KiB)"
    );
    let t = resolve(&temporal, &skew64, &CUDA).unwrap();
    assert_eq!(
        (t.block, t.coarsen, t.time_block),
        (vec![1, 8, 32], 4, 2),
        "other 3-D f64 stencils of radius 1: tiles of 32 x 32 cells, 2 steps (rings of 3 planes here, 55 KiB)"
    );
    let t = resolve(&temporal, &j3d64, &HIP).unwrap();
    assert_eq!(
        (t.block, t.time_block),
        (vec![1, 8, 32], 3),
        "HIP: rings within its 64 KiB (55 KiB)"
    );
    let persistent = GpuTiling {
        strategy: Strategy::Persistent,
        ..auto
    };
    let p = resolve(&persistent, &j2d64, &CUDA).unwrap();
    assert_eq!(
        (p.strategy, p.block, p.chunk, p.vector, p.time_block),
        (Strategy::Persistent, vec![1, 128], 256, 2, 7),
        "`persistent` takes `temporal`'s tiling"
    );
}

/// A 3-D diffusion in `dtype` whose face coefficients are harmonic means of
/// coefficient grid `k` at the cell and its neighbour: `k` read at 7 offsets.
fn harmonic3d(dtype: &str) -> Stencil {
    let faces: Vec<String> = ["-1,0,0", "1,0,0", "0,-1,0", "0,1,0", "0,0,-1", "0,0,1"]
        .iter()
        .map(|o| format!("2*k[0,0,0]*k[{o}]/(k[0,0,0] + k[{o}])*(u[{o}] - u[0,0,0])"))
        .collect();
    let expr = format!("u[0,0,0] + 0.1*({})", faces.join(" + "));
    with_inputs(dtype, &["k".to_string()], &expr)
}

#[test]
fn fused_3d_tiles_take_fewer_steps_or_rows_where_input_reads_would_not_fit_the_registers() {
    use crate::backend::gpu::plan::temporal::planes::{HELD_WORDS, Planes};
    let temporal = GpuTiling::model(Strategy::Temporal);
    let held = |st: &Stencil, t: &GpuTiling| {
        let p = resolve(t, st, &CUDA).unwrap();
        let sh = Planes::new(&p, st, CUDA.shared_max);
        (p.block, p.coarsen, p.time_block, sh.held_words())
    };
    // k read at 7 offsets: 8 rows over 3 steps would hold 72 cells of
    // windows, 16 of the plane ahead and 336 of input reads (424 words);
    // 2 steps of 8 rows 288; 2 steps of 4 rows 144.
    let f32 = harmonic3d("f32");
    let sh = Planes::new(
        &resolve(&temporal, &f32, &CUDA).unwrap(),
        &f32,
        CUDA.shared_max,
    );
    assert_eq!((sh.inputs, sh.prev), (7, false), "k at 7 offsets");
    assert_eq!(held(&f32, &temporal), (vec![1, 4, 64], 4, 2, 144));
    assert_eq!(
        held(&harmonic3d("f64"), &temporal),
        (vec![1, 8, 32], 2, 2, 144)
    );
    assert!(
        sh.t * sh.window() * sh.c <= crate::backend::gpu::plan::temporal::planes::BOUNDED_WINDOWS
            && !sh.bounded(),
        "the input reads take the windows past the bound to 768 threads"
    );
    // Blocks of 512 threads leave each 128 registers; of 256, 255.
    let wide = Planes {
        bx: 64,
        by: 8,
        ..sh.clone()
    };
    assert_eq!(wide.held_limit(), 96);
    assert_eq!(
        Planes {
            by: 4,
            ..wide.clone()
        }
        .held_limit(),
        HELD_WORDS[0]
    );
    assert_eq!(
        Planes {
            by: 4,
            f64: true,
            ..wide
        }
        .held_limit(),
        HELD_WORDS[1]
    );
    // Coefficient grids read at the cell: two keep 3 steps of 8 rows (184
    // words), three take 2 steps (160), four 4 rows (140: 3 steps of 4 rows
    // do more than 2 of 4).
    assert_eq!(
        held(&varcoef3d("f32", 2), &temporal),
        (vec![1, 4, 64], 8, 3, 184)
    );
    assert_eq!(
        held(&varcoef3d("f32", 3), &temporal),
        (vec![1, 4, 64], 8, 2, 160)
    );
    assert_eq!(
        held(&varcoef3d("f32", 4), &temporal),
        (vec![1, 4, 64], 4, 3, 140)
    );
    // With 3 steps from the spec, the tiles keep the rows that store half their cells.
    let three = GpuTiling {
        time_block: Some(3),
        ..temporal.clone()
    };
    assert_eq!(held(&f32, &three), (vec![1, 4, 64], 4, 3, 212));
    // Stencils that read no input grid keep their tiles.
    let j3d7pt = stencil("\"z\", \"y\", \"x\"", "f32", J3D7PT);
    assert_eq!(
        plan(&j3d7pt, &temporal, &CUDA),
        (Strategy::Temporal, vec![1, 4, 64], 128, 8, 1)
    );
}
