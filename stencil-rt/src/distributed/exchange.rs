//! Moving cells between ranks: halo exchanges through buffers allocated
//! once, and the packing of boxes of cells for scatter and gather.

use std::ops::DerefMut;

use mpi::datatype::{Buffer, BufferMut, Equivalence};
use mpi::topology::Communicator;
use mpi::traits::{Destination, Source};

use super::device_mpi::{self, Message};
use super::peers::{self, Peer};
use super::store::Store;
use super::{DeviceMpi, Layout};
use crate::StencilError;
use crate::gpu::{HostMemory, Shared};

/// A rank's send and receive buffers, per axis and side, each large enough
/// for the slab of every grid that crosses that side: in host memory, and
/// on the device for a side whose neighbour shares device memory with this
/// rank, or where MPI takes device buffers.
pub struct Buffers<T> {
    send: Vec<[HostMemory<T>; 2]>,
    receive: Vec<[HostMemory<T>; 2]>,
    peers: Vec<[Option<Peer<T>>; 2]>,
    /// Device buffers handed to a GPU-aware MPI, per axis and side, where
    /// the side's halos go through MPI.
    mpi_send: Vec<[Option<Shared<T>>; 2]>,
    mpi_receive: Vec<[Option<Shared<T>>; 2]>,
    /// Exchanges so far: which of a side's two peer buffers is in use.
    exchanges: usize,
}

/// How one side's halo leaves or arrives.
enum Via<'b, T> {
    /// A device buffer of the two neighbours' (one's, mapped by the other):
    /// MPI carries an empty message.
    Peer(&'b Shared<T>),
    /// Device values a GPU-aware MPI reads or writes.
    Mpi(&'b Shared<T>),
    /// Host memory MPI reads or writes.
    Host,
}

/// The way of a side with `peer`'s buffers (this exchange's of the two) or
/// else `mpi`'s, else the host.
fn via<'b, T>(
    peer: Option<&'b [Shared<T>; 2]>,
    mpi: Option<&'b Shared<T>>,
    turn: usize,
) -> Via<'b, T> {
    match (peer, mpi) {
        (Some(pair), _) => Via::Peer(&pair[turn]),
        (None, Some(device)) => Via::Mpi(device),
        (None, None) => Via::Host,
    }
}

impl<T: Copy + Default + Send + Sync + 'static> Buffers<T> {
    /// Buffers for `grids` grids of `layout`'s box, from `store`'s host
    /// memory (page-locked where the box is on a device); with
    /// `device_halos`, device buffers shared with each neighbour of this
    /// node that keeps its box on a device too (every rank calls it alike);
    /// where MPI takes device buffers (`device_mpi`), device buffers for
    /// the other sides.
    pub fn new<C: Communicator>(
        comm: &C,
        layout: &Layout,
        grids: usize,
        store: &Store<T>,
        (device_halos, device_mpi): (bool, DeviceMpi),
    ) -> Result<Self, StencilError> {
        let shape = layout.local_shape();
        let len = |a: usize, side: usize| slab_cells(&shape, a, layout.halo[a][side]) * grids;
        let sized = |a: usize, side: usize| store.host_memory(len(a, side));
        let sides = |a: usize| -> Result<[HostMemory<T>; 2], StencilError> {
            Ok([sized(a, 0)?, sized(a, 1)?])
        };
        let peers = peers::share(comm, layout, store, device_halos, &len);
        let aware =
            (store.device()).filter(|d| device_mpi::takes_device_buffers(device_mpi, d.backend()));
        let on_device = |mapped: &dyn Fn(&Peer<T>) -> bool| {
            (0..shape.len())
                .map(|a| -> Result<[Option<Shared<T>>; 2], StencilError> {
                    let buffer = |side: usize| match (aware, layout.neighbour(a, side)) {
                        (Some(device), Some(_)) if !peers[a][side].as_ref().is_some_and(mapped) => {
                            device.device_memory(len(a, side)).map(Some)
                        }
                        _ => Ok(None),
                    };
                    Ok([buffer(0)?, buffer(1)?])
                })
                .collect::<Result<Vec<_>, _>>()
        };
        Ok(Buffers {
            send: (0..shape.len()).map(sides).collect::<Result<_, _>>()?,
            receive: (0..shape.len()).map(sides).collect::<Result<_, _>>()?,
            mpi_send: on_device(&|p| p.theirs.is_some())?,
            mpi_receive: on_device(&|p| p.mine.is_some())?,
            peers,
            exchanges: 0,
        })
    }

    /// The sides whose halos go device to device, both ways.
    pub fn device_sides(&self) -> usize {
        (self.peers.iter().flatten().flatten())
            .filter(|p| p.theirs.is_some() && p.mine.is_some())
            .count()
    }

    /// Whether MPI is handed device buffers for some side's halos.
    pub fn device_mpi(&self) -> bool {
        (self.mpi_send.iter().chain(&self.mpi_receive))
            .any(|sides| sides.iter().any(Option::is_some))
    }

    /// Unmaps the neighbours' device buffers and waits for the neighbours
    /// to unmap this rank's (every rank calls it alike, as its session ends).
    pub fn release<C: Communicator>(&mut self, comm: &C, layout: &Layout) {
        peers::release(comm, layout, &mut self.peers);
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
/// once; a side with device buffers shared with its neighbour sends and
/// receives through them, and MPI carries an empty message. `packed` runs
/// once the first axis's slabs are packed, before they travel (a device's
/// interior queued then computes while they do).
pub fn halos<C: Communicator, T: Equivalence + Copy + Default + Send + Sync>(
    comm: &C,
    layout: &Layout,
    shape: &[usize],
    (store, grids): (&mut Store<T>, &[usize]),
    buffers: &mut Buffers<T>,
    packed: &mut dyn FnMut(&mut Store<T>) -> Result<(), StencilError>,
) -> Result<(), StencilError> {
    let turn = buffers.exchanges % 2;
    for a in 0..shape.len() {
        let axis = Axis {
            a,
            turn,
            len: [0, 1].map(|side| slab_cells(shape, a, layout.halo[a][side]) * grids.len()),
            neighbours: [0, 1].map(|side| layout.neighbour(a, side)),
        };
        // What each side sends: the owned cells next to it, as deep as the
        // neighbour's halo there (the same width: both are the axis's).
        let [h_lo, h_hi] = layout.halo[a];
        let n = shape[a];
        let outgoing = [[h_lo, 2 * h_lo], [n - 2 * h_hi, n - h_hi]];
        let incoming = [[0, h_lo], [n - h_hi, n]];
        for side in axis.sides() {
            let box_ = slab(shape, a, outgoing[side]);
            match buffers.way_out(&axis, side) {
                Via::Peer(device) | Via::Mpi(device) => {
                    store.copy_shared(grids, &box_, device, false)?
                }
                Via::Host => {
                    let send = &mut buffers.send[a][side][..axis.len[side]];
                    store.pack(grids, &box_, shape, send)?
                }
            }
        }
        if axis
            .sides()
            .any(|side| !matches!(buffers.way_out(&axis, side), Via::Host))
        {
            store.synchronize()?;
        }
        if a == 0 {
            packed(store)?;
        }
        buffers.travel(comm, &axis);
        for side in axis.sides() {
            let box_ = slab(shape, a, incoming[side]);
            match buffers.way_in(&axis, side) {
                Via::Peer(device) | Via::Mpi(device) => {
                    store.copy_shared(grids, &box_, device, true)?
                }
                Via::Host => {
                    let receive = &buffers.receive[a][side][..axis.len[side]];
                    store.unpack(grids, &box_, shape, receive)?
                }
            }
        }
    }
    buffers.exchanges += 1;
    Ok(())
}

/// One axis of an exchange: its index, which of the sides' two peer
/// buffers is in use, the values a side's slabs hold and the neighbours.
struct Axis {
    a: usize,
    turn: usize,
    len: [usize; 2],
    neighbours: [Option<usize>; 2],
}

impl Axis {
    /// The sides with a neighbour.
    fn sides(&self) -> impl Iterator<Item = usize> + '_ {
        (0..2).filter(|&side| self.neighbours[side].is_some())
    }
}

impl<T: Equivalence> Buffers<T> {
    /// How `side` of `axis` sends its halo this exchange.
    fn way_out(&self, axis: &Axis, side: usize) -> Via<'_, T> {
        let peer = self.peers[axis.a][side].as_ref();
        let mpi = self.mpi_send[axis.a][side].as_ref();
        via(peer.and_then(|p| p.theirs.as_ref()), mpi, axis.turn)
    }

    /// How `side` of `axis` receives its halo this exchange.
    fn way_in(&self, axis: &Axis, side: usize) -> Via<'_, T> {
        let peer = self.peers[axis.a][side].as_ref();
        let mpi = self.mpi_receive[axis.a][side].as_ref();
        via(peer.and_then(|p| p.mine.as_ref()), mpi, axis.turn)
    }

    /// Sends `axis`'s packed slabs to its neighbours and receives theirs,
    /// both sides at once: through the host buffers, the device buffers a
    /// GPU-aware MPI takes, or (device buffers shared with the neighbour)
    /// as empty messages.
    fn travel<C: Communicator>(&mut self, comm: &C, axis: &Axis) {
        let host = |buffers: &mut [HostMemory<T>; 2]| {
            buffers.each_mut().map(|b| b.deref_mut().as_mut_ptr())
        };
        let (send, receive) = (
            host(&mut self.send[axis.a]),
            host(&mut self.receive[axis.a]),
        );
        let message = |side: usize, host: *mut T, way: Via<'_, T>| {
            // SAFETY: the host buffer and the device buffers hold the
            // side's `len` values (`Buffers::new`), and outlive the
            // messages, which `both_sides` has finished with on return.
            unsafe {
                match way {
                    Via::Peer(_) => Message::new(host, 0),
                    Via::Mpi(device) => Message::new(device.ptr(), axis.len[side]),
                    Via::Host => Message::new(host, axis.len[side]),
                }
            }
        };
        let outbound = [0, 1].map(|side| message(side, send[side], self.way_out(axis, side)));
        let [mut in0, mut in1] =
            [0, 1].map(|side| message(side, receive[side], self.way_in(axis, side)));
        both_sides(
            comm,
            axis.a,
            axis.neighbours,
            [&outbound[0], &outbound[1]],
            [&mut in0, &mut in1],
        );
    }
}

/// Sends `outbound[side]` to the neighbour of each side of axis `a` that
/// `neighbours` names and receives `inbound[side]` from it, both sides in
/// flight at once (non-blocking), returning once all arrived.
pub(super) fn both_sides<C, S, R>(
    comm: &C,
    a: usize,
    neighbours: [Option<usize>; 2],
    outbound: [&S; 2],
    inbound: [&mut R; 2],
) where
    C: Communicator,
    S: Buffer + ?Sized,
    R: BufferMut + ?Sized,
{
    mpi::request::scope(|scope| {
        // A message to the low side is tagged low, and its receiver
        // takes it from its high side under the same tag.
        let tag = |side: usize| (2 * a + side) as i32;
        let requests: Vec<_> = (outbound.into_iter().zip(inbound).enumerate())
            .filter_map(|(side, (send, receive))| {
                let p = comm.process_at_rank(neighbours[side]? as i32);
                Some((
                    p.immediate_receive_into_with_tag(scope, receive, tag(1 - side)),
                    p.immediate_send_with_tag(scope, send, tag(side)),
                ))
            })
            .collect();
        for (receive, send) in requests {
            receive.wait();
            send.wait();
        }
    });
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
