//! The GPU backends' runtime: the runtime calls a crate's generated source
//! exports ([`Runtime`], [`Calls`]), device memory ([`Buffer`], [`Levels`]),
//! captured and replayed launches ([`Stream`], [`Captured`], [`Graph`],
//! and a session's [`Graphs`]),
//! device memory shared with the other processes of a node ([`Shared`]),
//! the measurement of fused steps against single steps ([`Trial`]), the
//! descriptions a session gives of its plan ([`GpuTiling`], [`Fusion`],
//! [`Measurement`]), and the plans a module carries for devices
//! ([`Plan`], [`Tuned`], [`Device`]).
//!
//! The kernels and the runtime calls are compiled into the user's crate by
//! nvcc or hipcc (this crate has no build script and links no GPU library);
//! each crate exports its calls under names of its own and hands them here
//! as a [`Calls`] table, the `CALLS` of a type that implements [`Runtime`].
//!
//! Every buffer, stream and graph is `Send`: one owner at a time uses it,
//! and the runtimes' handles are valid in every host thread of the process.
//! Work runs on the calling thread's current device (device 0 unless the
//! program selects another through the runtime).

mod boxes;
mod buffer;
mod device;
mod graph;
mod pinned;
mod plan;
mod replay;
mod shared;
mod trial;

pub use boxes::{Boxed, DeviceGrids, Devices, NewDeviceGrids, SessionGrids};
pub use buffer::{Buffer, Levels};
pub use device::{Device, Plan, Tuned};
pub use graph::{Captured, Graph, Stream};
pub use pinned::{HostMemory, Pinned};
pub use plan::{Fusion, GpuTiling, Measurement};
pub use replay::{Graphs, Recorder};
pub use shared::{HANDLE_BYTES, Shared};
pub use trial::Trial;

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_void};

use crate::StencilError;

/// A runtime call that copies `bytes` bytes from its second argument to its first.
pub type CopyCall = unsafe extern "C" fn(*mut c_void, *const c_void, usize) -> c_int;

/// A runtime call on one handle (a stream, a graph, an executable graph).
pub type HandleCall = unsafe extern "C" fn(*mut c_void) -> c_int;

/// The runtime calls of a crate's generated runtime source, each returning
/// the runtime's status (0 for success). Stream and graph handles travel as
/// `void *`.
#[derive(Clone, Copy, Debug)]
pub struct Calls {
    /// `cudaMalloc(ptr, bytes)`.
    pub malloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> c_int,
    /// `cudaFree(ptr)`.
    pub free: HandleCall,
    /// `cudaMallocHost(ptr, bytes)`: page-locked host memory.
    pub host_alloc: unsafe extern "C" fn(*mut *mut c_void, usize) -> c_int,
    /// `cudaFreeHost(ptr)`.
    pub host_free: HandleCall,
    /// `cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice)`.
    pub upload: CopyCall,
    /// `cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost)`.
    pub download: CopyCall,
    /// `cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice)`.
    pub copy: CopyCall,
    /// `cudaMemset(ptr, 0, bytes)`.
    pub zero: unsafe extern "C" fn(*mut c_void, usize) -> c_int,
    /// `cudaStreamSynchronize(0)`: waits for the legacy stream, where every
    /// launch, copy and replay of a session is queued.
    pub synchronize: unsafe extern "C" fn() -> c_int,
    /// `cudaGetDeviceCount(count)`.
    pub device_count: unsafe extern "C" fn(*mut c_int) -> c_int,
    /// `cudaGetDevice(index)`: the calling thread's current device.
    pub device_index: unsafe extern "C" fn(*mut c_int) -> c_int,
    /// `cudaSetDevice(index)`: makes device `index` the calling thread's current one.
    pub set_device: unsafe extern "C" fn(c_int) -> c_int,
    /// The name and architecture of device `index` (`sm_90`, `gfx90a`),
    /// each written NUL-terminated into a buffer of the length given.
    pub device_identity:
        unsafe extern "C" fn(c_int, *mut c_char, c_int, *mut c_char, c_int) -> c_int,
    /// `cudaGetErrorString(code)`: a static NUL-terminated string for every code.
    pub error_string: unsafe extern "C" fn(c_int) -> *const c_char,
    /// `cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking)`.
    pub stream_create: unsafe extern "C" fn(*mut *mut c_void) -> c_int,
    /// `cudaStreamDestroy(stream)`.
    pub stream_destroy: HandleCall,
    /// `cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal)`.
    pub begin_capture: HandleCall,
    /// `cudaStreamEndCapture(stream, graph)`.
    pub end_capture: unsafe extern "C" fn(*mut c_void, *mut *mut c_void) -> c_int,
    /// `cudaGraphInstantiateWithFlags(exec, graph, 0)`.
    pub instantiate: unsafe extern "C" fn(*mut *mut c_void, *mut c_void) -> c_int,
    /// `cudaGraphDestroy(graph)`.
    pub graph_destroy: HandleCall,
    /// `cudaGraphLaunch(exec, 0)`: replays on the legacy stream.
    pub replay: HandleCall,
    /// `cudaGraphExecDestroy(exec)`.
    pub exec_destroy: HandleCall,
    /// Updates `exec` in place to a capture of as many launches with other
    /// arguments; fails where the launches differ in kind.
    pub exec_update: unsafe extern "C" fn(*mut c_void, *mut c_void) -> c_int,
    /// Copies the box `[lo, lo + ext)` of a row-major grid of `n` cells per
    /// axis (three axes: a grid of fewer has leading axes of one cell), of
    /// values of `bytes` bytes (4 or 8), to a packed buffer (its second
    /// argument), row after row; with a last argument of 1, from the packed
    /// buffer into the box. A kernel on the legacy stream.
    pub box_copy: unsafe extern "C" fn(
        *mut c_void,
        *mut c_void,
        c_int,
        *const i64,
        *const i64,
        *const i64,
        c_int,
    ) -> c_int,
    /// `cudaIpcGetMemHandle(handle, ptr)`: the 64-byte handle of a buffer
    /// from `malloc` that another process of the node maps.
    pub ipc_handle: unsafe extern "C" fn(*mut c_void, *mut u8) -> c_int,
    /// `cudaIpcOpenMemHandle(ptr, handle, cudaIpcMemLazyEnablePeerAccess)`:
    /// maps the buffer of another process's 64-byte handle.
    pub ipc_open: unsafe extern "C" fn(*const u8, *mut *mut c_void) -> c_int,
    /// `cudaIpcCloseMemHandle(ptr)`: unmaps a buffer `ipc_open` mapped.
    pub ipc_close: HandleCall,
}

/// A GPU runtime as a crate's generated source exports it: `cuda` or `hip`.
///
/// # Safety
///
/// Each entry of [`Runtime::CALLS`] must be the runtime call its field's doc
/// names (HIP's for `hip`), of one runtime, for the whole process: buffers,
/// streams and graphs trust them with their handles.
pub unsafe trait Runtime: 'static {
    /// `"cuda"` or `"hip"`, as errors name it.
    const BACKEND: &'static str;
    /// The runtime's calls.
    const CALLS: Calls;
}

/// `Ok` for status 0, else [`StencilError::Device`] with the runtime's
/// message for `call` of `stencil`.
pub fn check<R: Runtime>(
    stencil: &'static str,
    call: &'static str,
    code: c_int,
) -> Result<(), StencilError> {
    if code == 0 {
        return Ok(());
    }
    // SAFETY: the runtime returns a static NUL-terminated string for every code.
    let message = unsafe { CStr::from_ptr((R::CALLS.error_string)(code)) };
    Err(StencilError::Device {
        stencil,
        backend: R::BACKEND,
        call,
        message: message.to_string_lossy().into_owned(),
    })
}

/// The number of devices, or the runtime's error (for instance when no
/// driver or device is present).
pub fn device_count<R: Runtime>() -> Result<usize, StencilError> {
    let mut n: c_int = 0;
    // SAFETY: writes one int.
    let code = unsafe { (R::CALLS.device_count)(&mut n) };
    check::<R>("", "device_count", code)?;
    Ok(n.max(0) as usize)
}

/// Makes device `index` the calling thread's current device, where its
/// sessions are made and run; the runtime's error for an index past the
/// last device.
pub fn set_device<R: Runtime>(index: usize) -> Result<(), StencilError> {
    let index = c_int::try_from(index).unwrap_or(c_int::MAX);
    // SAFETY: no pointer.
    let code = unsafe { (R::CALLS.set_device)(index) };
    check::<R>("", "set_device", code)
}

/// Waits for every kernel, copy and replay queued so far on the legacy
/// stream; reports their errors.
pub fn synchronize<R: Runtime>(stencil: &'static str) -> Result<(), StencilError> {
    // SAFETY: no arguments.
    let code = unsafe { (R::CALLS.synchronize)() };
    check::<R>(stencil, "synchronize", code)
}
