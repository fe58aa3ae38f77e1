//! The stencils the distributed sessions are tested on (see `build.rs`):
//! fixed boundaries of 1 to 3 axes, a leapfrog with an input grid and an
//! uneven reach, three statements through a temporary, a box; and a
//! periodic one (`stencils/`) that a session refuses.

include!(concat!(env!("OUT_DIR"), "/stencils.rs"));
