//! Halos between the ranks of one node that keep their boxes on devices:
//! each rank maps the device buffers its neighbours receive into (CUDA and
//! HIP IPC) and packs what it sends straight into them, so that MPI carries
//! only the message that they are there and the host never holds a halo.
//!
//! Each side of an axis has two buffers, used in turn, one exchange each:
//! a rank packs into its neighbour's buffer for exchange `k + 2` only after
//! the neighbour's message of exchange `k + 1`, which the neighbour sends
//! once its device is idle, past its unpacking of exchange `k` from that
//! same buffer. A rank sends its message once its own device is idle, past
//! its packing.

use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, Rank};

use super::store::Store;
use super::{Layout, exchange};
use crate::gpu::{DeviceGrids, HANDLE_BYTES, Shared};

/// The device buffers of one side of an axis, where its neighbour is
/// another rank of this node.
pub struct Peer<T> {
    /// The neighbour's two buffers, mapped here: what this rank sends goes
    /// there. `None` where they could not be mapped (the host carries it).
    pub theirs: Option<[Shared<T>; 2]>,
    /// This rank's two buffers, which the neighbour mapped: what it
    /// receives is there. `None` where the neighbour could not map them.
    pub mine: Option<[Shared<T>; 2]>,
}

/// An offer's bytes: whether buffers are offered, their length (8 bytes),
/// and the two handles.
const OFFER_BYTES: usize = 1 + 8 + 2 * HANDLE_BYTES;

/// The buffers of each side of each axis of `layout`'s box whose neighbour
/// is another rank of this node, agreed with that neighbour, each side's
/// `len(axis, side)` values (every rank calls it alike: the neighbours
/// exchange offers, then whether they mapped them). Without a device box,
/// or with `enabled` off, nothing is offered and the sides go by the host.
pub fn share<C: Communicator, T: Copy + Default + Send + Sync + 'static>(
    comm: &C,
    layout: &Layout,
    store: &Store<T>,
    enabled: bool,
    len: &dyn Fn(usize, usize) -> usize,
) -> Vec<[Option<Peer<T>>; 2]> {
    let node = comm.split_shared(comm.rank());
    let mut members: Vec<Rank> = vec![0; node.size() as usize];
    node.all_gather_into(&comm.rank(), &mut members[..]);
    let me = comm.rank() as usize;
    let device = store.device().filter(|_| enabled);
    (0..layout.global.len())
        .map(|a| {
            let neighbours = [0, 1].map(|side| {
                (layout.neighbour(a, side)).filter(|&n| n != me && members.contains(&(n as Rank)))
            });
            let mut mine = [0, 1].map(|side| {
                (neighbours[side].and(device)).and_then(|d| export_pair(d, len(a, side)))
            });
            let offers = [0, 1].map(|side| offer(mine[side].as_ref(), len(a, side)));
            let offered = swap(comm, a, &neighbours, &offers);
            let mut theirs =
                [0, 1].map(|side| device.and_then(|d| open_pair(d, &offered[side], len(a, side))));
            let acks = [0, 1].map(|side| vec![u8::from(theirs[side].is_some())]);
            let acked = swap(comm, a, &neighbours, &acks);
            [0, 1].map(|side| {
                neighbours[side].map(|_| Peer {
                    theirs: theirs[side].take(),
                    mine: mine[side].take().filter(|_| acked[side] == [1]),
                })
            })
        })
        .collect()
}

/// Unmaps the neighbours' buffers of `peers`, then waits for each
/// neighbour to have unmapped this rank's before they are freed (every
/// rank calls it alike, as its session ends).
pub fn release<C: Communicator, T>(comm: &C, layout: &Layout, peers: &mut [[Option<Peer<T>>; 2]]) {
    for (a, sides) in peers.iter_mut().enumerate() {
        for peer in sides.iter_mut().flatten() {
            peer.theirs = None;
        }
        let neighbours =
            [0, 1].map(|side| sides[side].as_ref().and_then(|_| layout.neighbour(a, side)));
        swap(comm, a, &neighbours, &[vec![1], vec![1]]);
        for peer in sides.iter_mut().flatten() {
            peer.mine = None;
        }
    }
}

/// Two buffers of `len` values on `device` and their handles; `None`
/// where the runtime shares none.
fn export_pair<T>(device: &dyn DeviceGrids<T>, len: usize) -> Option<[Shared<T>; 2]> {
    let first = device.export(len).ok()??;
    let second = device.export(len).ok()??;
    Some([first, second])
}

/// The offer of `pair` (none without it), of `len` values each.
fn offer<T>(pair: Option<&[Shared<T>; 2]>, len: usize) -> Vec<u8> {
    let mut bytes = vec![0u8; OFFER_BYTES];
    if let Some([first, second]) = pair {
        bytes[0] = 1;
        bytes[1..9].copy_from_slice(&(len as u64).to_le_bytes());
        bytes[9..9 + HANDLE_BYTES].copy_from_slice(first.handle());
        bytes[9 + HANDLE_BYTES..].copy_from_slice(second.handle());
    }
    bytes
}

/// The neighbour's buffers that `offer` names, mapped on `device`; `None`
/// where nothing is offered, the length is not `len` or a mapping fails.
fn open_pair<T: Copy + Send + 'static>(
    device: &dyn DeviceGrids<T>,
    offer: &[u8],
    len: usize,
) -> Option<[Shared<T>; 2]> {
    if offer.len() != OFFER_BYTES || offer[0] != 1 {
        return None;
    }
    let offered = u64::from_le_bytes(offer[1..9].try_into().ok()?);
    if offered != len as u64 {
        return None;
    }
    let handle = |k: usize| -> Option<[u8; HANDLE_BYTES]> {
        offer[9 + k * HANDLE_BYTES..9 + (k + 1) * HANDLE_BYTES]
            .try_into()
            .ok()
    };
    // SAFETY: the handles come from the neighbour's `export_pair` of `len`
    // values of `T` (the same stencil's session on this node), which it
    // frees only after `release`, where this rank unmapped them first.
    unsafe {
        Some([
            device.open(&handle(0)?, len)?,
            device.open(&handle(1)?, len)?,
        ])
    }
}

/// Sends `messages[side]` to the neighbour of each side of axis `a` that
/// `neighbours` names and returns what each sent back (empty for a side
/// without one), tagged as the halos are.
fn swap<C: Communicator>(
    comm: &C,
    a: usize,
    neighbours: &[Option<usize>; 2],
    messages: &[Vec<u8>; 2],
) -> [Vec<u8>; 2] {
    let mut received = [0, 1].map(|side| vec![0u8; messages[side].len()]);
    let [r0, r1] = &mut received;
    let outbound = [&messages[0][..], &messages[1][..]];
    exchange::both_sides(comm, a, *neighbours, outbound, [&mut r0[..], &mut r1[..]]);
    for side in 0..2 {
        if neighbours[side].is_none() {
            received[side].clear();
        }
    }
    received
}
