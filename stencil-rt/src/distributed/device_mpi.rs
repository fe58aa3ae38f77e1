//! Whether MPI takes device buffers (a CUDA- or ROCm-aware MPI), and the
//! device values it is handed as an MPI buffer.

use std::ffi::{CStr, c_char, c_void};

use mpi::datatype::{AsDatatype, Buffer, BufferMut, Collection, Equivalence, Pointer, PointerMut};

use super::DeviceMpi;

/// Whether MPI is handed device buffers of `backend` (`"cuda"`, `"hip"`),
/// as `choice` says or, for [`DeviceMpi::Detect`], as the MPI says.
pub fn takes_device_buffers(choice: DeviceMpi, backend: &str) -> bool {
    match choice {
        DeviceMpi::On => true,
        DeviceMpi::Off => false,
        DeviceMpi::Detect => query(match backend {
            "cuda" => c"MPIX_Query_cuda_support",
            "hip" => c"MPIX_Query_rocm_support",
            _ => return false,
        }),
    }
}

/// Calls Open MPI's query `name` where the process has it (looked up, so
/// that an MPI without it still links); false without it.
#[cfg(target_os = "linux")]
fn query(name: &CStr) -> bool {
    unsafe extern "C" {
        fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void;
    }
    // SAFETY: a null handle is glibc's RTLD_DEFAULT: the process's libraries.
    let found = unsafe { dlsym(std::ptr::null_mut(), name.as_ptr()) };
    if found.is_null() {
        return false;
    }
    // SAFETY: Open MPI's queries take nothing and return an int.
    let query: unsafe extern "C" fn() -> i32 = unsafe { std::mem::transmute(found) };
    // SAFETY: as above; MPI is initialized (a session holds a communicator).
    unsafe { query() == 1 }
}

#[cfg(not(target_os = "linux"))]
fn query(_: &CStr) -> bool {
    false
}

/// `len` values at `ptr`, host or device memory, as MPI takes a buffer:
/// the messages of one exchange, whichever memory each side uses.
pub struct Message<T> {
    ptr: *mut T,
    len: usize,
}

impl<T> Message<T> {
    /// The values of `ptr`, `len` of them.
    ///
    /// # Safety
    ///
    /// `ptr` must hold `len` values (host memory, or device memory of an
    /// MPI that takes it) for as long as MPI uses the message.
    pub unsafe fn new(ptr: *mut T, len: usize) -> Self {
        Message { ptr, len }
    }
}

// SAFETY: the pointer holds `count()` values of `T` (`Message::new`'s contract).
unsafe impl<T> Pointer for Message<T> {
    fn pointer(&self) -> *const c_void {
        self.ptr.cast()
    }
}

// SAFETY: as `Pointer`.
unsafe impl<T> PointerMut for Message<T> {
    fn pointer_mut(&mut self) -> *mut c_void {
        self.ptr.cast()
    }
}

// SAFETY: the values the pointer holds.
unsafe impl<T> Collection for Message<T> {
    fn count(&self) -> mpi::Count {
        mpi::Count::try_from(self.len).expect("a halo's values fit an MPI count")
    }
}

// SAFETY: values of `T`, each its MPI equivalent.
unsafe impl<T: Equivalence> AsDatatype for Message<T> {
    type Out = T::Out;
    fn as_datatype(&self) -> Self::Out {
        T::equivalent_datatype()
    }
}

// SAFETY: the parts above.
unsafe impl<T: Equivalence> Buffer for Message<T> {}
// SAFETY: the parts above.
unsafe impl<T: Equivalence> BufferMut for Message<T> {}
