//! Distributed sessions under `mpirun` with 1, 2, 3, 4 and 6 ranks (1, 2
//! and 4 on the emulated device), every process grid each allows
//! (`mpi-check`), against one domain and the reference. Needs the feature `mpi` and an MPI's `mpirun` on the PATH;
//! with `cuda` (or `gpu-on-cpu`, its emulated device) the boxes step on the
//! device.

#![cfg(feature = "mpi")]

use std::process::Command;

#[test]
fn distributed_runs_equal_one_domain_for_every_rank_count() {
    // On the emulated device (each GPU thread a fiber) 1, 2 and 4 ranks: 3
    // and 6 add no path of the device's, and most of the run's time.
    let counts: &[usize] = if cfg!(feature = "gpu-on-cpu") {
        &[1, 2, 4]
    } else {
        &[1, 2, 3, 4, 6]
    };
    for &ranks in counts {
        let out = Command::new("mpirun")
            .args([
                "--allow-run-as-root",
                "--oversubscribe",
                "-np",
                &ranks.to_string(),
            ])
            .arg(env!("CARGO_BIN_EXE_mpi-check"))
            .env("OMP_NUM_THREADS", "1")
            .output()
            .expect("mpirun runs (an MPI installed: libopenmpi-dev openmpi-bin)");
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(out.status.success(), "{ranks} ranks:\n{text}");
        assert!(text.contains("0 failed"), "{ranks} ranks:\n{text}");
        // With a GPU backend, the boxes stay on its device between steps.
        let place = if cfg!(feature = "cuda") {
            "boxes kept on the device"
        } else {
            "boxes on the host"
        };
        assert!(text.contains(place), "{ranks} ranks:\n{text}");
        // On a device, splits of the slowest axis alone step their interior while the
        // halos travel; on the host, none.
        let none = text.contains("; 0 stepped their interior");
        assert_eq!(
            none,
            ranks == 1 || !cfg!(feature = "cuda"),
            "{ranks} ranks:\n{text}"
        );
        // On a device, ranks of one node (here, all) send their halos device to device.
        let host_halos = text.contains("; 0 sent halos device to device");
        assert_eq!(
            host_halos,
            ranks == 1 || !cfg!(feature = "cuda"),
            "{ranks} ranks:\n{text}"
        );
        // On the emulated device, device buffers handed to MPI (any MPI reads them there).
        let host_mpi = text.contains("; 0 handed device buffers to MPI");
        assert_eq!(
            host_mpi,
            ranks == 1 || !cfg!(feature = "gpu-on-cpu"),
            "{ranks} ranks:\n{text}"
        );
        println!("{}", text.trim());
    }
}
