//! Device memory: [`Buffer`], values on the device freed on drop, and
//! [`Levels`], the time levels of one state field rotated each launch.

use std::marker::PhantomData;
use std::os::raw::c_void;

use super::{Runtime, check};
use crate::StencilError;
use crate::host::check_len;

/// `len` values on the device, zeroed, freed on drop.
pub struct Buffer<R: Runtime, T> {
    ptr: *mut T,
    len: usize,
    runtime: PhantomData<R>,
}

// SAFETY: the buffer owns its device memory, which no other value aliases;
// device pointers are valid in every host thread of the process (one context
// per device, shared by its threads) and the runtime's calls may come from
// any of them.
unsafe impl<R: Runtime, T: Send> Send for Buffer<R, T> {}

impl<R: Runtime, T: Copy> Buffer<R, T> {
    /// `len` zeroed values of `stencil`'s grids on the device.
    pub fn new(stencil: &'static str, len: usize) -> Result<Self, StencilError> {
        let bytes = len
            .checked_mul(size_of::<T>())
            .ok_or(StencilError::ShapeOverflow { stencil })?;
        let mut ptr: *mut c_void = std::ptr::null_mut();
        // SAFETY: writes one pointer; nothing is freed unless the allocation succeeded.
        let code = unsafe { (R::CALLS.malloc)(&mut ptr, bytes) };
        check::<R>(stencil, "malloc", code)?;
        let buffer = Buffer {
            ptr: ptr.cast(),
            len,
            runtime: PhantomData,
        };
        // SAFETY: `ptr` holds `bytes` bytes.
        let code = unsafe { (R::CALLS.zero)(ptr, bytes) };
        check::<R>(stencil, "memset", code)?;
        Ok(buffer)
    }

    fn bytes(&self) -> usize {
        self.len * size_of::<T>()
    }

    /// The values held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer holds no value.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Copies `src` (of exactly `len` values, else an error that copied
    /// nothing) to the device.
    pub fn upload(
        &mut self,
        stencil: &'static str,
        field: &'static str,
        src: &[T],
    ) -> Result<(), StencilError> {
        check_len(stencil, field, self.len, src.len())?;
        // SAFETY: both sides hold `len` values.
        let code = unsafe { (R::CALLS.upload)(self.ptr.cast(), src.as_ptr().cast(), self.bytes()) };
        check::<R>(stencil, "upload", code)
    }

    /// Copies the device values to `dst` (of exactly `len` values, else an
    /// error that copied nothing), after the work queued before.
    pub fn download(
        &self,
        stencil: &'static str,
        field: &'static str,
        dst: &mut [T],
    ) -> Result<(), StencilError> {
        check_len(stencil, field, self.len, dst.len())?;
        // SAFETY: both sides hold `len` values.
        let code =
            unsafe { (R::CALLS.download)(dst.as_mut_ptr().cast(), self.ptr.cast(), self.bytes()) };
        check::<R>(stencil, "download", code)
    }

    /// Copies `src` (at most `len` values, else an error that copied
    /// nothing) to the buffer's first values.
    pub fn upload_part(&mut self, stencil: &'static str, src: &[T]) -> Result<(), StencilError> {
        check_len(stencil, "upload", self.len.min(src.len()), src.len())?;
        // SAFETY: the buffer holds at least `src.len()` values.
        let code =
            unsafe { (R::CALLS.upload)(self.ptr.cast(), src.as_ptr().cast(), size_of_val(src)) };
        check::<R>(stencil, "upload", code)
    }

    /// Copies the buffer's first `dst.len()` values (at most `len`, else an
    /// error that copied nothing) to `dst`, after the work queued before.
    pub fn download_part(&self, stencil: &'static str, dst: &mut [T]) -> Result<(), StencilError> {
        check_len(stencil, "download", self.len.min(dst.len()), dst.len())?;
        // SAFETY: the buffer holds at least `dst.len()` values.
        let code = unsafe {
            (R::CALLS.download)(dst.as_mut_ptr().cast(), self.ptr.cast(), size_of_val(dst))
        };
        check::<R>(stencil, "download", code)
    }

    /// The device address, for a kernel's argument.
    pub fn ptr(&self) -> *mut T {
        self.ptr
    }
}

impl<R: Runtime, T> Drop for Buffer<R, T> {
    fn drop(&mut self) {
        // SAFETY: `ptr` came from the runtime's malloc and is freed once. A
        // failure here (a device already in error) cannot be reported from `drop`.
        unsafe { (R::CALLS.free)(self.ptr.cast()) };
    }
}

/// The time levels of one state field on the device, rotated each launch.
pub struct Levels<R: Runtime, T> {
    /// Physical buffers: `[prev,] cur, [next_prev,] next` at turn 0.
    bufs: Vec<Buffer<R, T>>,
    /// Time levels a launch reads (1, or 2 for a leapfrog).
    levels: usize,
    turn: usize,
}

impl<R: Runtime, T: Copy> Levels<R, T> {
    /// `levels` time levels of `len` values, and the buffers a launch
    /// writes: `next`, and with `fused_leapfrog` also `next_prev` (a launch
    /// of fused leapfrog steps writes the last two time levels).
    pub fn new(
        stencil: &'static str,
        levels: usize,
        fused_leapfrog: bool,
        len: usize,
    ) -> Result<Self, StencilError> {
        let count = levels + 1 + usize::from(fused_leapfrog);
        let bufs = (0..count)
            .map(|_| Buffer::new(stencil, len))
            .collect::<Result<_, _>>()?;
        Ok(Levels {
            bufs,
            levels,
            turn: 0,
        })
    }

    /// The buffer that holds `level` at the current turn.
    fn physical(&self, level: usize) -> usize {
        (level + self.turn) % self.bufs.len()
    }

    /// The level `cur` is: 0, or 1 after `prev`.
    pub fn cur_level(&self) -> usize {
        self.levels - 1
    }

    /// The buffer holding `level` (0 = prev, `cur_level()` = cur, the last = next).
    pub fn level(&self, level: usize) -> &Buffer<R, T> {
        &self.bufs[self.physical(level)]
    }

    /// The buffer holding `level`, to write.
    pub fn level_mut(&mut self, level: usize) -> &mut Buffer<R, T> {
        let at = self.physical(level);
        &mut self.bufs[at]
    }

    /// The level a launch reads as current.
    pub fn cur(&self) -> *mut T {
        self.level(self.cur_level()).ptr()
    }

    /// The level before the last that a launch of fused leapfrog steps writes.
    pub fn next_prev(&self) -> *mut T {
        self.level(self.bufs.len() - 2).ptr()
    }

    /// The level a launch writes.
    pub fn next(&self) -> *mut T {
        self.level(self.bufs.len() - 1).ptr()
    }

    /// The previous level.
    pub fn prev(&self) -> *mut T {
        self.level(0).ptr()
    }

    /// Copies the current level into the first buffer (turn 0's first
    /// level), on the device; nothing where that buffer holds it.
    pub fn copy_cur_to_first(&mut self, stencil: &'static str) -> Result<(), StencilError> {
        let cur = self.physical(self.cur_level());
        if cur == 0 {
            return Ok(());
        }
        let (first, src) = (&self.bufs[0], &self.bufs[cur]);
        // SAFETY: two buffers of this field, both of `len` values.
        let code = unsafe { (R::CALLS.copy)(first.ptr.cast(), src.ptr.cast(), first.bytes()) };
        check::<R>(stencil, "copy", code)
    }

    /// Which buffer holds each level: the turn, modulo the buffers.
    pub fn turn(&self) -> usize {
        self.turn % self.bufs.len()
    }

    /// Puts the buffers in the order of `turn` (a value of [`Levels::turn`]).
    pub fn set_turn(&mut self, turn: usize) {
        self.turn = turn;
    }

    /// Back to turn 0, where the buffers are in order `[prev,] cur, next`.
    pub fn reset(&mut self) {
        self.turn = 0;
    }

    /// The current level's buffer, then every buffer a launch writes: those
    /// that [`Levels::upload_from`] fills, since a launch keeps their frame
    /// and may read it as the current level's.
    pub fn current_and_written(&self) -> Vec<*mut T> {
        (self.cur_level()..self.bufs.len())
            .map(|level| self.level(level).ptr())
            .collect()
    }

    /// Back to turn 0, with `src` in every buffer but `prev`: the frame a
    /// launch does not write.
    pub fn upload_from(
        &mut self,
        stencil: &'static str,
        field: &'static str,
        src: &[T],
    ) -> Result<(), StencilError> {
        self.reset();
        for level in self.cur_level()..self.bufs.len() {
            self.level_mut(level).upload(stencil, field, src)?;
        }
        Ok(())
    }

    /// After a launch: what it wrote (the buffers past those it read) is read next.
    pub fn advance(&mut self) {
        self.turn += self.bufs.len() - self.levels;
    }

    /// After a launch of one step of fused leapfrog steps, which wrote only
    /// `next_prev`'s buffer: `cur` becomes `prev` and that buffer `cur`.
    pub fn advance_one(&mut self) {
        self.turn += 1;
    }
}
