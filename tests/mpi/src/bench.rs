//! `mpi-bench`: times a distributed session under `mpirun` and prints, from
//! rank 0, one JSON line: GCells/s over every rank, and the slowest rank's
//! time in halo exchanges and in its box's steps.
//!
//! `mpirun -np 4 -x OMP_NUM_THREADS=4 mpi-bench j3d7pt 512,512,512 [STEPS] [STEPS_AN_EXCHANGE] [DIMS] [overlap|serial] [device|host]`
//! (`DIMS`: processes per axis, `4,1,1`, or `auto`; on a GPU, `serial`
//! exchanges the halos before stepping the box, `overlap`, the default,
//! steps its interior while they travel where it can; `host` sends the
//! halos of ranks of one node through MPI and the host, `device`, the
//! default, device to device where it can.)
//! (`j3d7pt` f64, `acoustic25` f32, as the suite's specs; `j3d7pt_f32`; `heat2d`.)

use stencil_mpi_tests as tests;
use stencil_rt::distributed::{Options, Session, Stencil};
use stencil_rt::distributed_stencil;
use stencil_rt::mpi;
use stencil_rt::mpi::collective::{CommunicatorCollectives, SystemOperation};
use stencil_rt::mpi::datatype::Equivalence;
use stencil_rt::mpi::topology::Communicator;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let universe = mpi::initialize().ok_or("MPI initializes once")?;
    let world = universe.world();
    let args: Vec<String> = std::env::args().collect();
    let usage = "mpi-bench STENCIL SHAPE (e.g. 512,512,512) [STEPS] [STEPS_AN_EXCHANGE] [DIMS|auto] [overlap|serial] [device|host]";
    let (name, shape) = (args.get(1).ok_or(usage)?, args.get(2).ok_or(usage)?);
    let shape: Vec<usize> = shape.split(',').map(str::parse).collect::<Result<_, _>>()?;
    let steps: u64 = args.get(3).map_or(Ok(20), |s| s.parse())?;
    let k: u64 = args.get(4).map_or(Ok(1), |s| s.parse())?;
    let dims: Option<Vec<usize>> = match args.get(5).map(String::as_str) {
        None | Some("auto") => None,
        Some(d) => Some(d.split(',').map(str::parse).collect::<Result<_, _>>()?),
    };
    let options = Options {
        dims,
        steps_per_exchange: k,
        overlap: args.get(6).is_none_or(|o| o != "serial"),
        device_halos: args.get(7).is_none_or(|o| o != "host"),
        ..Options::default()
    };
    let line = match name.as_str() {
        "j3d7pt" => bench(
            &world,
            distributed_stencil!(tests::j3d7pt),
            &shape,
            steps,
            options.clone(),
        )?,
        "j3d7pt_f32" => bench(
            &world,
            distributed_stencil!(tests::j3d7pt_f32),
            &shape,
            steps,
            options.clone(),
        )?,
        "acoustic25" => bench(
            &world,
            distributed_stencil!(tests::acoustic25),
            &shape,
            steps,
            options.clone(),
        )?,
        "heat2d" => bench(
            &world,
            distributed_stencil!(tests::heat2d),
            &shape,
            steps,
            options.clone(),
        )?,
        _ => return Err(format!("no stencil `{name}` here: {usage}").into()),
    };
    if world.rank() == 0 {
        println!("{line}");
    }
    Ok(())
}

/// Runs `steps` steps (after one exchange's to warm up) and returns the JSON line.
fn bench<C: Communicator, T: Equivalence + Copy + Default + Send + Sync + From<f32>>(
    comm: &C,
    stencil: Stencil<T>,
    shape: &[usize],
    steps: u64,
    options: Options,
) -> Result<String, Box<dyn std::error::Error>> {
    let k = options.steps_per_exchange;
    let mut session = Session::new(comm, stencil, shape, options)?;
    // Each rank fills its own box: no global grid on one rank.
    for grid in session.grids_mut()? {
        for (i, v) in grid.iter_mut().enumerate() {
            *v = T::from(0.001 * (i % 97) as f32);
        }
    }
    session.set_params(&vec![T::from(0.05); stencil.params.len()])?;
    session.step(k)?;
    let warm = session.timings();
    comm.barrier();
    let start = std::time::Instant::now();
    session.step(steps)?;
    comm.barrier();
    let seconds = start.elapsed().as_secs_f64();
    let t = session.timings();
    let mine = [
        (t.exchange - warm.exchange).as_secs_f64(),
        (t.compute - warm.compute).as_secs_f64(),
    ];
    let mut slowest = [0.0f64; 2];
    comm.all_reduce_into(&mine[..], &mut slowest[..], SystemOperation::max());
    let cells: usize = shape.iter().product();
    let threads = std::env::var("OMP_NUM_THREADS").unwrap_or_default();
    Ok(format!(
        "{{\"stencil\": \"{}\", \"shape\": {shape:?}, \"ranks\": {}, \"dims\": {:?}, \"threads\": \"{threads}\", \"steps\": {steps}, \"steps_an_exchange\": {k}, \"device\": {}, \"overlaps\": {}, \"device_sides\": {}, \"seconds\": {seconds:.4}, \"gcells_per_s\": {:.3}, \"exchange_s\": {:.4}, \"compute_s\": {:.4}}}",
        stencil.name,
        comm.size(),
        session.layout().dims,
        session.on_device(),
        session.overlaps(),
        session.device_sides(),
        cells as f64 * steps as f64 / seconds / 1e9,
        slowest[0],
        slowest[1],
    ))
}
