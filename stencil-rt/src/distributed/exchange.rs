//! Moving cells between ranks: halo exchanges through buffers allocated
//! once, and the packing of boxes of cells for scatter and gather.

use std::ops::{Deref, DerefMut};

use mpi::datatype::Equivalence;
use mpi::topology::Communicator;
use mpi::traits::{Destination, Source};

use super::Layout;
use super::store::Store;
use crate::StencilError;
use crate::gpu::HostMemory;

/// A rank's send and receive buffers, per axis and side, each large enough
/// for the slab of every grid that crosses that side.
pub struct Buffers<T> {
    send: Vec<[HostMemory<T>; 2]>,
    receive: Vec<[HostMemory<T>; 2]>,
}

impl<T: Copy + Default + Send + Sync + 'static> Buffers<T> {
    /// Buffers for `grids` grids of `layout`'s box, from `store`'s host
    /// memory (page-locked where the box is on a device).
    pub fn new(layout: &Layout, grids: usize, store: &Store<T>) -> Result<Self, StencilError> {
        let shape = layout.local_shape();
        let sized = |a: usize, side: usize| -> Result<HostMemory<T>, StencilError> {
            store.host_memory(slab_cells(&shape, a, layout.halo[a][side]) * grids)
        };
        let sides = |a: usize| -> Result<[HostMemory<T>; 2], StencilError> {
            Ok([sized(a, 0)?, sized(a, 1)?])
        };
        Ok(Buffers {
            send: (0..shape.len()).map(sides).collect::<Result<_, _>>()?,
            receive: (0..shape.len()).map(sides).collect::<Result<_, _>>()?,
        })
    }
}

/// Cells of a slab `width` deep along axis `a` of a box of `shape`, whole
/// along the other axes.
fn slab_cells(shape: &[usize], a: usize, width: usize) -> usize {
    shape
        .iter()
        .enumerate()
        .map(|(b, &n)| if b == a { width } else { n })
        .product()
}

/// Fills the halos of `grids` (indices in `GRIDS`) of `store`'s box of
/// `shape` from the neighbouring ranks, one axis after the other (each
/// axis's slabs whole along the others, so that the corners a box stencil
/// reads arrive through two exchanges), both sides of an axis in flight at
/// once. `packed` runs once the first axis's slabs are packed, before they
/// travel (a device's interior queued then computes while they do).
pub fn halos<C: Communicator, T: Equivalence + Copy + Default + Send + Sync>(
    comm: &C,
    layout: &Layout,
    shape: &[usize],
    (store, grids): (&mut Store<T>, &[usize]),
    buffers: &mut Buffers<T>,
    packed: &mut dyn FnMut(&mut Store<T>) -> Result<(), StencilError>,
) -> Result<(), StencilError> {
    for a in 0..shape.len() {
        let [h_lo, h_hi] = layout.halo[a];
        let n = shape[a];
        // What each side sends: the owned cells next to it, as deep as the
        // neighbour's halo there (the same width: both are the axis's).
        let outgoing = [[h_lo, 2 * h_lo], [n - 2 * h_hi, n - h_hi]];
        let incoming = [[0, h_lo], [n - h_hi, n]];
        let len = |side: usize| slab_cells(shape, a, layout.halo[a][side]) * grids.len();
        for (side, &range) in outgoing.iter().enumerate() {
            if layout.neighbour(a, side).is_some() {
                let buf = &mut buffers.send[a][side].deref_mut()[..len(side)];
                store.pack(grids, &slab(shape, a, range), shape, buf)?;
            }
        }
        if a == 0 {
            packed(store)?;
        }
        mpi::request::scope(|scope| {
            // A message to the low side is tagged low, and its receiver
            // takes it from its high side under the same tag.
            let tag = |side: usize| (2 * a + side) as i32;
            let sides = buffers.send[a].iter().zip(buffers.receive[a].iter_mut());
            let requests: Vec<_> = (sides.enumerate())
                .filter_map(|(side, (send, receive))| {
                    let p = comm.process_at_rank(layout.neighbour(a, side)? as i32);
                    let receive = &mut receive.deref_mut()[..len(side)];
                    Some((
                        p.immediate_receive_into_with_tag(scope, receive, tag(1 - side)),
                        p.immediate_send_with_tag(scope, &send.deref()[..len(side)], tag(side)),
                    ))
                })
                .collect();
            for (receive, send) in requests {
                receive.wait();
                send.wait();
            }
        });
        for (side, &range) in incoming.iter().enumerate() {
            if layout.neighbour(a, side).is_some() {
                let buf = &buffers.receive[a][side].deref()[..len(side)];
                store.unpack(grids, &slab(shape, a, range), shape, buf)?;
            }
        }
    }
    Ok(())
}

/// The box `[range)` along axis `a`, whole along the others.
fn slab(shape: &[usize], a: usize, range: [usize; 2]) -> Vec<[usize; 2]> {
    (0..shape.len())
        .map(|b| if b == a { range } else { [0, shape[b]] })
        .collect()
}

/// Calls `run(start, len)` for each row of the box `ranges` of an array of
/// `shape` (row-major), in order: `len` contiguous cells from `start`.
fn for_each_row(shape: &[usize], ranges: &[[usize; 2]], mut run: impl FnMut(usize, usize)) {
    let dims = shape.len();
    if ranges.iter().any(|[s, e]| s >= e) {
        return;
    }
    let row = ranges[dims - 1][1] - ranges[dims - 1][0];
    let mut at: Vec<usize> = ranges.iter().map(|r| r[0]).collect();
    loop {
        let start = at.iter().zip(shape).fold(0, |i, (&c, &n)| i * n + c);
        run(start, row);
        // The next row: an odometer over every axis but the last.
        let mut a = dims - 1;
        loop {
            if a == 0 {
                return;
            }
            a -= 1;
            at[a] += 1;
            if at[a] < ranges[a][1] {
                break;
            }
            at[a] = ranges[a][0];
        }
    }
}

/// Copies the box `ranges` of every grid (of `shape`) into `buf`, grid
/// after grid.
pub fn pack<T: Copy, G: AsRef<[T]>>(
    grids: &[G],
    shape: &[usize],
    ranges: &[[usize; 2]],
    buf: &mut [T],
) {
    let mut k = 0;
    for g in grids {
        let g = g.as_ref();
        for_each_row(shape, ranges, |start, len| {
            buf[k..k + len].copy_from_slice(&g[start..start + len]);
            k += len;
        });
    }
}

/// The reverse of [`pack`].
pub fn unpack<T: Copy, G: AsMut<[T]>>(
    buf: &[T],
    grids: &mut [G],
    shape: &[usize],
    ranges: &[[usize; 2]],
) {
    let mut k = 0;
    for g in grids {
        let g = g.as_mut();
        for_each_row(shape, ranges, |start, len| {
            g[start..start + len].copy_from_slice(&buf[k..k + len]);
            k += len;
        });
    }
}

/// The box `ranges` of every grid (of `shape`: a rank's box, or the
/// global grid), packed.
pub fn packed<T: Copy + Default, G: AsRef<[T]>>(
    grids: &[G],
    shape: &[usize],
    ranges: &[[usize; 2]],
) -> Vec<T> {
    let cells: usize = ranges.iter().map(|[s, e]| e - s).product();
    let mut buf = vec![T::default(); cells * grids.len()];
    pack(grids, shape, ranges, &mut buf);
    buf
}

/// A rank's owned cells of every grid, packed.
pub fn pack_owned<T: Copy + Default>(layout: &Layout, grids: &[Vec<T>]) -> Vec<T> {
    packed(grids, &layout.local_shape(), &layout.owned_in_box())
}

/// The reverse of [`pack_owned`].
pub fn unpack_owned<T: Copy>(buf: &[T], layout: &Layout, grids: &mut [Vec<T>]) {
    unpack(buf, grids, &layout.local_shape(), &layout.owned_in_box());
}

/// Sends `buf` to `rank` (blocking).
pub fn send<C: Communicator, T: Equivalence>(comm: &C, rank: usize, buf: &[T]) {
    comm.process_at_rank(rank as i32).send(buf);
}

/// Receives into `buf` from `rank` (blocking).
pub fn receive<C: Communicator, T: Equivalence>(comm: &C, rank: usize, buf: &mut [T]) {
    comm.process_at_rank(rank as i32).receive_into(buf);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_a_box_come_in_row_major_order() {
        let mut rows = Vec::new();
        for_each_row(&[3, 4, 5], &[[1, 3], [0, 2], [2, 4]], |s, l| {
            rows.push((s, l))
        });
        assert_eq!(rows, vec![(22, 2), (27, 2), (42, 2), (47, 2)]);
        let mut none = 0;
        for_each_row(&[3, 4], &[[1, 1], [0, 4]], |_, _| none += 1);
        assert_eq!(none, 0);
    }

    #[test]
    fn pack_and_unpack_are_inverse() {
        let shape = [4, 5];
        let grids = vec![(0..20).collect::<Vec<i32>>(), (100..120).collect()];
        let ranges = [[1, 3], [2, 5]];
        let mut buf = vec![0; 12];
        pack(&grids, &shape, &ranges, &mut buf);
        assert_eq!(buf[..6], [7, 8, 9, 12, 13, 14]);
        let mut back = vec![vec![0; 20]; 2];
        unpack(&buf, &mut back, &shape, &ranges);
        assert_eq!(back[1][14], 114);
        assert_eq!(back[0][0], 0);
    }
}
