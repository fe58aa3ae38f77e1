//! A kernel file's opening: the comment with the stencil, strategy and
//! plan, the includes, and the device helpers its kernels call.

use std::fmt::{self, Write as _};

use super::{Gen, Plan, temporal, tensor};
use crate::analysis::Analysis;
use crate::backend::Writer;
use crate::backend::gpu::plan::{self, SMALL_PLANES, model, small_planes_plan};
use crate::backend::gpu::{Dialect, step};
use crate::ir::{Stencil, Strategy};

/// The device helpers a file's kernels may call, each written only where
/// the kernels' text calls it (so that no helper is unused: nvcc's
/// `--Werror=all-warnings` refuses one).
pub(super) struct Calls {
    /// [`RESIDENCY`], the device's resident blocks.
    pub residency: bool,
    /// `stencil_mod`, an index wrapped onto a periodic axis.
    pub wrap: bool,
    /// `stencil_powi`, an integer power.
    pub powi: bool,
    /// `stencil_rsqrt`, a reciprocal square root.
    pub rsqrt: bool,
    /// `stencil_rsqrt_normal`, one of a normal argument.
    pub rsqrt_normal: bool,
}

impl Calls {
    /// The helpers `body` calls.
    pub fn of(body: &str) -> Self {
        let calls = |name| crate::backend::calls(body, name);
        Self {
            residency: calls(RESIDENCY),
            wrap: calls("stencil_mod"),
            powi: calls("stencil_powi"),
            rsqrt: calls(crate::backend::RSQRT),
            rsqrt_normal: calls(crate::backend::RSQRT_NORMAL),
        }
    }
}

/// The file's opening comment (of `st`), includes and the helpers its
/// kernels and `step`'s (the plan of launches of one step) call (`calls`).
pub(super) fn header(
    w: &mut Writer,
    (st, an): (&Stencil, &Analysis),
    plan: &Plan,
    step: Option<&Plan>,
    calls: &Calls,
    d: &Dialect,
) -> fmt::Result {
    let detail = detail(st, plan, d);
    let threads = if plan.strategy == Strategy::Tensor {
        tensor::block_layout(st)
    } else if plan::temporal::rings_plan(plan, st) {
        temporal::rings::layout(st)
    } else {
        format!("{} threads ({})", join_x(&plan.block), st.axes.join(", "))
    };
    let strategy = format!(
        "Strategy `{}`: blocks of {threads}{detail}.",
        plan.strategy.name()
    );
    crate::backend::file_header(w, st, an, &format!("{} kernels", d.title), &strategy)?;
    writeln!(w, "#include <{}>", d.header)?;
    if plan.strategy == Strategy::Persistent {
        writeln!(w, "#include <{}>", d.cooperative_header)?;
    }
    writeln!(w, "#include <stddef.h>")?;
    if calls.residency {
        writeln!(w, "#include <mutex>")?;
        residency_helper(w, d)?;
    }
    if calls.wrap {
        writeln!(w)?;
        crate::backend::mod_helper(w, "static __device__ __forceinline__")?;
    }
    if calls.powi {
        writeln!(w)?;
        crate::backend::powi_helper(w, st.dtype, "static __device__ __forceinline__")?;
    }
    rsqrt_helpers(w, st, calls)?;
    if st.dims() == 3 && plan.strategy.fuses_steps() {
        // A ring kernel, the only kernel of its file that fuses steps, has
        // blocks of one axis.
        let axes: &[&str] = if plan::temporal::rings_plan(plan, st) {
            &["x"]
        } else {
            &["x", "y"]
        };
        temporal::opaque_thread_helpers(w, axes)?;
    }
    if plan.strategy == Strategy::Tensor || step.is_some_and(|p| p.strategy == Strategy::Tensor) {
        tensor::helpers(w)?;
    }
    Ok(())
}

/// The reciprocal square roots `calls` names: the device's, and in f32 for
/// arguments that are surely normal the instruction that flushes
/// subnormal arguments to zero, which then gives the same result without
/// the scaling around it (three instructions of a dozen a cell in AN5D's
/// gradient2d).
fn rsqrt_helpers(w: &mut Writer, st: &Stencil, calls: &Calls) -> fmt::Result {
    let qualifiers = "static __device__ __forceinline__";
    let device = format!("rsqrt{}", crate::backend::suffix(st.dtype));
    if calls.rsqrt {
        writeln!(w)?;
        writeln!(w, "/* 1 / sqrt(x), within 2 ulp. */")?;
        let name = (crate::backend::RSQRT, st.dtype);
        crate::backend::rsqrt_helper(w, name, qualifiers, |w| writeln!(w, "return {device}(x);"))?;
    }
    if calls.rsqrt_normal {
        writeln!(w)?;
        writeln!(
            w,
            "/* 1 / sqrt(x) for x normal and positive (or inf, or NaN), within 2 ulp. */"
        )?;
        let name = (crate::backend::RSQRT_NORMAL, st.dtype);
        let asm = "asm(\"rsqrt.approx.ftz.f32 %0, %1;\" : \"=f\"(v) : \"f\"(x));";
        crate::backend::rsqrt_helper(w, name, qualifiers, |w| {
            ptx_or(w, ("float", asm), &format!("{device}(x)"))
        })?;
    }
    Ok(())
}

/// A helper's body that returns `v`, a `ty` that the PTX `asm` statement
/// writes, where nvcc compiles for the device, and `fallback` elsewhere
/// (HIP, the emulated device, nvcc's host pass).
pub(super) fn ptx_or(w: &mut Writer, (ty, asm): (&str, &str), fallback: &str) -> fmt::Result {
    w.directive("#if defined(__CUDA_ARCH__)")?;
    writeln!(w, "{ty} v;")?;
    writeln!(w, "{asm}")?;
    writeln!(w, "return v;")?;
    w.directive("#else")?;
    writeln!(w, "return {fallback};")?;
    w.directive("#endif")
}

/// What the strategy adds to the blocks in the file's header: a `stream`
/// block's march, a `persistent` launch's cap on resident blocks, and
/// whether one kernel computes the whole step ([`step::one_kernel`]).
pub(super) fn detail(st: &Stencil, plan: &Plan, d: &Dialect) -> String {
    let step = if step::one_kernel(st, plan) {
        "; one kernel computes every statement of the step"
    } else {
        ""
    };
    format!("{}{step}", strategy_detail(st, plan, d))
}

/// [`detail`]'s words for the strategy's blocks.
fn strategy_detail(st: &Stencil, plan: &Plan, d: &Dialect) -> String {
    if plan.strategy == Strategy::Stream {
        format!(
            ", marching {} cells along `{}` per block, {} per iteration, {} along `{}` per thread{}",
            plan.chunk,
            st.axes[0],
            plan.coarsen,
            plan.vector,
            st.axes[st.dims() - 1],
            small_planes_plan(plan, st, d).map_or(String::new(), |small| format!(
                "; planes of fewer than {SMALL_PLANES} cells run blocks of {} threads marching {} planes",
                join_x(&small.block),
                small.chunk
            ))
        )
    } else if plan::temporal::rings_plan(plan, st) {
        format!(
            ", {} cells of `{}` per lane, {} steps fused in shared rings (level 1 and level 2 in their own warps); \
             small planes and rows that are not whole 8-byte pairs run one step a launch",
            plan.vector, st.axes[2], plan.time_block,
        )
    } else if plan::temporal::sums_plan(plan, st) {
        temporal::sums::detail(plan, st)
    } else if plan::temporal::vector_plan(plan, st) {
        format!(
            ", {} cells of `{}` per thread as one vector, {} steps fused{}",
            plan.vector,
            st.axes[2],
            plan.time_block,
            if plan::temporal::splits_steps(plan, st) {
                "; rows that are not whole vectors run one step a launch"
            } else {
                ""
            }
        )
    } else if plan.strategy == Strategy::Tensor {
        let small = if plan.small_grids() {
            "; small grids run `stream` in 16-byte vectors"
        } else {
            ""
        };
        format!(
            ", the in-plane sum on the FP64 tensor cores, marching {} cells along `{}` per block{small}",
            plan.chunk, st.axes[0]
        )
    } else if let Some(k) = plan.occupancy {
        format!(", at most {k} resident per multiprocessor")
    } else if plan.strategy == Strategy::Naive {
        match (plan.coarsen, st.dims()) {
            (1, dims) if plan.vector > 1 => format!(
                ", {} consecutive cells of `{}` per thread, in {}-byte vectors where aligned (rows that are not whole vectors run a cell a thread)",
                plan.vector,
                st.axes[dims - 1],
                plan.vector * st.dtype.size()
            ),
            (c, dims) if plan.vector > 1 => format!(
                ", blocks of {c} x {} cells (`{}` by `{}`) per thread, their rows in {}-byte vectors where aligned (rows that are not whole vectors run columns of {c} cells)",
                plan.vector,
                st.axes[0],
                st.axes[dims - 1],
                plan.vector * st.dtype.size()
            ),
            (1, _) => String::new(),
            (c, 1) if model::row_vectors(st, c) => {
                format!(", {c} consecutive cells per thread, in 16-byte vectors where aligned")
            }
            (c, 1) => format!(", {c} cells per thread, a block apart"),
            (c, _) => format!(", {c} consecutive cells of `{}` per thread", st.axes[0]),
        }
    } else {
        String::new()
    }
}

/// A single-step kernel of the file besides the plan's, and its twins,
/// after a comment with its plan and what it is for.
pub(super) fn single_step_kernel(w: &mut Writer, g: &Gen, purpose: &str) -> fmt::Result {
    writeln!(w)?;
    writeln!(
        w,
        "/* The kernel of {purpose}: `{}`, blocks of {} threads{}. */",
        g.plan.strategy.name(),
        join_x(&g.plan.block),
        detail(g.st, g.plan, g.d)
    )?;
    twins(w, g)
}

/// The kernels of `g`'s twins, each after the first with what it is for.
pub(super) fn twins(w: &mut Writer, g: &Gen) -> fmt::Result {
    for (k, twin) in g.twins().iter().enumerate() {
        if k > 0 {
            writeln!(w)?;
            writeln!(w, "/* The same {}. */", twin.twin_purpose())?;
        }
        twin.kernel(w)?;
    }
    Ok(())
}

pub(super) fn join_x(v: &[usize]) -> String {
    v.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(" x ")
}

/// The helper the launchers that size their grids by the device ask for
/// residency ([`Gen::residency`]).
pub(super) const RESIDENCY: &str = "stencil_residency";

/// [`RESIDENCY`]: the device's multiprocessors and a kernel's resident
/// blocks, asked of the runtime once per device, kernel and launch shape
/// and kept in a table for the launches after. On the H100 the queries of
/// every launch held `auto`'s star3d25 and acoustic25 f64 on 64^3 (5 us a
/// step, the `stream` kernel of small grids) to 0.71x-0.94x that kernel
/// launched without them; cached, 1.00x.
pub(super) fn residency_helper(w: &mut Writer, d: &Dialect) -> fmt::Result {
    writeln!(w)?;
    let text = RESIDENCY_HELPER
        .replace("{api}", d.api)
        .replace("{multiprocessors}", d.multiprocessors)
        .replace("{name}", RESIDENCY);
    for line in text.lines() {
        writeln!(w, "{}", line)?;
    }
    Ok(())
}

/// [`residency_helper`]'s C: `{name}` stands for [`RESIDENCY`], `{api}` and
/// `{multiprocessors}` for the dialect's spellings.
pub(super) const RESIDENCY_HELPER: &str = r#"/* The current device's multiprocessors and the blocks of `kernel` (`threads` threads, `bytes` of dynamic
   shared memory) each keeps resident: asked of the runtime once per device, kernel and shape, then
   read from a table (a lock keeps it safe for launches from several host threads). */
static {api}Error_t {name}(const void *kernel, const int threads, const size_t bytes, int *multiprocessors, int *per_multiprocessor)
{
    struct Entry {
        const void *kernel;
        int device, threads;
        size_t bytes;
        int multiprocessors, per_multiprocessor;
    };
    static Entry table[64];
    static int used = 0;
    static std::mutex lock;
    int device = 0;
    {api}Error_t status = {api}GetDevice(&device);
    if (status != {api}Success)
        return status;
    {
        const std::lock_guard<std::mutex> guard(lock);
        for (int k = 0; k < used; ++k) {
            const Entry &e = table[k];
            if (e.kernel == kernel && e.device == device && e.threads == threads && e.bytes == bytes) {
                *multiprocessors = e.multiprocessors;
                *per_multiprocessor = e.per_multiprocessor;
                return {api}Success;
            }
        }
    }
    status = {api}DeviceGetAttribute(multiprocessors, {multiprocessors}, device);
    if (status == {api}Success)
        status = {api}OccupancyMaxActiveBlocksPerMultiprocessor(per_multiprocessor, kernel, threads, bytes);
    if (status != {api}Success)
        return status;
    const std::lock_guard<std::mutex> guard(lock);
    if (used < 64)
        table[used++] = Entry{kernel, device, threads, bytes, *multiprocessors, *per_multiprocessor};
    return {api}Success;
}"#;
