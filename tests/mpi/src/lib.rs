//! The stencils the distributed sessions are tested on (see `build.rs`):
//! fixed boundaries of 1 to 3 axes, a leapfrog with an input grid and an
//! uneven reach, three statements through a temporary, a box; and in
//! `stencils/` a coefficient grid read off the cell and periodic stencils
//! in 2-D and 3-D; a mixed boundary and regions, which a session refuses;
//! and for `mpi-bench`, the suite's j3d7pt (f64) and acoustic25 (f32), and
//! j3d7pt in f32.

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));
