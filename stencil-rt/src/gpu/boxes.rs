//! A session's grids as a generic driver moves them (a distributed
//! session's rank): whole grids by their index in `GRIDS`, params as a
//! slice, and boxes of cells packed on the device before they cross to the
//! host ([`DeviceGrids`], [`Boxed`]).

use std::os::raw::c_int;

use super::{Buffer, HANDLE_BYTES, HostMemory, Pinned, Runtime, Shared, check};
use crate::StencilError;

/// What a generated `Session` gives a generic driver: its grids by their
/// index in `GRIDS`, its params in `PARAMS` order.
///
/// # Safety
///
/// [`SessionGrids::grid`] must return device buffers of
/// [`SessionGrids::Runtime`], each of one value for each cell of the
/// session's shape and valid until the session's next call, the first
/// holding the grid's current values.
pub unsafe trait SessionGrids<T> {
    /// The runtime that holds the grids.
    type Runtime: Runtime;
    /// The stencil's name, for errors.
    const NAME: &'static str;
    /// Uploads every grid, in `GRIDS` order.
    fn upload_grids(&mut self, grids: &[&[T]]) -> Result<(), StencilError>;
    /// Downloads the grids a step changes into theirs of `grids` (all of
    /// `GRIDS`, in order); the input grids' slices are left as they are.
    fn download_grids(&self, grids: &mut [&mut [T]]) -> Result<(), StencilError>;
    /// Runs `steps` steps with params in `PARAMS` order.
    fn step_grids(&mut self, params: &[T], steps: u64) -> Result<(), StencilError>;
    /// Computes the planes `planes` of the slowest axis one step as a grid
    /// of their own (their first and last `RADIUS` planes its frame) into
    /// the next level, queued, without turning the levels; `false` (nothing
    /// ran) where the plan cannot; an error (nothing ran) for planes past
    /// the grid or fewer than its smallest shape.
    fn step_part(&mut self, params: &[T], planes: [usize; 2]) -> Result<bool, StencilError>;
    /// Turns the levels after the parts of one step.
    fn finish_parts(&mut self);
    /// Where grid `grid` (its index in `GRIDS`) is now on the device: the
    /// buffer the next step reads, then the buffers a launch writes but for
    /// their frame (cells it keeps, and may read as the grid's), which an
    /// unpacked box fills too, as an upload does; `None` past the last grid.
    fn grid(&mut self, grid: usize) -> Option<Vec<*mut T>>;
}

/// A session's grids on a device, as a generic driver steps them and moves
/// boxes of their cells: [`Boxed`] over any generated `Session`.
pub trait DeviceGrids<T> {
    /// Uploads every grid, in `GRIDS` order.
    fn upload_grids(&mut self, grids: &[&[T]]) -> Result<(), StencilError>;
    /// Downloads the grids a step changes (the input grids' slices stay).
    fn download_grids(&self, grids: &mut [&mut [T]]) -> Result<(), StencilError>;
    /// Runs `steps` steps with params in `PARAMS` order (queued: errors of
    /// their kernels come back at the next copy or [`DeviceGrids::synchronize`]).
    fn step_grids(&mut self, params: &[T], steps: u64) -> Result<(), StencilError>;
    /// Computes the planes `planes` of the slowest axis one step as a grid
    /// of their own into the next level, queued; `false` (nothing ran) where
    /// the plan cannot. [`DeviceGrids::finish_parts`] turns the levels.
    fn step_part(&mut self, params: &[T], planes: [usize; 2]) -> Result<bool, StencilError>;
    /// Turns the levels after the parts of one step.
    fn finish_parts(&mut self);
    /// Waits for every step and copy queued.
    fn synchronize(&self) -> Result<(), StencilError>;
    /// `len` zeroed host values that boxes are packed into and unpacked
    /// from at the link's full speed (page-locked).
    fn host_memory(&self, len: usize) -> Result<HostMemory<T>, StencilError>;
    /// Copies the box `ranges` (per axis, `[start, end)`) of each of
    /// `grids` (indices in `GRIDS`) into `to`, grid after grid, each row
    /// after row: packed on the device, then one copy to the host.
    fn pack(
        &mut self,
        grids: &[usize],
        ranges: &[[usize; 2]],
        to: &mut [T],
    ) -> Result<(), StencilError>;
    /// The reverse of [`DeviceGrids::pack`]: `from` into the box of each grid.
    fn unpack(
        &mut self,
        grids: &[usize],
        ranges: &[[usize; 2]],
        from: &[T],
    ) -> Result<(), StencilError>;
    /// `len` zeroed device values that another process of the node maps
    /// by their handle and packs boxes into; `None` where the runtime
    /// shares no device memory between processes.
    fn export(&self, len: usize) -> Result<Option<Shared<T>>, StencilError>;
    /// `len` zeroed device values of this process alone (for a GPU-aware
    /// MPI to read or write).
    fn device_memory(&self, len: usize) -> Result<Shared<T>, StencilError>;
    /// The runtime the grids are on: `"cuda"` or `"hip"`.
    fn backend(&self) -> &'static str;
    /// Another process's [`DeviceGrids::export`] of `len` values, mapped;
    /// `None` where the runtime cannot map it (its device out of reach).
    ///
    /// # Safety
    ///
    /// As [`Shared::open`]'s.
    unsafe fn open(&self, handle: &[u8; HANDLE_BYTES], len: usize) -> Option<Shared<T>>;
    /// As [`DeviceGrids::pack`], into device values `shared` (this
    /// process's or another's), or with `unpack` as [`DeviceGrids::unpack`]
    /// from them; queued: done at the next [`DeviceGrids::synchronize`].
    fn copy_shared(
        &mut self,
        grids: &[usize],
        ranges: &[[usize; 2]],
        shared: &Shared<T>,
        unpack: bool,
    ) -> Result<(), StencilError>;
}

/// A generated `device_grids`: a session of a shape, on the calling
/// thread's current device.
pub type NewDeviceGrids<T> = fn(&[usize]) -> Result<Box<dyn DeviceGrids<T>>, StencilError>;

/// A GPU backend's devices as a generic driver (a distributed session's
/// rank) picks one and keeps a stencil's grids there: a generated `DEVICES`.
#[derive(Clone, Copy)]
pub struct Devices<T: 'static> {
    /// The number of devices ([`super::device_count`]).
    pub count: fn() -> Result<usize, StencilError>,
    /// Makes a device the calling thread's current one ([`super::set_device`]).
    pub select: fn(usize) -> Result<(), StencilError>,
    /// A session of a shape on the calling thread's current device.
    pub grids: NewDeviceGrids<T>,
}

/// A generated session and the device buffer its boxes are packed in
/// (grown to the largest box asked for, then kept).
pub struct Boxed<S: SessionGrids<T>, T> {
    session: S,
    shape: Vec<usize>,
    staging: Option<Buffer<S::Runtime, T>>,
}

impl<S: SessionGrids<T>, T: Copy> Boxed<S, T> {
    /// `session`, of `shape`, ready to move boxes of its grids.
    pub fn new(session: S, shape: Vec<usize>) -> Self {
        Boxed {
            session,
            shape,
            staging: None,
        }
    }

    /// The staging buffer, of at least `len` values.
    fn staging(&mut self, len: usize) -> Result<&mut Buffer<S::Runtime, T>, StencilError> {
        if (self.staging.as_ref()).is_none_or(|b| b.len() < len) {
            self.staging = None;
            self.staging = Some(Buffer::new(S::NAME, len)?);
        }
        Ok(self.staging.as_mut().expect("allocated above"))
    }

    /// The box `ranges` as the runtime's box copy takes it, and its cells a
    /// grid, checked against the grid and against `len` values for `grids`.
    fn geometry(
        &self,
        grids: &[usize],
        ranges: &[[usize; 2]],
        len: usize,
    ) -> Result<(Geometry, usize), StencilError> {
        let shape = &self.shape;
        let geometry = three_axes(shape, ranges).ok_or(StencilError::ArgumentCount {
            stencil: S::NAME,
            what: "axes of a box within the grid",
            expected: shape.len(),
            actual: ranges.len(),
        })?;
        let cells: usize = geometry.2.iter().map(|&e| e as usize).product();
        crate::host::check_len(S::NAME, "packed box", cells * grids.len(), len)?;
        Ok((geometry, cells))
    }

    /// Copies the box of each of `grids` between the grid and device values
    /// at `staging` (`cells` values a grid; `unpack`: into every buffer
    /// that holds the grid).
    ///
    /// # Safety
    ///
    /// `staging` must hold `cells` device values for each of `grids`.
    unsafe fn copy_boxes(
        &mut self,
        grids: &[usize],
        (geometry, cells): (Geometry, usize),
        staging: *mut T,
        unpack: bool,
    ) -> Result<(), StencilError> {
        let buffers: Vec<Vec<*mut T>> = (grids.iter())
            .map(|&g| self.session.grid(g).filter(|b| !b.is_empty()))
            .collect::<Option<_>>()
            .ok_or(StencilError::ArgumentCount {
                stencil: S::NAME,
                what: "grids",
                expected: grids.iter().max().map_or(0, |&g| g + 1),
                actual: grids.len(),
            })?;
        for (k, held) in buffers.into_iter().enumerate() {
            let copies = if unpack { &held[..] } else { &held[..1] };
            for &grid in copies {
                // SAFETY: `staging` holds `cells` values for each grid (the caller's).
                let packed = unsafe { staging.add(k * cells) };
                // SAFETY: `grid` holds every cell of the session's shape
                // (`SessionGrids`' contract) and the box lies within it
                // (`three_axes`).
                unsafe { box_copy::<S::Runtime, T>(S::NAME, grid, packed, geometry, unpack)? };
            }
        }
        Ok(())
    }
}

/// Copies the box `(n, lo, ext)` of `grid` to `packed` (`unpack`: back).
///
/// # Safety
///
/// `grid` must be a device buffer of `n`'s cells and `packed` one of at
/// least the box's; the box must lie within the grid.
unsafe fn box_copy<R: Runtime, T>(
    stencil: &'static str,
    grid: *mut T,
    packed: *mut T,
    (n, lo, ext): Geometry,
    unpack: bool,
) -> Result<(), StencilError> {
    // SAFETY: the caller's.
    let code = unsafe {
        (R::CALLS.box_copy)(
            grid.cast(),
            packed.cast(),
            size_of::<T>() as c_int,
            n.as_ptr(),
            lo.as_ptr(),
            ext.as_ptr(),
            c_int::from(unpack),
        )
    };
    check::<R>(stencil, "box_copy", code)
}

/// A box as the runtime's box copy takes it: sizes, starts and extents of
/// three axes.
type Geometry = ([i64; 3], [i64; 3], [i64; 3]);

/// `shape` and the box `ranges` as three axes (leading axes of one cell),
/// as the runtime's box copy takes them: sizes, starts, extents; `None`
/// where the box does not lie within the grid or the axes differ.
fn three_axes(shape: &[usize], ranges: &[[usize; 2]]) -> Option<Geometry> {
    if shape.len() != ranges.len()
        || shape.len() > 3
        || (ranges.iter().zip(shape)).any(|(&[s, e], &n)| s > e || e > n)
    {
        return None;
    }
    let (mut n, mut lo, mut ext) = ([1i64; 3], [0i64; 3], [1i64; 3]);
    let skip = 3 - shape.len();
    for (a, (&[s, e], &size)) in ranges.iter().zip(shape).enumerate() {
        n[skip + a] = size as i64;
        lo[skip + a] = s as i64;
        ext[skip + a] = (e - s) as i64;
    }
    Some((n, lo, ext))
}

impl<S: SessionGrids<T>, T: Copy + Default + Send + 'static> DeviceGrids<T> for Boxed<S, T> {
    fn upload_grids(&mut self, grids: &[&[T]]) -> Result<(), StencilError> {
        self.session.upload_grids(grids)
    }

    fn download_grids(&self, grids: &mut [&mut [T]]) -> Result<(), StencilError> {
        self.session.download_grids(grids)
    }

    fn step_grids(&mut self, params: &[T], steps: u64) -> Result<(), StencilError> {
        self.session.step_grids(params, steps)
    }

    fn step_part(&mut self, params: &[T], planes: [usize; 2]) -> Result<bool, StencilError> {
        self.session.step_part(params, planes)
    }

    fn finish_parts(&mut self) {
        self.session.finish_parts();
    }

    fn synchronize(&self) -> Result<(), StencilError> {
        super::synchronize::<S::Runtime>(S::NAME)
    }

    fn host_memory(&self, len: usize) -> Result<HostMemory<T>, StencilError> {
        Ok(Box::new(Pinned::<S::Runtime, T>::new(S::NAME, len)?))
    }

    fn pack(
        &mut self,
        grids: &[usize],
        ranges: &[[usize; 2]],
        to: &mut [T],
    ) -> Result<(), StencilError> {
        let box_ = self.geometry(grids, ranges, to.len())?;
        if to.is_empty() {
            return Ok(());
        }
        let staging = self.staging(to.len())?.ptr();
        // SAFETY: the staging buffer holds the box's values of every grid.
        unsafe { self.copy_boxes(grids, box_, staging, false)? };
        let staging = self.staging.as_ref().expect("allocated above");
        staging.download_part(S::NAME, to)
    }

    fn unpack(
        &mut self,
        grids: &[usize],
        ranges: &[[usize; 2]],
        from: &[T],
    ) -> Result<(), StencilError> {
        let box_ = self.geometry(grids, ranges, from.len())?;
        if from.is_empty() {
            return Ok(());
        }
        let staging = self.staging(from.len())?;
        staging.upload_part(S::NAME, from)?;
        let staging = staging.ptr();
        // SAFETY: the staging buffer holds the box's values of every grid.
        unsafe { self.copy_boxes(grids, box_, staging, true) }
    }

    fn export(&self, len: usize) -> Result<Option<Shared<T>>, StencilError> {
        Shared::export::<S::Runtime>(S::NAME, len)
    }

    fn device_memory(&self, len: usize) -> Result<Shared<T>, StencilError> {
        Shared::new::<S::Runtime>(S::NAME, len)
    }

    fn backend(&self) -> &'static str {
        <S::Runtime as Runtime>::BACKEND
    }

    unsafe fn open(&self, handle: &[u8; HANDLE_BYTES], len: usize) -> Option<Shared<T>> {
        // SAFETY: the caller's.
        unsafe { Shared::open::<S::Runtime>(handle, len) }
    }

    fn copy_shared(
        &mut self,
        grids: &[usize],
        ranges: &[[usize; 2]],
        shared: &Shared<T>,
        unpack: bool,
    ) -> Result<(), StencilError> {
        let box_ = self.geometry(grids, ranges, box_values(grids, ranges))?;
        holds::<T>(S::NAME, shared, box_.1 * grids.len())?;
        // SAFETY: `shared` holds the box's values of every grid (checked above).
        unsafe { self.copy_boxes(grids, box_, shared.ptr(), unpack) }
    }
}

/// Checks that `shared` holds at least `len` values.
fn holds<T>(stencil: &'static str, shared: &Shared<T>, len: usize) -> Result<(), StencilError> {
    if shared.len() >= len {
        return Ok(());
    }
    Err(StencilError::LengthMismatch {
        stencil,
        field: "shared box",
        expected: len,
        actual: shared.len(),
    })
}

/// The values of the box `ranges` of every grid of `grids`, as packed.
fn box_values(grids: &[usize], ranges: &[[usize; 2]]) -> usize {
    let cells: usize = ranges.iter().map(|&[s, e]| e.saturating_sub(s)).product();
    cells * grids.len()
}

#[cfg(test)]
mod tests {
    use super::three_axes;

    #[test]
    fn boxes_take_leading_axes_of_one_cell() {
        let (n, lo, ext) = three_axes(&[7, 9], &[[1, 3], [0, 9]]).unwrap();
        assert_eq!((n, lo, ext), ([1, 7, 9], [0, 1, 0], [1, 2, 9]));
        assert!(three_axes(&[7, 9], &[[1, 3], [0, 10]]).is_none());
        assert!(three_axes(&[7, 9], &[[3, 1], [0, 9]]).is_none());
        assert!(three_axes(&[7, 9], &[[0, 1]]).is_none());
    }
}
