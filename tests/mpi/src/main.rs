//! `mpi-check`: under `mpirun -np N`, runs every test stencil over every
//! process grid of N ranks that its axes allow, one and three steps an
//! exchange, split by uneven weights (each rank then filling its own
//! box) and by the ranks' measured speeds, on odd global shapes of random values, and compares what rank
//! 0 gathers with the same steps on one domain and with the reference.
//! On a device, the even splits' ranks (all on one node) send their halos
//! device to device; the splits by weights through host memory; those by
//! measured speeds hand device buffers to MPI (on the emulated device;
//! where the MPI says it takes them on a real one).
//! Exits 1 where a cell differs by more than the tolerance, or a session
//! fails otherwise than by a rank too small for its halo, or a mixed
//! boundary or regions are not refused.

use std::sync::atomic::{AtomicUsize, Ordering};

use stencil_mpi_tests as tests;
use stencil_rt::distributed::{
    DeviceChoice, DeviceMpi, DistributedError, Options, Session, Split, Stencil, factorizations,
};
use stencil_rt::distributed_stencil;
use stencil_rt::host::Workspace;
use stencil_rt::mpi::topology::Communicator;
use stencil_rt::{StencilError, mpi};

/// A generated `run_grids`.
type Run = fn(&mut [&mut [f64]], &[usize], &[f64], u64) -> Result<(), StencilError>;

/// Each test stencil, its reference's `run_grids` and the global shape it runs on.
fn cases() -> Vec<(Stencil<f64>, Run, Vec<usize>)> {
    vec![
        (
            distributed_stencil!(tests::heat2d),
            tests::heat2d::reference::run_grids,
            vec![61, 47],
        ),
        (
            distributed_stencil!(tests::coupled2d),
            tests::coupled2d::reference::run_grids,
            vec![53, 59],
        ),
        (
            distributed_stencil!(tests::leapfrog3d),
            tests::leapfrog3d::reference::run_grids,
            vec![31, 25, 37],
        ),
        (
            distributed_stencil!(tests::boxsum3d),
            tests::boxsum3d::reference::run_grids,
            vec![27, 29, 23],
        ),
        (
            distributed_stencil!(tests::line1d),
            tests::line1d::reference::run_grids,
            vec![211],
        ),
        (
            distributed_stencil!(tests::varcoef2d),
            tests::varcoef2d::reference::run_grids,
            vec![41, 37],
        ),
        (
            distributed_stencil!(tests::periodic2d),
            tests::periodic2d::reference::run_grids,
            vec![43, 51],
        ),
        (
            distributed_stencil!(tests::wave3p),
            tests::wave3p::reference::run_grids,
            vec![25, 29, 33],
        ),
    ]
}

/// Runs whose boxes stepped their interior while the halos travelled.
static OVERLAPPED: AtomicUsize = AtomicUsize::new(0);
/// Runs whose rank 0 sent its halos device to device.
static DEVICE_HALOS: AtomicUsize = AtomicUsize::new(0);
/// Runs whose rank 0 handed device buffers to MPI.
static DEVICE_MPI: AtomicUsize = AtomicUsize::new(0);

/// Steps a run; steps an exchange.
const STEPS: u64 = 7;
const EXCHANGES: [u64; 2] = [1, 3];

fn main() {
    let universe = mpi::initialize().expect("MPI initializes once");
    let world = universe.world();
    let root = world.rank() == 0;
    let mut failures = 0;
    let mut checked = 0;
    for (stencil, reference, shape) in cases() {
        let size = world.size() as usize;
        // Even splits, splits by weights as unlike ranks would have them,
        // and by the ranks' measured speeds.
        let uneven: Vec<f64> = (0..size).map(|r| (1 + r % 3) as f64).collect();
        for dims in factorizations(size, shape.len()) {
            for (k, split) in EXCHANGES.map(|k| (k, Split::Even)).into_iter().chain([
                (1, Split::Weights(uneven.clone())),
                (2, Split::Measured { steps: 2 }),
            ]) {
                let options = Options {
                    dims: Some(dims.clone()),
                    steps_per_exchange: k,
                    device_halos: split == Split::Even,
                    device_mpi: device_mpi(&split),
                    split,
                    ..Options::default()
                };
                match check(&world, stencil, reference, &shape, options) {
                    Ok(Some(error)) if error <= tolerance(&stencil) => checked += 1,
                    Ok(Some(error)) => {
                        failures += 1;
                        eprintln!(
                            "{} {shape:?} over {dims:?}, {k} steps an exchange: off by {error:e}",
                            stencil.name
                        );
                    }
                    Ok(None) => checked += 1,
                    Err(DistributedError::TooSmall { .. }) => {}
                    Err(e) => {
                        failures += 1;
                        eprintln!("{} over {dims:?}: {e}", stencil.name);
                    }
                }
            }
        }
    }
    failures += refusals(&world);
    if root {
        let place = match cases()[0].0.device {
            Some(_) => "boxes kept on the device",
            None => "boxes on the host",
        };
        println!(
            "{checked} distributed runs over {} ranks checked ({place}; {} stepped their interior while the halos travelled; {} sent halos device to device; {} handed device buffers to MPI), {failures} failed",
            world.size(),
            OVERLAPPED.load(Ordering::Relaxed),
            DEVICE_HALOS.load(Ordering::Relaxed),
            DEVICE_MPI.load(Ordering::Relaxed)
        );
    }
    let code = i32::from(failures > 0 || checked == 0);
    // MPI finalizes as the universe drops, which an exit would skip.
    drop(world);
    drop(universe);
    std::process::exit(code);
}

/// How MPI takes the halos of runs that do not send them device to device
/// (on a device: the splits but the even ones): by weights, through host
/// memory; by measured speeds, device buffers handed to MPI where the
/// device is the emulated one, whose memory any MPI reads, and as the MPI
/// says on a real one.
fn device_mpi(split: &Split) -> DeviceMpi {
    match split {
        Split::Measured { .. } if cfg!(feature = "gpu-on-cpu") => DeviceMpi::On,
        Split::Measured { .. } => DeviceMpi::Detect,
        _ => DeviceMpi::Off,
    }
}

/// Runs one case; rank 0 returns the largest relative difference from the
/// single domain and from the reference, the others `None`.
fn check<C: Communicator>(
    comm: &C,
    stencil: Stencil<f64>,
    reference: Run,
    shape: &[usize],
    options: Options,
) -> Result<Option<f64>, DistributedError> {
    let cells: usize = shape.iter().product();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64 ^ cells as u64;
    let grids: Vec<Vec<f64>> = stencil
        .grids
        .iter()
        .map(|_| random(&mut seed, cells))
        .collect();
    let params: Vec<f64> = random(&mut seed, stencil.params.len())
        .iter()
        .map(|p| 0.1 * p)
        .collect();
    let options_fill_boxes = matches!(options.split, Split::Weights(_));
    let (device_halos, device_mpi) = (options.device_halos, options.device_mpi);
    let even = options.split == Split::Even;
    let mut session = Session::new(comm, stencil, shape, options)?;
    let weighed = (session.weights()).is_some_and(|w| w.len() == comm.size() as usize);
    if even == weighed {
        return Err(DistributedError::Arguments {
            what: format!("a split by weights has {:?}", session.weights()),
        });
    }
    let root = comm.rank() == 0;
    session.set_params(&params)?;
    // Uneven splits fill each rank's box itself (`grids_mut`, as a rank
    // reading its part of a file would; every rank drew the same grids),
    // after a step of the zeroed boxes, so that the input grids' halos
    // must be exchanged again; the others through a scatter from rank 0.
    let mut steps = STEPS;
    if options_fill_boxes {
        session.step(1)?;
        fill_owned(&mut session, &grids)?;
        steps += 1;
    } else {
        let views: Vec<&[f64]> = grids.iter().map(|g| &g[..]).collect();
        session.scatter(0, root.then_some(&views[..]))?;
    }
    session.step(STEPS)?;
    reported(&session, steps, (device_halos, device_mpi))?;
    if !root {
        session.gather(0, None)?;
        return Ok(None);
    }
    let mut gathered = grids.clone();
    let mut views: Vec<&mut [f64]> = gathered.iter_mut().map(|g| &mut g[..]).collect();
    session.gather(0, Some(&mut views))?;
    let single = |backend: bool| -> Result<Vec<Vec<f64>>, StencilError> {
        let mut single = grids.clone();
        let mut views: Vec<&mut [f64]> = single.iter_mut().map(|g| &mut g[..]).collect();
        match backend {
            true => (stencil.run)(&mut Workspace::new(), &mut views, shape, &params, STEPS)?,
            false => reference(&mut views, shape, &params, STEPS)?,
        }
        Ok(single)
    };
    let mut error: f64 = 0.0;
    for backend in [true, false] {
        for (a, b) in gathered
            .iter()
            .flatten()
            .zip(single(backend)?.iter().flatten())
        {
            error = error.max((a - b).abs() / (1.0 + b.abs()));
        }
    }
    Ok(Some(error))
}

/// Checks what `session` reports after `steps` steps against the options
/// it was made with (`device_halos`, `device_mpi`), and counts the cases
/// that overlapped, sent halos device to device or handed MPI device
/// buffers.
fn reported<C: Communicator>(
    session: &Session<'_, C, f64>,
    steps: u64,
    (device_halos, device_mpi): (bool, DeviceMpi),
) -> Result<(), DistributedError> {
    let wrong = |what: String| Err(DistributedError::Arguments { what });
    if session.overlaps() {
        OVERLAPPED.fetch_add(1, Ordering::Relaxed);
        let overlapped = session.timings().overlapped;
        if overlapped != steps {
            return wrong(format!("{overlapped} of {steps} steps overlapped"));
        }
    }
    if session.device_sides() > 0 {
        if !device_halos {
            return wrong("halos went device to device, which the options turned off".into());
        }
        DEVICE_HALOS.fetch_add(1, Ordering::Relaxed);
    }
    if session.device_mpi() {
        if device_mpi == DeviceMpi::Off {
            return wrong("MPI was handed device buffers, which the options turned off".into());
        }
        DEVICE_MPI.fetch_add(1, Ordering::Relaxed);
    }
    if session.timings().steps != steps {
        return wrong(format!(
            "timings count {} steps of {steps}",
            session.timings().steps
        ));
    }
    Ok(())
}

/// Copies this rank's owned cells of every global grid into its boxes.
fn fill_owned<C: Communicator>(
    session: &mut Session<'_, C, f64>,
    global: &[Vec<f64>],
) -> Result<(), DistributedError> {
    let layout = session.layout().clone();
    let shape = layout.local_shape();
    let inside = layout.owned_in_box();
    for (boxed, g) in session.grids_mut()?.iter_mut().zip(global) {
        for k in 0..layout.owned_cells() {
            // The k-th owned cell, row-major: its global and box indices.
            let (mut rest, mut at_global, mut at_box) = (k, 0, 0);
            let mut stride = (1, 1);
            for a in (0..shape.len()).rev() {
                let n = layout.owned[a][1] - layout.owned[a][0];
                let c = rest % n;
                rest /= n;
                at_global += (layout.owned[a][0] + c) * stride.0;
                at_box += (inside[a][0] + c) * stride.1;
                stride = (stride.0 * layout.global[a], stride.1 * shape[a]);
            }
            boxed[at_box] = g[at_global];
        }
    }
    Ok(())
}

/// The largest relative difference allowed: a few roundings of each step's
/// flops, as the cross-backend tests allow.
fn tolerance(_stencil: &Stencil<f64>) -> f64 {
    1e-12 * STEPS as f64
}

/// Checks that a mixed boundary and updates in regions are refused by every
/// rank, and a missing device; returns the failures.
fn refusals<C: Communicator>(comm: &C) -> usize {
    let refused = [
        distributed_stencil!(tests::edges2d),
        distributed_stencil!(tests::sponge2d),
    ];
    refused
        .into_iter()
        .filter(|&stencil| {
            let refused = matches!(
                Session::new(comm, stencil, &[32, 32], Options::default()),
                Err(DistributedError::Unsupported { .. })
            );
            if !refused {
                eprintln!("`{}` was not refused", stencil.name);
            }
            !refused
        })
        .count()
        + missing_device(comm)
}

/// With a GPU backend, checks that a device past the node's last is the
/// runtime's error on every rank; returns the failures.
fn missing_device<C: Communicator>(comm: &C) -> usize {
    let stencil = distributed_stencil!(tests::heat2d);
    if stencil.device.is_none() {
        return 0;
    }
    let options = Options {
        device: DeviceChoice::Index(1 << 20),
        ..Options::default()
    };
    match Session::new(comm, stencil, &[32, 32], options) {
        Err(DistributedError::Stencil(StencilError::Device { .. })) => 0,
        Err(e) => {
            eprintln!("a missing device was another error: {e}");
            1
        }
        Ok(_) => {
            eprintln!("a missing device was taken");
            1
        }
    }
}

/// `n` values in [0, 1) from a 64-bit LCG.
fn random(seed: &mut u64, n: usize) -> Vec<f64> {
    (0..n)
        .map(|_| {
            *seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (*seed >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}
