//! What differs between CUDA and HIP, as data: one generator writes both,
//! reading from a [`Dialect`] what to spell, include or leave out. A
//! feature the kernels use only where a dialect has it is a field here,
//! never a comparison of names.

/// What differs between CUDA and HIP.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dialect {
    /// Backend name (`cuda`, `hip`), also the Cargo feature.
    pub name: &'static str,
    /// Human name for messages.
    pub title: &'static str,
    /// The runtime header.
    pub header: &'static str,
    /// Prefix of the runtime API (`cuda` in `cudaMalloc`).
    pub api: &'static str,
    /// Threads per warp (wavefront on AMD).
    pub warp: usize,
    /// Source file extension.
    pub extension: &'static str,
    /// Most shared memory (AMD: LDS) a block may ask for, in bytes: the
    /// H100's 227 KiB (a launch on a GPU with less fails with the runtime's
    /// error); AMD's 64 KiB.
    pub shared_max: usize,
    /// The header of cooperative groups (the grid-wide barrier of `persistent`).
    pub cooperative_header: &'static str,
    /// The device attribute that counts multiprocessors (AMD: compute units).
    pub multiprocessors: &'static str,
    /// Whether warp shuffles name the lanes that take part
    /// (`__shfl_down_sync(mask, ...)`); HIP's shuffle the whole wavefront.
    pub shuffle_mask: bool,
    /// Whether the device copies global to shared memory asynchronously
    /// (`cp.async`), which the ring kernel of `temporal` vectors needs.
    pub async_copies: bool,
    /// Whether the device has FP64 matrix units (`mma.sync`), which `tensor`
    /// computes its in-plane sums on.
    pub tensor_cores: bool,
    /// Whether `__launch_bounds__`' second argument is the least blocks a
    /// multiprocessor keeps resident (CUDA); HIP's means something else.
    pub min_blocks_bound: bool,
    /// Whether the kernel variants `auto` and the kernels pick by measurement
    /// apply: they were measured on NVIDIA GPUs (H100, H200). HIP, not
    /// measured, keeps the generic kernels; hipcc also leaves loops of
    /// shuffles rolled (and warns), which the unrolled tiles rely on.
    pub tuned: bool,
    /// How the runtime's in-place graph update reports what it found.
    pub graph_update: GraphUpdate,
    /// How the runtime names a device's architecture.
    pub arch: DeviceArch,
    /// The runtime's record of a device's properties.
    pub device_props: &'static str,
    /// The runtime's calls that allocate page-locked host memory (`ptr`,
    /// `bytes`) and free it (`ptr`).
    pub host_memory: [&'static str; 2],
}

/// How a runtime names a device's architecture, the key of tuned plans
/// beside the device's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceArch {
    /// `sm_<major><minor>`, from the compute capability (CUDA).
    ComputeCapability,
    /// The `gfx` target of `gcnArchName`, without its feature flags (HIP:
    /// `gfx90a` of `gfx90a:sramecc+:xnack-`).
    GcnArchName,
}

/// The form of the runtime's `GraphExecUpdate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GraphUpdate {
    /// CUDA 12's: one `cudaGraphExecUpdateResultInfo` record.
    ResultInfo,
    /// CUDA 11's, which HIP keeps: the node that failed and the result.
    NodeAndResult,
}

impl Dialect {
    /// `value` from the lane `lanes` before this one (`lanes < 0`) or after,
    /// within groups of `width` lanes; a lane with none there gets its own.
    pub fn shuffle(&self, value: &str, lanes: i64, width: usize) -> String {
        let (dir, n) = if lanes < 0 {
            ("up", -lanes)
        } else {
            ("down", lanes)
        };
        if self.shuffle_mask {
            format!("__shfl_{dir}_sync(0xffffffffu, {value}, {n}, {width})")
        } else {
            format!("__shfl_{dir}({value}, {n}, {width})")
        }
    }
}

/// The CUDA dialect.
pub const CUDA: Dialect = Dialect {
    name: "cuda",
    title: "CUDA",
    header: "cuda_runtime.h",
    api: "cuda",
    warp: 32,
    extension: "cu",
    shared_max: 227 * 1024,
    cooperative_header: "cooperative_groups.h",
    multiprocessors: "cudaDevAttrMultiProcessorCount",
    shuffle_mask: true,
    async_copies: true,
    tensor_cores: true,
    min_blocks_bound: true,
    tuned: true,
    graph_update: GraphUpdate::ResultInfo,
    arch: DeviceArch::ComputeCapability,
    device_props: "cudaDeviceProp",
    host_memory: ["cudaMallocHost(ptr, bytes)", "cudaFreeHost(ptr)"],
};

/// The HIP dialect (AMD GPUs: 64-wide wavefronts).
pub const HIP: Dialect = Dialect {
    name: "hip",
    title: "HIP",
    header: "hip/hip_runtime.h",
    api: "hip",
    warp: 64,
    extension: "hip",
    shared_max: 64 * 1024,
    cooperative_header: "hip/hip_cooperative_groups.h",
    multiprocessors: "hipDeviceAttributeMultiprocessorCount",
    shuffle_mask: false,
    async_copies: false,
    tensor_cores: false,
    min_blocks_bound: false,
    tuned: false,
    graph_update: GraphUpdate::NodeAndResult,
    arch: DeviceArch::GcnArchName,
    device_props: "hipDeviceProp_t",
    host_memory: ["hipHostMalloc(ptr, bytes, 0)", "hipHostFree(ptr)"],
};
