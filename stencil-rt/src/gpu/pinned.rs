//! Page-locked host memory ([`Pinned`]): the device copies to and from it
//! at the link's full speed, where pageable memory is staged by the
//! runtime through a buffer of its own.

use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::os::raw::c_void;

use super::{Runtime, check};
use crate::StencilError;

/// Host values a copy moves to or from a device: page-locked memory of a
/// runtime ([`Pinned`]), or a plain `Vec` on the host.
pub type HostMemory<T> = Box<dyn DerefMut<Target = [T]>>;

/// `len` page-locked host values of runtime `R`, zeroed, freed on drop.
pub struct Pinned<R: Runtime, T> {
    ptr: *mut T,
    len: usize,
    runtime: PhantomData<R>,
}

impl<R: Runtime, T: Copy + Default> Pinned<R, T> {
    /// `len` values of `T::default()` in page-locked memory.
    pub fn new(stencil: &'static str, len: usize) -> Result<Self, StencilError> {
        let bytes = (len.max(1))
            .checked_mul(size_of::<T>())
            .ok_or(StencilError::ShapeOverflow { stencil })?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer; nothing is freed unless the allocation succeeded.
        let code = unsafe { (R::CALLS.host_alloc)(&mut ptr, bytes) };
        check::<R>(stencil, "host_alloc", code)?;
        let pinned: Pinned<R, T> = Pinned {
            ptr: ptr.cast(),
            len,
            runtime: PhantomData,
        };
        for k in 0..len {
            // SAFETY: the allocation holds `len` values of `T`, aligned as
            // the runtime aligns its allocations (to 256 bytes; 16 on the emulated device).
            unsafe { pinned.ptr.add(k).write(T::default()) };
        }
        Ok(pinned)
    }
}

impl<R: Runtime, T> Deref for Pinned<R, T> {
    type Target = [T];

    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` initialized values, owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<R: Runtime, T> DerefMut for Pinned<R, T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as `deref`, borrowed mutably through `self`.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<R: Runtime, T> Drop for Pinned<R, T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from the runtime's host allocation and is freed
        // once; a failure here cannot be reported from `drop`.
        unsafe { (R::CALLS.host_free)(self.ptr.cast()) };
    }
}
