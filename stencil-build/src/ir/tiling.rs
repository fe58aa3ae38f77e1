//! Tiling choices per backend, read from `[tiling.<backend>]` and checked
//! against what can work for this stencil.

use toml::Spanned;

use crate::diagnostic::Diagnostic;
use crate::spec::{GpuTilingSection, OpenmpTilingSection, Source, TilingSection};

/// Tiling for every backend.
#[derive(Clone, Debug, PartialEq)]
pub struct Tiling {
    /// `[tiling.openmp]`, or the default.
    pub openmp: OpenmpTiling,
    /// `[tiling.cuda]`, or `auto`.
    pub cuda: GpuTiling,
    /// `[tiling.hip]`, or `auto`.
    pub hip: GpuTiling,
}

/// Cache blocking and fused steps of the OpenMP backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenmpTiling {
    /// Block extent per axis, in axis order: a single step's cache blocks;
    /// with fused steps in 3-D, `block[0] x block[1]` is a tile's band of
    /// planes and rows.
    pub block: Vec<usize>,
    /// Most steps one sweep of a tile carries through cache (1: none fused).
    pub time_block: usize,
}

/// Most steps `[tiling.openmp]` may fuse.
pub const MAX_OPENMP_TIME_BLOCK: usize = 64;

/// The largest OpenMP block extent, which takes a whole axis of any grid
/// the C's `ptrdiff_t` loops address in practice (the runtime reads it as
/// `stencil_rt::openmp::WHOLE_AXIS`).
pub const WHOLE_AXIS: usize = 1 << 24;

impl OpenmpTiling {
    /// The documented default for a stencil of `dims` axes that can
    /// (`fusable`) or cannot fuse steps: single steps in bands of 32 whole
    /// rows in 2-D (blocks 512 cells wide ran up to 5x slower than whole
    /// rows) and blocks of 8 x 16 x 512 in 3-D (but from [`MARCHING_REACH`]);
    /// fused, 8 steps in 2-D and 4
    /// in 3-D over tiles of 64 planes by 16 rows (measured best on a
    /// 16-core Xeon, 2 MiB of L2 a core: see docs/design-notes.md).
    pub fn default_for(dims: usize, fusable: bool) -> Self {
        let (block, time_block) = match (dims, fusable) {
            (1, _) => (vec![4096], 1),
            (2, false) => (vec![32, WHOLE_AXIS], 1),
            (2, true) => (vec![32, WHOLE_AXIS], 8),
            (_, false) => (vec![8, 16, 512], 1),
            (_, true) => (vec![64, 16, 512], 4),
        };
        OpenmpTiling { block, time_block }
    }
}

/// GPU kernel strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Strategy {
    /// The model picks.
    Auto,
    /// One thread per cell.
    Naive,
    /// Shared-memory tile with halo.
    Tiled,
    /// 2.5-D streaming along the slowest axis.
    Stream,
    /// Fused time steps, overlapped tiles.
    Temporal,
    /// Persistent kernel, grid-wide sync, deep temporal blocking.
    Persistent,
    /// 2.5-D streaming with the in-plane sum on the FP64 tensor cores (CUDA).
    Tensor,
}

impl Strategy {
    const NAMES: [(&'static str, Strategy); 7] = [
        ("auto", Strategy::Auto),
        ("naive", Strategy::Naive),
        ("tiled", Strategy::Tiled),
        ("stream", Strategy::Stream),
        ("temporal", Strategy::Temporal),
        ("persistent", Strategy::Persistent),
        ("tensor", Strategy::Tensor),
    ];

    /// Its name in specs.
    pub fn name(self) -> &'static str {
        Strategy::NAMES
            .iter()
            .find(|(_, s)| *s == self)
            .map_or("auto", |(n, _)| n)
    }

    /// Whether it fuses time steps (`temporal`, `persistent`).
    pub fn fuses_steps(self) -> bool {
        matches!(self, Strategy::Temporal | Strategy::Persistent)
    }

    /// Whether its blocks march along the slowest axis (`stream`, `tensor`,
    /// the fused strategies), `chunk` cells of it a block.
    pub fn marches(self) -> bool {
        matches!(self, Strategy::Stream | Strategy::Tensor) || self.fuses_steps()
    }
}

/// Cells of the slowest axis a `stream` block marches through when `chunk` is not given.
pub const STREAM_CHUNK: usize = 64;

/// Cells of the slowest axis a `tensor` block marches through when `chunk`
/// is not given: on the H100, star3d25 f64 ran at 1.21x `stream` with 64
/// (and 3 planes in flight), 1.30x with 128 and 1.33x with 256 (4 in
/// flight; its warm-up of 2 r planes a block paid less often;
/// design notes, `dmma-star3d25`).
pub const TENSOR_CHUNK: usize = 256;

/// Tiling of a GPU backend.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GpuTiling {
    /// The strategy.
    pub strategy: Strategy,
    /// Threads per block per axis, in axis order; `None` lets the model choose.
    pub block: Option<Vec<usize>>,
    /// Steps fused per kernel launch (`temporal`); `None` lets the model choose.
    pub time_block: Option<usize>,
    /// Cells per thread along the streamed axis (`stream`: per iteration), or
    /// along the middle axis of a 3-D stencil (`temporal`); `None` lets the model choose.
    pub coarsen: Option<usize>,
    /// Cells of the slowest axis each block marches through (`stream`,
    /// `temporal`); `None` lets the model choose.
    pub chunk: Option<usize>,
    /// Cells of the contiguous axis per thread (`stream`: loaded and stored as
    /// one vector; 2-D `temporal`: per lane of a warp tile); `None` lets the model choose.
    pub vector: Option<usize>,
    /// The most blocks per multiprocessor a `persistent` launch keeps
    /// resident; `None`: as many as fit.
    pub occupancy: Option<usize>,
}

impl GpuTiling {
    /// `strategy` with every other choice left to the model.
    pub fn model(strategy: Strategy) -> Self {
        GpuTiling {
            strategy,
            block: None,
            time_block: None,
            coarsen: None,
            chunk: None,
            vector: None,
            occupancy: None,
        }
    }
}

/// Checks `[tiling]` for a stencil of `dims` axes.
pub fn check(section: &TilingSection, dims: usize, src: &Source) -> Result<Tiling, Diagnostic> {
    let openmp = match &section.openmp {
        Some(s) => openmp(s, dims, src)?,
        None => OpenmpTiling::default_for(dims, false),
    };
    let cuda = gpu(section.cuda.as_ref(), dims, 32, "cuda", src)?;
    let hip = gpu(section.hip.as_ref(), dims, 64, "hip", src)?;
    Ok(Tiling { openmp, cuda, hip })
}

/// Checks a `[tiling.cuda]` or `[tiling.hip]` section (`backend`) found
/// outside a spec (a tuning file's plan), for a stencil of `dims` axes.
pub fn check_gpu(
    section: &Spanned<GpuTilingSection>,
    dims: usize,
    backend: &str,
    src: &Source,
) -> Result<GpuTiling, Diagnostic> {
    let warp = if backend == "hip" { 64 } else { 32 };
    gpu(Some(section), dims, warp, backend, src)
}

fn openmp(
    section: &Spanned<OpenmpTilingSection>,
    dims: usize,
    src: &Source,
) -> Result<OpenmpTiling, Diagnostic> {
    let mut tiling = OpenmpTiling::default_for(dims, false);
    if let Some(block) = &section.get_ref().block {
        tiling.block = extents(block, dims, WHOLE_AXIS as i64, src)?;
    }
    if let Some(tb) = &section.get_ref().time_block {
        tiling.time_block = bounded(tb, 1, MAX_OPENMP_TIME_BLOCK as i64, "time_block", src)?;
    }
    Ok(tiling)
}

/// Checks a per-axis list of positive extents.
fn extents(
    list: &Spanned<Vec<Spanned<i64>>>,
    dims: usize,
    max: i64,
    src: &Source,
) -> Result<Vec<usize>, Diagnostic> {
    if list.get_ref().len() != dims {
        return Err(src
            .error(
                list.span(),
                format!(
                    "`block` has {} entries but the stencil has {dims} axes",
                    list.get_ref().len()
                ),
            )
            .with_hint(format!(
                "give one extent per axis, in axis order (slowest first), e.g. {}",
                example(dims)
            )));
    }
    list.get_ref()
        .iter()
        .map(|v| match *v.get_ref() {
            n if (1..=max).contains(&n) => Ok(n as usize),
            n => Err(src
                .error(v.span(), format!("block extent {n} cannot work"))
                .with_hint(format!("use an extent between 1 and {max}"))),
        })
        .collect()
}

fn example(dims: usize) -> &'static str {
    match dims {
        1 => "[128]",
        2 => "[8, 32]",
        _ => "[4, 8, 32]",
    }
}

fn gpu(
    section: Option<&Spanned<GpuTilingSection>>,
    dims: usize,
    warp: usize,
    backend: &str,
    src: &Source,
) -> Result<GpuTiling, Diagnostic> {
    let Some(section) = section else {
        return Ok(GpuTiling::model(Strategy::Auto));
    };
    let s = section.get_ref();
    let strategy = match &s.strategy {
        None => Strategy::Auto,
        Some(name) => strategy(name, src)?,
    };
    let block = gpu_block_key(s, strategy, dims, warp, backend, src)?;
    let time_block = match &s.time_block {
        None => None,
        Some(t) if !strategy.fuses_steps() => {
            return Err(src
                .error(
                    t.span(),
                    "`time_block` only applies to the temporal strategies",
                )
                .with_hint(
                    "set `strategy = \"temporal\"` or `\"persistent\"`, or remove `time_block`",
                ));
        }
        Some(t) => Some(bounded(t, 1, 64, "time_block", src)?),
    };
    let marches = strategy.marches();
    let coarsen = gpu_coarsen(s.coarsen.as_ref(), strategy, dims, src)?;
    let chunk = match &s.chunk {
        None => None,
        Some(c) if !marches => return Err(marching_only(c, "chunk", src)),
        Some(c) => Some(bounded(c, 1, 1 << 20, "chunk", src)?),
    };
    if let (true, Some(b), Some(list)) = (marches, &block, &s.block) {
        marching_block(b, list, strategy, src)?;
    }
    if marches && dims < 2 {
        return Err(src
            .error(
                section.span(),
                format!(
                    "`{}` marches along the slowest axis and needs at least 2 axes",
                    strategy.name()
                ),
            )
            .with_hint("use `strategy = \"naive\"` for a 1-D stencil (what `auto` runs: 16 bytes of cells a thread)"));
    }
    let vector = gpu_vector(s.vector.as_ref(), strategy, dims, src)?;
    let occupancy = gpu_occupancy(s.occupancy.as_ref(), strategy, src)?;
    Ok(GpuTiling {
        strategy,
        block,
        time_block,
        coarsen,
        chunk,
        vector,
        occupancy,
    })
}

/// `block` of `[tiling.<gpu>]` for `strategy` on `dims` axes: none for
/// `tensor`, whose blocks are fixed.
fn gpu_block_key(
    s: &GpuTilingSection,
    strategy: Strategy,
    dims: usize,
    warp: usize,
    backend: &str,
    src: &Source,
) -> Result<Option<Vec<usize>>, Diagnostic> {
    let Some(list) = &s.block else {
        return Ok(None);
    };
    if strategy == Strategy::Tensor {
        return Err(src
            .error(
                list.span(),
                "`tensor` blocks are 16 warps, each computing 8 x 8 cells of a plane (a tile of 32 x 32)",
            )
            .with_hint("remove `block`; set the planes a block marches with `chunk`"));
    }
    // A 3-D `temporal` thread of a vector covers that many cells of a row.
    let cells = match s.vector.as_ref().map(|v| *v.get_ref()) {
        Some(v @ (2 | 4)) if strategy == Strategy::Temporal && dims == 3 => v as usize,
        _ => 1,
    };
    gpu_block(list, dims, (warp, cells), strategy, backend, src).map(Some)
}

/// `occupancy` of `[tiling.<gpu>]`: `persistent`'s only.
fn gpu_occupancy(
    occupancy: Option<&Spanned<i64>>,
    strategy: Strategy,
    src: &Source,
) -> Result<Option<usize>, Diagnostic> {
    match occupancy {
        None => Ok(None),
        Some(o) if strategy != Strategy::Persistent => Err(src
            .error(
                o.span(),
                "`occupancy` only applies to the `persistent` strategy",
            )
            .with_hint("set `strategy = \"persistent\"`, or remove `occupancy`")),
        Some(o) => Ok(Some(bounded(o, 1, 64, "occupancy", src)?)),
    }
}

/// `vector` of `[tiling.<gpu>]` for `strategy` on `dims` axes.
fn gpu_vector(
    vector: Option<&Spanned<i64>>,
    strategy: Strategy,
    dims: usize,
    src: &Source,
) -> Result<Option<usize>, Diagnostic> {
    let marches = strategy.marches();
    Ok(match vector {
        None => None,
        Some(v) if strategy == Strategy::Naive && dims == 1 => {
            return Err(src
                .error(
                    v.span(),
                    "`vector` of `naive` sets the cells of the contiguous axis a 2-D or 3-D thread computes",
                )
                .with_hint(
                    "remove `vector`: a 1-D `naive` thread computes `coarsen` cells (4 in f32, 2 in f64 make a 16-byte vector)",
                ));
        }
        Some(v) if !marches && strategy != Strategy::Naive => {
            return Err(marching_only(v, "vector", src));
        }
        Some(v) if strategy == Strategy::Tensor => return Err(tensor_fixed(v, "vector", src)),
        Some(v) if strategy == Strategy::Persistent && dims == 3 => {
            return Err(src
                .error(
                    v.span(),
                    "`vector` of `persistent` sets the cells per lane of a 2-D stencil".to_string(),
                )
                .with_hint(
                    "remove `vector`: a 3-D `persistent` thread computes one column of the contiguous axis (set its rows with `coarsen`), \
                     or use `strategy = \"temporal\"`, whose threads can compute a vector",
                ));
        }
        Some(v) if strategy.fuses_steps() && dims != 3 => Some(bounded(v, 1, 8, "vector", src)?),
        Some(v) if ![1, 2, 4].contains(v.get_ref()) => {
            return Err(src
                .error(v.span(), format!("`vector = {}` cannot work", v.get_ref()))
                .with_hint("use 1, 2 or 4 cells (at most 16 bytes: 2 in f64)"));
        }
        Some(v) => Some(*v.get_ref() as usize),
    })
}

/// `coarsen` of `[tiling.<gpu>]` for `strategy` on `dims` axes.
fn gpu_coarsen(
    coarsen: Option<&Spanned<i64>>,
    strategy: Strategy,
    dims: usize,
    src: &Source,
) -> Result<Option<usize>, Diagnostic> {
    let marches = strategy.marches();
    let fused = strategy.name();
    Ok(match coarsen {
        None => None,
        Some(c) if strategy == Strategy::Naive => Some(bounded(c, 1, 16, "coarsen", src)?),
        Some(c) if !marches => return Err(marching_only(c, "coarsen", src)),
        Some(c) if strategy == Strategy::Tensor => return Err(tensor_fixed(c, "coarsen", src)),
        Some(c) if strategy.fuses_steps() && dims != 3 => {
            return Err(src
                .error(
                    c.span(),
                    format!("`coarsen` of `{fused}` sets the cells per thread along the middle axis of a 3-D stencil"),
                )
                .with_hint(format!("remove `coarsen`: a 2-D `{fused}` thread computes one row")));
        }
        Some(c) if strategy.fuses_steps() => Some(bounded(c, 1, 32, "coarsen", src)?),
        Some(c) => Some(bounded(c, 1, 16, "coarsen", src)?),
    })
}

/// A marching strategy's block `b` (given as `list`), whose slowest axis
/// has one thread.
fn marching_block(
    b: &[usize],
    list: &Spanned<Vec<Spanned<i64>>>,
    strategy: Strategy,
    src: &Source,
) -> Result<(), Diagnostic> {
    let fused = strategy.name();
    if b[0] != 1 {
        let mut fixed = b.to_vec();
        fixed[0] = 1;
        let (what, hint) = if strategy == Strategy::Stream {
            (
                "`stream` runs one thread per column of the slowest axis",
                "set the cells per block along that axis with `chunk`",
            )
        } else {
            (
                &*format!("`{fused}` marches each block along the slowest axis"),
                "set the planes per block along that axis with `chunk`",
            )
        };
        return Err(src
            .error(
                list.get_ref()[0].span(),
                format!("{what}: its block extent there is 1, not {}", b[0]),
            )
            .with_hint(format!("write block = {fixed:?}; {hint}")));
    }
    Ok(())
}

/// The error for `key` set with `tensor`, whose lanes each compute two cells
/// of a row, one plane at a time.
fn tensor_fixed(v: &Spanned<i64>, key: &str, src: &Source) -> Diagnostic {
    src.error(
        v.span(),
        format!("`{key}` does not apply to `tensor`: each lane of its warps computes two cells of a row, one plane at a time"),
    )
    .with_hint(format!("remove `{key}`; set the planes a block marches with `chunk`"))
}

/// The error for `key`, a key of the marching strategies alone, set with another.
fn marching_only(v: &Spanned<i64>, key: &str, src: &Source) -> Diagnostic {
    let tensor = if key == "chunk" { ", `\"tensor\"`" } else { "" };
    let naive = match key {
        "coarsen" | "vector" => "\"naive\"`, `",
        _ => "",
    };
    src.error(
        v.span(),
        format!(
            "`{key}` only applies to `strategy = {naive}\"stream\"`{tensor}, `\"temporal\"` or `\"persistent\"`"
        ),
    )
    .with_hint(format!("set `strategy = \"stream\"` or remove `{key}`"))
}

fn strategy(name: &Spanned<String>, src: &Source) -> Result<Strategy, Diagnostic> {
    let found = Strategy::NAMES
        .iter()
        .find(|(n, _)| *n == name.get_ref().as_str());
    found.map(|&(_, s)| s).ok_or_else(|| {
        let names: Vec<_> = Strategy::NAMES.iter().map(|(n, _)| *n).collect();
        src.error(
            name.span(),
            format!("unknown strategy `{}`", name.get_ref()),
        )
        .with_hint(format!("use one of: {}", names.join(", ")))
    })
}

/// A `block` checked: at most 1024 threads, and (but for `naive`) rows of
/// whole warps along the contiguous axis, counted in cells where each
/// thread there covers `cells` of them (`warp` is the pair).
fn gpu_block(
    list: &Spanned<Vec<Spanned<i64>>>,
    dims: usize,
    (warp, cells): (usize, usize),
    strategy: Strategy,
    backend: &str,
    src: &Source,
) -> Result<Vec<usize>, Diagnostic> {
    let block = extents(list, dims, 1024, src)?;
    let threads: usize = block.iter().product();
    if threads > 1024 {
        return Err(src
            .error(
                list.span(),
                format!("a block of {threads} threads is more than the 1024 a GPU block can hold"),
            )
            .with_hint("shrink the block so the product of its extents is at most 1024"));
    }
    let fast = block[dims - 1];
    if strategy != Strategy::Naive && fast * cells % warp != 0 {
        let mut fixed = block.clone();
        fixed[dims - 1] = (fast * cells).div_ceil(warp) * warp / cells;
        let what = if cells > 1 {
            format!("{fast} threads of {cells} cells")
        } else {
            format!("{fast} threads")
        };
        return Err(src
            .error(
                list.get_ref()[dims - 1].span(),
                format!(
                    "the contiguous axis gets {what}, not a multiple of the {backend} warp ({warp})"
                ),
            )
            .with_hint(format!(
                "blocks are in axis order, contiguous axis last: try block = {fixed:?}"
            )));
    }
    Ok(block)
}

fn bounded(
    v: &Spanned<i64>,
    lo: i64,
    hi: i64,
    key: &str,
    src: &Source,
) -> Result<usize, Diagnostic> {
    match *v.get_ref() {
        n if (lo..=hi).contains(&n) => Ok(n as usize),
        n => Err(src
            .error(v.span(), format!("`{key} = {n}` cannot work"))
            .with_hint(format!("use a value between {lo} and {hi}"))),
    }
}

/// Settles the OpenMP backend's fused steps ([`openmp_fusion`]), but
/// those of a stencil whose temporaries may go inline, which its form
/// settles ([`fuse_form`]). The
/// strategies `[tiling.cuda]` and `[tiling.hip]` name are checked against
/// the GPU form of `st`, where the spec is checked as a whole
/// ([`check_strategy`]).
pub fn check_fusion(
    section: &TilingSection,
    st: &mut crate::ir::Stencil,
    src: &Source,
) -> Result<(), Diagnostic> {
    if settled_by_form(st) {
        return Ok(());
    }
    let facts = (cpu_unfusable(st), single_steps(st));
    openmp_fusion(section, st, facts, src)
}

/// Whether the OpenMP backend's fused steps of `st` are settled against
/// the form its kernels compute ([`fuse_form`]) rather than when it is
/// lowered: several statements, temporaries among their targets (which
/// `backend::openmp::host_form` may compute inline, leaving one update).
pub fn settled_by_form(st: &crate::ir::Stencil) -> bool {
    st.statements.len() > 1
        && st
            .statements
            .iter()
            .any(|s| st.fields[s.target].role == crate::ir::Role::Temp)
}

/// Settles the fused steps of a stencil [`settled_by_form`] whose OpenMP
/// kernels compute `form` (`backend::openmp::host_form`: its temporaries
/// inline where that is cheaper, else the stencil itself), as
/// [`check_fusion`] settles those of others: a form of one update fuses by
/// default and where the spec asks; any other `time_block` above 1 is an
/// error at it, saying why `st` cannot fuse.
pub fn fuse_form(
    section: &TilingSection,
    st: &mut crate::ir::Stencil,
    form: &crate::ir::Stencil,
    src: &Source,
) -> Result<(), Diagnostic> {
    let why = cpu_unfusable(form).map(|why| cpu_unfusable(st).unwrap_or(why));
    openmp_fusion(section, st, (why, single_steps(form)), src)
}

/// Why a strategy for updates of whole fields does not apply: `st` has
/// one of a region.
fn in_a_region(st: &crate::ir::Stencil) -> Option<String> {
    let s = st.statements.iter().find(|s| s.region.is_some())?;
    Some(format!(
        "the update of `{}` applies to region `{}`",
        st.fields[s.target].name, st.regions[s.region?].name
    ))
}

/// What supplies the values past the edge of a grid of mixed sides, in a
/// message about fused steps (which take fixed and periodic boundaries).
const BEYOND_THE_EDGE: &str = "the remapped reads past each side that is not `fixed`";

/// Why the OpenMP backend cannot fuse the steps of `st`; `None` where it
/// can: a 2-D or 3-D grid with a fixed or periodic boundary (whose tiles
/// read their first step's halos wrapped onto the grid) and one
/// `[[update]]` of a state field that reads that field (each step then
/// needs only the last one's values, and a leapfrog's also the one before).
pub fn cpu_unfusable(st: &crate::ir::Stencil) -> Option<String> {
    if st.dims() < 2 {
        return Some("fused steps sweep tiles of 2 or 3 axes; this stencil has 1".into());
    }
    if let crate::ir::Boundary::Mixed(_) = st.boundary {
        return Some(format!(
            "fused steps recompute a tile's halo from the last step's values, which {} would have to supply",
            BEYOND_THE_EDGE
        ));
    }
    if let Some(why) = in_a_region(st) {
        return Some(format!(
            "fused steps carry an [[update]] of every cell; {why}"
        ));
    }
    let [s] = &st.statements[..] else {
        return Some(format!(
            "fused steps carry one [[update]] from step to step; this stencil has {}",
            st.statements.len()
        ));
    };
    let target = &st.fields[s.target];
    if !s
        .slots()
        .iter()
        .any(|slot| slot.field == s.target && slot.version == crate::ir::Version::Start)
    {
        return Some(format!(
            "the update never reads `{}`: its steps do not depend on each other",
            target.name
        ));
    }
    None
}

/// Settles the OpenMP backend's fused steps of `st`, given of the stencil
/// its kernels compute why it cannot fuse (`why`, `None` where it can) and
/// whether it defaults to single steps ([`single_steps`]): a `time_block`
/// above 1 where it cannot fuse is an error at it; without one, a stencil
/// that can fuse gets the fused defaults ([`OpenmpTiling::default_for`]),
/// but a 3-D one reaching [`MARCHING_REACH`] planes along the slowest axis
/// or bound by arithmetic ([`MARCHING_INTENSITY`]), whose single steps
/// without a block of the spec's march that axis, as do those of such
/// stencils that cannot fuse, and a 2-D one summed in blocks of rows at
/// [`ROWS_INTENSITY`] or more, which keeps single steps.
fn openmp_fusion(
    section: &TilingSection,
    st: &mut crate::ir::Stencil,
    (why, single_form): (Option<String>, bool),
    src: &Source,
) -> Result<(), Diagnostic> {
    let omp = section.openmp.as_ref().map(|s| s.get_ref());
    match (omp.and_then(|s| s.time_block.as_ref()), why) {
        (Some(tb), Some(why)) if *tb.get_ref() > 1 => Err(src
            .error(
                tb.span(),
                format!("the OpenMP backend cannot fuse these steps: {why}"),
            )
            .with_hint("write `time_block = 1` (single steps), or remove it")),
        // Leapfrogs too: on 16 Xeon cores their fused sweeps ran 1.05x-1.63x
        // the single steps (radius 1), 0.96x-1.05x at radius 4.
        (None, None) if !single_form => {
            take_fused_defaults(section, st);
            Ok(())
        }
        _ => {
            let marching = st.tiling.openmp.time_block == 1
                && omp.is_none_or(|s| s.block.is_none())
                && single_form
                && st.dims() == 3;
            if marching {
                st.tiling.openmp.block = vec![WHOLE_AXIS, MARCHING_ROWS, WHOLE_AXIS];
            }
            Ok(())
        }
    }
}

/// `st`'s fused defaults ([`OpenmpTiling::default_for`]): its steps, and
/// its blocks where `section` gives none.
fn take_fused_defaults(section: &TilingSection, st: &mut crate::ir::Stencil) {
    let fused = OpenmpTiling::default_for(st.dims(), true);
    if section
        .openmp
        .as_ref()
        .is_none_or(|s| s.get_ref().block.is_none())
    {
        st.tiling.openmp.block = fused.block;
    }
    st.tiling.openmp.time_block = fused.time_block;
}

/// The least reach along the slowest axis for which a 3-D stencil's steps
/// default to single steps in bands of [`MARCHING_ROWS`] whole rows marching
/// that axis (`backend::openmp::planes`), rather than blocks of 8 x 16 x 512
/// or, where they fuse, fused tiles. On a 2-core EPYC (star3d25 f64, radius
/// 4: 9 planes a cell) the bands ran 2.5x the blocks on 512^3 (0.73-0.76
/// GCells/s against 0.29-0.31), 1.25x on 384^3, 1.5x on 256^3 and 1.12x on
/// 500^3; through the runner on 512^3, 1.53x-2.47x the fused tiles of
/// star3d25 and acoustic25 (`auto` before and after in turn, twice).
/// Radius-1 and -2 stars and two-statement stencils of radius 1 ran
/// 0.62x-1.00x the blocks on 512^3 (their few planes fit the caches' ways;
/// design notes, "Planes a power of two apart"). On 16 Xeon cores (512^3),
/// once bands were handed out as threads finish one (4 a thread or more),
/// they ran acoustic25 f64 1.21x-1.26x and star3d25 f64 1.07x-1.13x the
/// fused tiles (three rounds, one lease; design notes, "Bands handed
/// out"), and f32 1.15x-1.33x before that: steps that fuse march too.
pub const MARCHING_REACH: usize = 4;

/// Rows of the bands of [`MARCHING_REACH`]'s default at most (fewer where
/// the threads would get fewer than 4 bands each): 32 ran 1.05x-1.5x as
/// fast as 8 on 256^3 to 512^3 (star3d25 f64, 2 cores); on 16 cores, 512^3,
/// bands of 8 handed out ran 1.0x-1.5x the one band of 32 a thread.
pub const MARCHING_ROWS: usize = 32;

/// Flops a cell per byte a step moves at and above which a 3-D stencil's
/// steps default to bands marching the slowest axis, as those reaching
/// [`MARCHING_REACH`] planes do, rather than fused tiles. Such steps are
/// bound by arithmetic, or near it, on the 16 Xeon cores the defaults were
/// measured on (their multiply-adds against their copy: 16-26 flops a byte
/// in f32, 8-13 in f64): fusing saves traffic they do not wait for and
/// recomputes the tiles' overlaps (1.5x the cells at radius 2, 4 steps),
/// while a marching pass loads each row its 4 planes share once. On
/// 512^3, marching ran AN5D's box3d2r 2.77x (f32, 31 flops a byte) and
/// 2.21x (f64, 16) the fused tiles, box3d3r 2.03x (f32) and 1.27x (f64),
/// all single steps in marching bands; below it, j3d27pt (7 and 3.4)
/// fused ran 1.42x-1.45x the marching step, and flux3d_t2 f32 (10) marched
/// at 0.96x (design notes, "Wide boxes march").
pub const MARCHING_INTENSITY: usize = 12;

/// Flops a cell per byte a step moves at and above which a 2-D stencil
/// whose update is a weighted sum by columns ([`crate::ir::columns()`]: a
/// box of distinct weights, 25 terms or more) defaults to single steps,
/// summed in blocks of rows, rather than fused bands. On the 16 Xeon cores
/// (8192^2, 16 steps), single steps in blocks of rows ran AN5D's box2d3r
/// 1.43x-1.82x and box2d4r 1.81x-2.43x the fused bands, box2d2r 1.26x in
/// f32 (6 flops a byte) but 0.93x in f64 (3); at 8 threads 0.85x-2.14x
/// alike (design notes, "Blocks of rows in 2-D").
pub const ROWS_INTENSITY: usize = 6;

/// Whether `st`'s steps default to single steps: 3-D ones marching the
/// slowest axis ([`marches`]), 2-D ones of one update summed in blocks of
/// rows ([`crate::ir::columns()`]) at [`ROWS_INTENSITY`] or more.
fn single_steps(st: &crate::ir::Stencil) -> bool {
    let rows = || {
        st.dims() == 2
            && st.statements.len() == 1
            && crate::ir::columns(st, &st.statements[0]).is_some()
            && intensity_at_least(st, ROWS_INTENSITY)
    };
    marches(st) || rows()
}

/// Whether `st`'s steps default to bands marching the slowest axis, one
/// step at a time: 3-D, reaching [`MARCHING_REACH`] planes along it or
/// computing [`MARCHING_INTENSITY`] flops or more a byte it moves.
fn marches(st: &crate::ir::Stencil) -> bool {
    st.dims() == 3
        && (slowest_reach(st) >= MARCHING_REACH || intensity_at_least(st, MARCHING_INTENSITY))
}

/// Whether `st` computes `intensity` flops or more a cell for each byte a
/// step of it must move ([`crate::analysis::Analysis`]).
fn intensity_at_least(st: &crate::ir::Stencil, intensity: usize) -> bool {
    let an = crate::analysis::analyse(st);
    an.bytes > 0 && an.flops >= intensity * an.bytes
}

/// The farthest any statement of `st` reads along the slowest axis.
fn slowest_reach(st: &crate::ir::Stencil) -> usize {
    let mut reach = 0;
    for s in &st.statements {
        s.expr.for_each_read(&mut |a: &crate::ir::Access| {
            reach = reach.max(a.offset[0].unsigned_abs() as usize);
        });
    }
    reach
}

/// Checks that the step-fusing strategy or `tensor` that `section` (a
/// `[tiling.<backend>]`, checked into `tiling`) names can be generated
/// for `st`, whose GPU kernels compute `form` ([`refused_for`]), pointing
/// at its `strategy`.
pub fn check_strategy(
    section: &Spanned<GpuTilingSection>,
    tiling: &GpuTiling,
    (st, form): (&crate::ir::Stencil, &crate::ir::Stencil),
    backend: &str,
    src: &Source,
) -> Result<(), Diagnostic> {
    let Some(name) = &section.get_ref().strategy else {
        return Ok(());
    };
    match refused_for(tiling, (st, form), backend) {
        Some((why, hint)) => Err(src.error(name.span(), why).with_hint(hint)),
        None => Ok(()),
    }
}

/// Why a spec of `st` cannot name `tiling`'s strategy on `backend`, where
/// its GPU kernels compute `form` (the GPU backend's form of it, its
/// temporaries inlined where they can be): refused where `form` cannot run
/// it, and said of the stencil as written where that is refused too (a
/// stencil of several statements whose form is one update fuses its steps).
pub fn refused_for(
    tiling: &GpuTiling,
    (st, form): (&crate::ir::Stencil, &crate::ir::Stencil),
    backend: &str,
) -> Option<(String, String)> {
    let of_form = refused_strategy(tiling, form, backend)?;
    Some(refused_strategy(tiling, st, backend).unwrap_or(of_form))
}

/// Why a spec of `st` cannot name `tiling`'s strategy on `backend`, and
/// what to write instead; `None` where it can.
fn refused_strategy(
    tiling: &GpuTiling,
    st: &crate::ir::Stencil,
    backend: &str,
) -> Option<(String, String)> {
    match tiling.strategy {
        s if s.fuses_steps() => unfusable(st, s.name()),
        Strategy::Tensor => untensorable(st, backend),
        _ => None,
    }
}

/// Why `tensor` cannot run `st` on `backend`, and what to write instead;
/// `None` when it can: a 3-D f64 stencil with a fixed boundary and one
/// statement that has an in-plane sum ([`crate::ir::plane_sum`]), on CUDA.
pub fn untensorable(st: &crate::ir::Stencil, backend: &str) -> Option<(String, String)> {
    use crate::ir::{Boundary, Dtype};
    let stream = format!(
        "use `strategy = \"stream\"` in [tiling.{backend}], which streams any stencil plane by plane"
    );
    let why = if backend != "cuda" {
        "`tensor` computes the in-plane sum with `mma.sync` on NVIDIA's FP64 tensor cores; the HIP backend has no such kernel".to_string()
    } else if st.dims() != 3 {
        format!(
            "`tensor` streams a 3-D stencil plane by plane; this one has {} axes",
            st.dims()
        )
    } else if st.dtype != Dtype::F64 {
        "`tensor` computes on the FP64 tensor cores; an f32 stencil there would round its values to TF32 (10 bits of mantissa)".to_string()
    } else if st.boundary != Boundary::Fixed {
        "`tensor` loads its tiles of a grid with a fixed boundary (zeros past the edge); reads past a side that is not `fixed` are remapped".to_string()
    } else if let Some(why) = in_a_region(st) {
        format!("`tensor` computes every cell of a field; {why}")
    } else if st.statements.len() != 1 {
        format!(
            "`tensor` runs stencils of one [[update]]; this one has {}",
            st.statements.len()
        )
    } else {
        let s = &st.statements[0];
        let why = crate::ir::plane_sum(s, &|a| spelled(st, a)).err()?;
        format!(
            "`tensor` cannot compute `{}` with matrix products: {why}",
            s.text
        )
    };
    Some((why, stream))
}

/// Why strategy `name` (`temporal`, `persistent`) cannot fuse the steps of `st`, and what to write instead;
/// `None` when it can: a 2-D or 3-D stencil of one `[[update]]` of a state
/// field, reading its current level and input grids, with a fixed or a
/// periodic boundary (whose edge tiles load their halos wrapped);
/// a field that keeps two time levels (a leapfrog) read at its previous
/// level only at the cell itself (and read there at all in `persistent`,
/// whose sweeps start from it).
pub fn unfusable(st: &crate::ir::Stencil, name: &str) -> Option<(String, String)> {
    use crate::ir::Boundary;
    if st.dims() < 2 {
        return Some((
            format!("`{name}` fuses steps over tiles of 2 or 3 axes; this stencil has 1"),
            "use `strategy = \"naive\"` for a 1-D stencil (what `auto` runs: 16 bytes of cells a thread)".into(),
        ));
    }
    let stream = "use `strategy = \"stream\"`, the fastest strategy that steps one at a time";
    if let Boundary::Mixed(_) = st.boundary {
        return Some((
            format!(
                "`{name}` fuses steps over overlapped tiles of a fixed or periodic boundary; the edge tiles would need {} at every fused step",
                BEYOND_THE_EDGE
            ),
            format!("{stream}, or `kind = \"fixed\"` in [boundary]"),
        ));
    }
    if let Some(why) = in_a_region(st) {
        return Some((
            format!("`{name}` fuses steps of an update of every cell; {why}"),
            format!("{stream}, which runs each region's update on its own"),
        ));
    }
    if st.statements.len() != 1 {
        return Some((
            format!(
                "`{name}` fuses the steps of a stencil with one [[update]]; this one has {}",
                st.statements.len()
            ),
            format!(
                "remove `strategy` (`auto` runs the step in one `naive` kernel where recomputing the earlier statements' values costs little), or {stream}"
            ),
        ));
    }
    unfusable_update(st, name, stream)
}

/// [`unfusable`] for the one update of `st`: why `name` cannot fuse its
/// steps by what it reads, with `stream` the advice to run single steps.
fn unfusable_update(st: &crate::ir::Stencil, name: &str, stream: &str) -> Option<(String, String)> {
    let s = &st.statements[0];
    let target = &st.fields[s.target];
    let (mut reads_prev, mut reads_current, mut off_cell) = (false, false, None);
    s.expr.for_each_read(&mut |a| {
        reads_current |= a.slot.field == s.target && a.slot.version == crate::ir::Version::Start;
        if a.slot.field == s.target && a.slot.version == crate::ir::Version::Prev {
            reads_prev = true;
            if a.offset.iter().any(|&o| o != 0) {
                off_cell.get_or_insert_with(|| a.clone());
            }
        }
    });
    if !reads_current {
        // Each step's result then depends on no earlier step: there is
        // nothing to carry from one fused step to the next.
        return Some((
            format!(
                "`{name}` fuses steps that each read the last one's `{0}`; this update never reads `{0}`",
                target.name
            ),
            stream.into(),
        ));
    }
    if target.has_prev() && !reads_prev && name == "persistent" {
        return Some((
            format!(
                "`persistent` fuses the steps of a field of two time levels whose update reads the previous one; this update never reads `{}.prev`",
                target.name
            ),
            format!(
                "declare `{}` with `levels = 1` (one level is all it needs), or use `strategy = \"temporal\"`",
                target.name
            ),
        ));
    }
    if let Some(read) = off_cell {
        return Some((
            format!(
                "`{name}` fuses leapfrog steps that read the previous level at the cell itself; this update reads `{}`",
                spelled(st, &read)
            ),
            stream.into(),
        ));
    }
    None
}

/// `a` as a spec spells it: `u[0,1]`, `u.prev[0,-1]`.
fn spelled(st: &crate::ir::Stencil, a: &crate::ir::Access) -> String {
    let field = &st.fields[a.slot.field].name;
    let prev = if a.slot.version == crate::ir::Version::Prev {
        ".prev"
    } else {
        ""
    };
    let at: Vec<String> = a.offset.iter().map(i64::to_string).collect();
    format!("{field}{prev}[{}]", at.join(","))
}
