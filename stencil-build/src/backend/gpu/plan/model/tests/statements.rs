//! Steps of several statements or regions: in one kernel or a kernel an
//! update.

use super::*;

/// A star of reach 4 reading `k`, absorbed in layers of 8 cells (a region
/// outside a box) and reflected at the low side of `z`, in `dtype`.
fn layered(dtype: &str) -> Stencil {
    lowered(format!(
        "[stencil]\nname = \"s\"\ndtype = \"{dtype}\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = {{ role = \"state\" }}\nk = {{ role = \"input\" }}\n\
         [regions]\ninner = {{ z = [0, \"n-8\"], y = [8, \"n-8\"], x = [8, \"n-8\"] }}\n\
         layers = {{ outside = \"inner\" }}\n\
         [boundary]\nz = [\"reflect\", \"fixed\"]\n\
         [[update]]\ntarget = \"u\"\nregion = \"inner\"\nexpr = \"k[0,0,0] * ({STAR4})\"\n\
         [[update]]\ntarget = \"u\"\nregion = \"layers\"\nexpr = \"k[0,0,0] * ({STAR4}) / (1 + k[0,0,0])\"\n"
    ))
}

#[test]
fn updates_in_regions_of_one_field_step_as_that_update_would() {
    let auto = GpuTiling::model(Strategy::Auto);
    let f32 = layered("f32");
    assert!(f32.one_update(), "the pieces of one field's update");
    assert_eq!(
        plan(&f32, &auto, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 4),
        "`planes_stream`'s blocks, as for the stencil without regions (not `naive`)"
    );
    assert_eq!(
        plan(&layered("f64"), &auto, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 2),
        "f64: `tensor` cannot run regions; `planes_stream` in its place"
    );
    let two_fields = lowered(format!(
        "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = {{ role = \"state\" }}\nv = {{ role = \"state\" }}\n\
         [[update]]\ntarget = \"u\"\nexpr = \"{STAR4}\"\n\
         [[update]]\ntarget = \"v\"\nexpr = \"u[0,0,0] + v[0,0,0]\"\n"
    ));
    assert!(!two_fields.one_update(), "two fields' updates");
}

#[test]
fn steps_of_coupled_fields_march_planes_in_one_stream_kernel() {
    let auto = GpuTiling::model(Strategy::Auto);
    let spec = |axes: &str, laplacian: &dyn Fn(&str) -> String, here: &str| {
        let (lu, lv) = (laplacian("u"), laplacian("v"));
        lowered(format!(
            "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [{axes}]\n\
             [fields]\nu = {{ role = \"state\" }}\nv = {{ role = \"state\" }}\nr = {{ role = \"temp\" }}\n\
             [[update]]\ntarget = \"r\"\nexpr = \"u[{here}]*v[{here}]*v[{here}]\"\n\
             [[update]]\ntarget = \"u\"\nexpr = \"u[{here}] - r[{here}] + 0.2*({lu})\"\n\
             [[update]]\ntarget = \"v\"\nexpr = \"v[{here}] + r[{here}] + 0.1*({lv})\"\n\
             [boundary]\nkind = \"periodic\"\n"
        ))
    };
    // Gray-Scott's shape: the temporary read at the cell only, so the one
    // kernel recomputes nothing; its windows hold both fields' planes. Its
    // `naive` kernel would read 10 rows, more than the 9 values a cell its
    // kernels an update move, so `auto` marches planes on CUDA.
    let star3 = |f: &str| {
        format!("{f}[-1,0,0] + {f}[1,0,0] + {f}[0,-1,0] + {f}[0,1,0] + {f}[0,0,-1] + {f}[0,0,1]")
    };
    let coupled = spec("\"z\", \"y\", \"x\"", &star3, "0,0,0");
    assert!(rows_read(&coupled) > step::kernels_traffic(&coupled));
    let named = GpuTiling {
        vector: Some(4),
        ..GpuTiling::model(Strategy::Stream)
    };
    let planes = resolve(&named, &coupled, &CUDA).unwrap();
    assert!(step::one_kernel(&coupled, &planes), "in one kernel");
    // `auto` marches the same planes in one kernel: the statements share
    // the fields' rows (6 rows and 2 stores a cell, against 10 and 3).
    let chosen = resolve(&auto, &coupled, &CUDA).unwrap();
    assert_eq!(shape(chosen.clone()), shape(planes.clone()));
    assert!(step::shares_rows(&coupled));
    assert!(step::one_kernel(&coupled, &chosen));
    // Statements that read rows of their own (random_14's shape) would save
    // only memory traffic: `stream`, `auto`'s or named, keeps a kernel a
    // statement.
    let apart = lowered(
        "[stencil]\nname = \"s\"\ndtype = \"f64\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = { role = \"state\" }\nw = { role = \"state\" }\n\
         [[update]]\ntarget = \"u\"\nexpr = \"0.5*u[0,0,0] + 0.1*u[2,1,-1] + 0.2*w[3,1,1]\"\n\
         [[update]]\ntarget = \"w\"\nexpr = \"0.5*w[0,0,0] + 0.1*w[3,-1,2] + 0.2*u[-1,2,0]\"\n\
         [boundary]\nkind = \"periodic\"\n"
            .to_string(),
    );
    assert!(!step::shares_rows(&apart));
    let chosen = resolve(&auto, &apart, &CUDA).unwrap();
    assert_eq!(chosen.strategy, Strategy::Stream);
    assert!(!step::one_kernel(&apart, &chosen));
    let named = resolve(&named, &apart, &CUDA).unwrap();
    assert!(!step::one_kernel(&apart, &named));
    // In 2-D too.
    let star2 = |f: &str| format!("{f}[-1,0] + {f}[1,0] + {f}[0,-1] + {f}[0,1]");
    let flat = spec("\"y\", \"x\"", &star2, "0,0");
    let rows = resolve(&GpuTiling::model(Strategy::Stream), &flat, &CUDA).unwrap();
    assert!(step::one_kernel(&flat, &rows));
    // A `stream` whose windows of the whole step would not fit its
    // registers runs a kernel a statement.
    let mut deep = resolve(&GpuTiling::model(Strategy::Stream), &coupled, &CUDA).unwrap();
    assert!(step::one_kernel(&coupled, &deep));
    deep.chunk = 256;
    deep.coarsen = 64;
    let words = crate::backend::gpu::plan::step_register_words(&coupled, 256, 64, deep.vector);
    assert!(words > step::STREAM_WORDS);
    assert!(
        !step::one_kernel(&coupled, &deep),
        "windows over the budget"
    );
    // With a fixed boundary, a field read again at an offset after its
    // update is its value held in the frame there. Here the recomputation's
    // reads reach 2 cells, past the frame of 1, which a thread's windows
    // would load before it asks, so each statement marches planes of its own.
    let held = lowered(
        "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\nu = { role = \"state\" }\nv = { role = \"state\" }\n\
         [[update]]\ntarget = \"u\"\nexpr = \"u[0,0,0] + 0.1*(v[0,0,1] - v[0,0,-1])\"\n\
         [[update]]\ntarget = \"v\"\nexpr = \"v[0,0,0] + 0.1*(u[0,0,1] - u[0,0,-1])\"\n\
         [boundary]\nkind = \"fixed\"\n"
            .to_string(),
    );
    let stream = resolve(&GpuTiling::model(Strategy::Stream), &held, &CUDA).unwrap();
    assert!(step::fits(&held) && !step::one_kernel(&held, &stream));
    // A staggered grid's pressure reads the new velocity one cell back,
    // whose recomputation reads the pressure there and at the cell: within
    // the frame, so the windows lie on the grid.
    let staggered = lowered(
        "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
         [fields]\np = { role = \"state\" }\nv = { role = \"state\" }\n\
         [[update]]\ntarget = \"v\"\nexpr = \"v[0,0,0] - 0.1*(p[1,0,0] - p[0,0,0])\"\n\
         [[update]]\ntarget = \"p\"\nexpr = \"p[0,0,0] - 0.2*(v[0,0,0] - v[-1,0,0])\"\n\
         [boundary]\nkind = \"fixed\"\n"
            .to_string(),
    );
    let stream = resolve(&GpuTiling::model(Strategy::Stream), &staggered, &CUDA).unwrap();
    assert!(
        step::one_kernel(&staggered, &stream),
        "held within the frame"
    );
    // `auto` runs it so rather than `naive`'s one kernel: 2 row groups a
    // cell against 5 rows.
    assert!(crate::backend::gpu::plan::model::planes_in_one_kernel(
        &staggered, &CUDA
    ));
    let chosen = resolve(&auto, &staggered, &CUDA).unwrap();
    assert_eq!(chosen.strategy, Strategy::Stream);
    assert!(step::one_kernel(&staggered, &chosen));
}

#[test]
fn one_kernels_reading_many_rows_become_a_kernel_an_update_on_cuda() {
    let auto = GpuTiling::model(Strategy::Auto);
    let spec = |fields: &str, updates: &[(&str, &str)]| {
        let updates: String = updates
            .iter()
            .map(|(t, e)| format!("[[update]]\ntarget = \"{t}\"\nexpr = \"{e}\"\n"))
            .collect();
        lowered(format!(
            "[stencil]\nname = \"s\"\ndtype = \"f32\"\naxes = [\"z\", \"y\", \"x\"]\n\
             [fields]\n{fields}\n{updates}[boundary]\nkind = \"fixed\"\n"
        ))
    };
    // A temporary of far reads, read again 4 planes away: the one kernel
    // reads it at 8 rows, and the step at 4 more.
    let scattered = spec(
        "u = { role = \"state\" }\nk = { role = \"input\" }\nt = { role = \"temp\" }",
        &[
            (
                "t",
                "k[-3,-3,-3] + k[-1,-4,-4] + k[2,4,4] + k[-3,-1,-2]*k[-2,2,3]",
            ),
            (
                "u",
                "u[0,0,0] + t[0,0,0] + u[-1,3,3] + u[0,4,-2] + k[0,1,-3] - t[4,3,0]",
            ),
        ],
    );
    assert!(step::fits(&scattered));
    assert!(rows_read(&scattered) > step::kernels_traffic(&scattered));
    assert_eq!(
        plan(&scattered, &auto, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 4),
        "on CUDA: a kernel an update, marching 64 planes"
    );
    assert_eq!(
        plan(&scattered, &auto, &HIP).0,
        Strategy::Naive,
        "HIP keeps the one kernel"
    );
    // Face fluxes (as written, before the inliner, which would make them
    // one update): each temporary would cross memory twice for few rows, so
    // the step stays one kernel; `stream`'s loads 3 rows a cell where
    // `naive`'s reads 5, so it is `stream`'s, in the blocks that march 64
    // planes.
    let flux = spec(
        "u = { role = \"state\" }\nfx = { role = \"temp\" }\nfy = { role = \"temp\" }\nfz = { role = \"temp\" }",
        &[
            ("fx", "u[0,0,1] - u[0,0,0]"),
            ("fy", "u[0,1,0] - u[0,0,0]"),
            ("fz", "u[1,0,0] - u[0,0,0]"),
            (
                "u",
                "u[0,0,0] + 0.15*(fx[0,0,0] - fx[0,0,-1] + fy[0,0,0] - fy[0,-1,0] + fz[0,0,0] - fz[-1,0,0])",
            ),
        ],
    );
    assert!(step::fits(&flux));
    assert!(rows_read(&flux) <= step::kernels_traffic(&flux));
    assert_eq!((step::stream_rows(&flux), rows_read(&flux)), (3, 5));
    let chosen = resolve(&auto, &flux, &CUDA).unwrap();
    assert_eq!(
        shape(chosen.clone()),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 4)
    );
    assert!(step::one_kernel(&flux, &chosen), "the one kernel");
    assert_eq!(
        plan(&flux, &auto, &HIP).0,
        Strategy::Naive,
        "HIP keeps `naive`'s"
    );
}

#[test]
fn steps_of_several_kernels_march_planes_on_cuda() {
    // A leapfrog through a temporary whose step does not fit one kernel
    // (its mixed boundary's frame is a pass after each statement's kernel).
    // The spec is written out here: the packaged crate's tests cannot read
    // the repository's `tests/stencils`.
    let st = lowered(
        r#"
[stencil]
name  = "edges3d"
dtype = "f64"
axes  = ["z", "y", "x"]

[fields]
u   = { role = "state", levels = 2 }
lap = { role = "temp" }
vel = { role = "input" }

[params]
dt   = "f64"
wall = "f64"

[boundary]
z = ["reflect", "fixed"]
x = [{ value = "wall" }, "reflect"]

[[update]]
target = "lap"
expr   = "u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + u[0,0,-1] + u[0,0,2] - 6*u[0,0,0]"

[[update]]
target = "u"
expr   = "2*u[0,0,0] - u.prev[0,0,0] + dt*vel[0,0,0]*(lap[0,0,0] + 0.25*(lap[1,0,0] + lap[0,0,-1]))"
"#
        .to_string(),
    );
    assert!(!step::fits(&st) && !st.one_update());
    let auto = GpuTiling::model(Strategy::Auto);
    assert_eq!(
        plan(&st, &auto, &CUDA),
        (Strategy::Stream, vec![1, 8, 32], 64, 1, 1),
        "on CUDA: stream's defaults, 64 planes a block"
    );
    assert_eq!(plan(&st, &auto, &HIP).0, Strategy::Naive, "HIP: naive");
}
