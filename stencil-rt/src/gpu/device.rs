//! Which device a session runs on ([`Device`]) and the plans a stencil's
//! GPU module carries for devices ([`Plan`], [`Tuned`]): the spec's own
//! plan, and one for each device a tuning file lists. A session picks the
//! plan tuned for its device, else the spec's own ([`Plan::pick`]).

use std::ffi::CStr;
use std::os::raw::{c_char, c_int};
use std::sync::Mutex;

use super::{GpuTiling, Runtime, check};
use crate::StencilError;

/// A GPU as a tuning file names it: the runtime's device name (`NVIDIA
/// H200`) and its architecture (`sm_90`, or a `gfx` target such as
/// `gfx90a` on HIP).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    /// The runtime's name of the device.
    pub name: String,
    /// Its architecture: `sm_<major><minor>` (CUDA), the `gfx` target (HIP).
    pub arch: String,
}

/// Devices already asked for, per runtime and device index: the properties
/// query takes about a millisecond, and a session asks at every `new`.
static KNOWN: Mutex<Vec<(&'static str, c_int, Device)>> = Mutex::new(Vec::new());

impl Device {
    /// A device of this name and architecture: to pick the plan another
    /// device would run (`Session::for_device`).
    pub fn new(name: impl Into<String>, arch: impl Into<String>) -> Self {
        Device {
            name: name.into(),
            arch: arch.into(),
        }
    }

    /// The calling thread's current device of runtime `R`, asked once per
    /// device and process.
    pub fn current<R: Runtime>() -> Result<Device, StencilError> {
        let mut index: c_int = 0;
        // SAFETY: writes one int.
        check::<R>("", "device_index", unsafe {
            (R::CALLS.device_index)(&mut index)
        })?;
        let known = |list: &[(&str, c_int, Device)]| {
            list.iter()
                .find(|(backend, i, _)| *backend == R::BACKEND && *i == index)
                .map(|(_, _, d)| d.clone())
        };
        if let Some(device) = known(&KNOWN.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(device);
        }
        let mut name = [0 as c_char; 256];
        let mut arch = [0 as c_char; 64];
        // SAFETY: each buffer is as long as the length passed with it; the
        // call writes a NUL-terminated string of at most that length into each.
        check::<R>("", "device_identity", unsafe {
            (R::CALLS.device_identity)(
                index,
                name.as_mut_ptr(),
                name.len() as c_int,
                arch.as_mut_ptr(),
                arch.len() as c_int,
            )
        })?;
        let text = |buf: &[c_char]| {
            // SAFETY: NUL-terminated within the buffer by the callee.
            unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .trim()
                .to_string()
        };
        let device = Device::new(text(&name), text(&arch));
        let mut list = KNOWN.lock().unwrap_or_else(|e| e.into_inner());
        if known(&list).is_none() {
            list.push((R::BACKEND, index, device.clone()));
        }
        Ok(device)
    }
}

impl std::fmt::Display for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name, self.arch)
    }
}

/// A plan a stencil's GPU module carries (its `PLANS`, the spec's own
/// first): the tiling its kernels were compiled for, and for a plan from a
/// tuning file, the device and measurement it came from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan {
    /// The tiling compiled into this plan's kernels.
    pub tiling: GpuTiling,
    /// Where it was tuned; `None` for the spec's own plan (`auto`'s where
    /// the spec names no strategy).
    pub tuned: Option<Tuned>,
}

/// Where and how a tuned plan was measured, as its tuning file says.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tuned {
    /// The device's name.
    pub device: &'static str,
    /// The device's architecture.
    pub arch: &'static str,
    /// The grid it was timed on.
    pub shape: &'static [usize],
    /// The steps of each timed run.
    pub steps: u64,
    /// Cells updated per second there, in billions.
    pub gcells: f64,
    /// The spec's own plan there, in billions of cells per second.
    pub own_gcells: f64,
    /// When it was measured (`YYYY-MM-DD`).
    pub date: &'static str,
}

impl Plan {
    /// Whether this plan was tuned for `device` (same name and architecture).
    pub fn is_for(&self, device: &Device) -> bool {
        self.tuned
            .is_some_and(|t| t.device == device.name && t.arch == device.arch)
    }

    /// The index in `plans` of the first plan tuned for `device`, else 0:
    /// the spec's own, which a module lists first.
    pub fn pick(plans: &[Plan], device: &Device) -> usize {
        plans.iter().position(|p| p.is_for(device)).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TILING: GpuTiling = GpuTiling {
        strategy: "naive",
        block: &[8, 32],
        chunk: 1,
        coarsen: 1,
        vector: 1,
        time_block: 1,
        occupancy: None,
        small_grids: false,
        small_steps: false,
    };

    fn tuned(device: &'static str, arch: &'static str) -> Plan {
        Plan {
            tiling: GpuTiling {
                strategy: "stream",
                ..TILING
            },
            tuned: Some(Tuned {
                device,
                arch,
                shape: &[4096, 4096],
                steps: 100,
                gcells: 2.0,
                own_gcells: 1.0,
                date: "2026-12-02",
            }),
        }
    }

    #[test]
    fn a_device_gets_its_own_tuned_plan_else_the_first() {
        let own = Plan {
            tiling: TILING,
            tuned: None,
        };
        let plans = [
            own,
            tuned("NVIDIA H100 80GB HBM3", "sm_90"),
            tuned("NVIDIA H200", "sm_90"),
        ];
        let h200 = Device::new("NVIDIA H200", "sm_90");
        assert_eq!(Plan::pick(&plans, &h200), 2);
        assert!(plans[2].is_for(&h200));
        // The name and the architecture must both match.
        assert_eq!(Plan::pick(&plans, &Device::new("NVIDIA H200", "sm_80")), 0);
        assert_eq!(Plan::pick(&plans, &Device::new("NVIDIA A100", "sm_80")), 0);
        assert_eq!(Plan::pick(&[own], &h200), 0);
        assert_eq!(h200.to_string(), "NVIDIA H200 (sm_90)");
    }
}
