//! Device memory shared between the processes of a node ([`Shared`]): the
//! ranks of a distributed session on one node write the halos they send
//! straight into each other's buffers on the device (CUDA and HIP IPC),
//! where MPI would otherwise carry them through the host.

use std::os::raw::c_void;

use super::{Buffer, HandleCall, Runtime};
use crate::StencilError;

/// The bytes of a shared buffer's handle, in both runtimes.
pub const HANDLE_BYTES: usize = 64;

/// Device values shared with another process of the node: a buffer of this
/// process with the handle that process maps ([`Shared::export`]), or a
/// buffer of another process, mapped here ([`Shared::open`]); or device
/// values shared with MPI alone ([`Shared::new`]). Freed, or unmapped, on
/// drop.
pub struct Shared<T> {
    ptr: *mut T,
    len: usize,
    handle: [u8; HANDLE_BYTES],
    owner: Owner,
}

/// What releases a [`Shared`] buffer.
enum Owner {
    /// The buffer this process allocated (freed with it).
    Exported { _buffer: Box<dyn Send> },
    /// The runtime's call that unmaps another process's buffer.
    Opened(HandleCall),
}

// SAFETY: as `Buffer`: the memory is owned (or mapped) by this value alone
// in this process, and device pointers are valid in every host thread.
unsafe impl<T: Send> Send for Shared<T> {}

impl<T: Copy + Send + 'static> Shared<T> {
    /// `len` zeroed device values of runtime `R` on the calling thread's
    /// current device, shared with no other process (their handle all
    /// zeros): device memory a GPU-aware MPI reads or writes.
    pub fn new<R: Runtime>(stencil: &'static str, len: usize) -> Result<Self, StencilError> {
        let buffer = Buffer::<R, T>::new(stencil, len.max(1))?;
        Ok(Shared {
            ptr: buffer.ptr(),
            len,
            handle: [0; HANDLE_BYTES],
            owner: Owner::Exported {
                _buffer: Box::new(buffer),
            },
        })
    }

    /// As [`Shared::new`], with the handle another process maps them by;
    /// `None` where the runtime does not share that memory with other
    /// processes (nothing is kept).
    pub fn export<R: Runtime>(
        stencil: &'static str,
        len: usize,
    ) -> Result<Option<Self>, StencilError> {
        let mut shared = Self::new::<R>(stencil, len)?;
        // SAFETY: `ptr` is the runtime's allocation; writes 64 bytes.
        let code = unsafe { (R::CALLS.ipc_handle)(shared.ptr.cast(), shared.handle.as_mut_ptr()) };
        Ok((code == 0).then_some(shared))
    }

    /// The buffer of `len` values of another process of the node that
    /// `handle` names, mapped into this one; `None` where the runtime
    /// cannot (its device unreachable from this one, or the handle this
    /// process's own).
    ///
    /// # Safety
    ///
    /// `handle` must come from [`Shared::export`] of `len` values of `T`
    /// in a live process of the same runtime on this node, and that buffer
    /// must outlive this value.
    pub unsafe fn open<R: Runtime>(handle: &[u8; HANDLE_BYTES], len: usize) -> Option<Self> {
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: reads 64 bytes, writes one pointer.
        let code = unsafe { (R::CALLS.ipc_open)(handle.as_ptr(), &mut ptr) };
        (code == 0).then(|| Shared {
            ptr: ptr.cast(),
            len,
            handle: *handle,
            owner: Owner::Opened(R::CALLS.ipc_close),
        })
    }
}

impl<T> Shared<T> {
    /// The handle another process opens this buffer by.
    pub fn handle(&self) -> &[u8; HANDLE_BYTES] {
        &self.handle
    }

    /// The device address, for a kernel's argument.
    pub fn ptr(&self) -> *mut T {
        self.ptr
    }

    /// The values held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T> Drop for Shared<T> {
    fn drop(&mut self) {
        if let Owner::Opened(close) = self.owner {
            // SAFETY: `ptr` was mapped by the runtime's `ipc_open` and is
            // unmapped once; a failure here cannot be reported from `drop`.
            unsafe { close(self.ptr.cast()) };
        }
    }
}
