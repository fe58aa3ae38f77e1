//! The x86-64 instruction-set levels the OpenMP kernels are compiled for,
//! and which one the kernels called from a thread run at.
//!
//! stencil-build compiles each stencil's C once for the build's own target
//! (the features Cargo builds for: on x86-64 without `-C target-cpu`, SSE2)
//! and, where that target lacks them, again for `x86-64-v3` (AVX2 and FMA)
//! and `x86-64-v4` (AVX-512). Each kernel's entry point runs the copy of
//! the level [`isa`] gives: the highest this processor has, at most the
//! cap set on the thread ([`set_max_isa`]) or by `STENCIL_OPENMP_ISA`.

use std::cell::Cell;
use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

/// The environment variable that caps the level of every thread that has
/// not set its own: `baseline`, `x86-64-v3` or `x86-64-v4`.
pub const ISA_VARIABLE: &str = "STENCIL_OPENMP_ISA";

/// An instruction-set level of the OpenMP kernels, lowest first. Levels
/// follow the x86-64 psABI's; other architectures have the baseline only.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Isa {
    /// The build's own target: what Cargo compiles the crate for.
    Baseline = 0,
    /// `x86-64-v3`: AVX2 and FMA (Haswell, Zen and later).
    X86_64V3 = 1,
    /// `x86-64-v4`: AVX-512 (F, BW, CD, DQ, VL; Skylake-X, Zen 4 and later).
    X86_64V4 = 2,
}

impl Isa {
    /// Every level, lowest first.
    pub const ALL: [Isa; 3] = [Isa::Baseline, Isa::X86_64V3, Isa::X86_64V4];

    /// The level's name, as the x86-64 psABI spells it (`baseline` for the
    /// build's target).
    pub const fn name(self) -> &'static str {
        match self {
            Isa::Baseline => "baseline",
            Isa::X86_64V3 => "x86-64-v3",
            Isa::X86_64V4 => "x86-64-v4",
        }
    }

    /// The level's number, as the kernels' entry points take it: 0 for the
    /// baseline, 1 for `x86-64-v3`, 2 for `x86-64-v4`.
    pub const fn code(self) -> std::os::raw::c_int {
        self as std::os::raw::c_int
    }

    /// The target features code of this level may use, by Rust's names
    /// (the C compilers' flags are `-m<feature>`): none for the baseline.
    pub const fn features(self) -> &'static [&'static str] {
        const V3: [&str; 10] = [
            "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx", "avx2", "fma", "f16c", "bmi2",
        ];
        const V4: [&str; 15] = [
            "sse3", "ssse3", "sse4.1", "sse4.2", "popcnt", "avx", "avx2", "fma", "f16c", "bmi2",
            "avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl",
        ];
        match self {
            Isa::Baseline => &[],
            Isa::X86_64V3 => &V3,
            Isa::X86_64V4 => &V4,
        }
    }

    /// Whether this processor (and its operating system, which must save
    /// the wider registers) runs code of this level.
    pub fn supported(self) -> bool {
        self.features().iter().all(|f| has_feature(f) == Some(true))
    }

    /// The highest level this processor runs.
    pub fn detected() -> Isa {
        static DETECTED: OnceLock<Isa> = OnceLock::new();
        *DETECTED.get_or_init(|| {
            Isa::ALL
                .into_iter()
                .rev()
                .find(|isa| isa.supported())
                .unwrap_or(Isa::Baseline)
        })
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Isa {
    type Err = UnknownIsa;

    /// A level by its [`name`](Isa::name), case and `_` for `-` aside.
    fn from_str(s: &str) -> Result<Isa, UnknownIsa> {
        let name = s.trim().to_ascii_lowercase().replace('_', "-");
        Isa::ALL
            .into_iter()
            .find(|isa| isa.name() == name)
            .ok_or_else(|| UnknownIsa(s.to_owned()))
    }
}

/// A name that is no [`Isa`]'s, as [`Isa::from_str`] was given it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownIsa(pub String);

impl fmt::Display for UnknownIsa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown instruction-set level `{}`: write baseline, x86-64-v3 or x86-64-v4",
            self.0
        )
    }
}

impl std::error::Error for UnknownIsa {}

/// Whether the processor has the target feature `name` (Rust's name);
/// `None` for a name this function does not know.
fn has_feature(name: &str) -> Option<bool> {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::is_x86_feature_detected as has;
        Some(match name {
            "sse3" => has!("sse3"),
            "ssse3" => has!("ssse3"),
            "sse4.1" => has!("sse4.1"),
            "sse4.2" => has!("sse4.2"),
            "popcnt" => has!("popcnt"),
            "avx" => has!("avx"),
            "avx2" => has!("avx2"),
            "fma" => has!("fma"),
            "f16c" => has!("f16c"),
            "bmi2" => has!("bmi2"),
            "avx512f" => has!("avx512f"),
            "avx512bw" => has!("avx512bw"),
            "avx512cd" => has!("avx512cd"),
            "avx512dq" => has!("avx512dq"),
            "avx512vl" => has!("avx512vl"),
            _ => return None,
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = name;
        Some(false)
    }
}

thread_local! {
    /// The cap [`set_max_isa`] set on this thread, if any.
    static CAP: Cell<Option<Isa>> = const { Cell::new(None) };
}

/// The cap `STENCIL_OPENMP_ISA` sets, read once: none where it is unset;
/// the baseline where it names no level (a user who sets it asks for less,
/// never more).
fn environment_cap() -> Option<Isa> {
    static CAP: OnceLock<Option<Isa>> = OnceLock::new();
    *CAP.get_or_init(|| {
        let value = std::env::var(ISA_VARIABLE).ok()?;
        Some(value.parse().unwrap_or(Isa::Baseline))
    })
}

/// The level the OpenMP kernels called from this thread run at: the
/// highest this processor has, at most the thread's cap ([`set_max_isa`])
/// or else `STENCIL_OPENMP_ISA`'s. A library compiled without that level
/// (another architecture, MSVC, or a target that has it already) runs the
/// highest it holds below it.
pub fn isa() -> Isa {
    let cap = CAP.with(Cell::get).or_else(environment_cap);
    let detected = Isa::detected();
    cap.map_or(detected, |cap| cap.min(detected))
}

/// Caps the level of the OpenMP kernels called from this thread at `max`
/// (over `STENCIL_OPENMP_ISA`) and returns the level they now run at.
///
/// Levels round differently: from `x86-64-v3` on, the C compilers contract
/// `a * b + c` into one multiply-add. A run that must give the same bits on
/// every x86-64 machine sets [`Isa::Baseline`].
pub fn set_max_isa(max: Isa) -> Isa {
    CAP.with(|cap| cap.set(Some(max)));
    isa()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_parse_by_name() {
        for isa in Isa::ALL {
            assert_eq!(isa.name().parse::<Isa>().unwrap(), isa);
            assert_eq!(isa.to_string(), isa.name());
        }
        assert_eq!("X86_64_V3".parse::<Isa>().unwrap(), Isa::X86_64V3);
        let err = "avx512".parse::<Isa>().unwrap_err().to_string();
        assert!(err.contains("x86-64-v4"), "{err}");
    }

    #[test]
    fn every_feature_of_a_level_is_detected_by_name() {
        for isa in Isa::ALL {
            for f in isa.features() {
                assert!(has_feature(f).is_some(), "{f}");
            }
        }
        assert_eq!(has_feature("avx10"), None);
        // Each level holds the one below it.
        for pair in Isa::ALL.windows(2) {
            assert!(
                pair[0]
                    .features()
                    .iter()
                    .all(|f| pair[1].features().contains(f))
            );
        }
    }

    #[test]
    fn the_baseline_runs_everywhere_and_detection_finds_a_supported_level() {
        assert!(Isa::Baseline.supported());
        let detected = Isa::detected();
        assert!(detected.supported());
        assert!(
            Isa::ALL
                .iter()
                .filter(|&&i| i > detected)
                .all(|i| !i.supported())
        );
    }

    /// `STENCIL_OPENMP_ISA` caps every thread that sets no cap of its own,
    /// and a value that names no level caps at the baseline; the test runs
    /// itself again with the variable set, since it is read once a process.
    #[test]
    fn the_environment_caps_threads_without_a_cap_of_their_own() {
        // The harness names a test by its path below the crate.
        let (_, module) = module_path!().split_once("::").unwrap();
        let name = format!("{module}::the_environment_caps_threads_without_a_cap_of_their_own");
        if let Ok(value) = std::env::var("STENCIL_ISA_TEST_CHILD") {
            assert_eq!(std::env::var(ISA_VARIABLE).as_deref(), Ok(value.as_str()));
            assert_eq!(isa(), Isa::Baseline);
            assert_eq!(std::thread::spawn(isa).join().unwrap(), Isa::Baseline);
            // A thread's own cap is over the variable's.
            assert_eq!(set_max_isa(Isa::X86_64V4), Isa::detected());
            return;
        }
        for value in ["baseline", "avx512"] {
            let exe = std::env::current_exe().unwrap();
            let out = std::process::Command::new(exe)
                .args(["--exact", &name, "--test-threads=1"])
                .env(ISA_VARIABLE, value)
                .env("STENCIL_ISA_TEST_CHILD", value)
                .output()
                .unwrap();
            let printed = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{ISA_VARIABLE}={value}:\n{printed}");
            assert!(printed.contains("1 passed"), "{printed}");
        }
    }

    #[test]
    fn a_cap_holds_on_its_own_thread_only() {
        let detected = Isa::detected();
        assert_eq!(set_max_isa(Isa::Baseline), Isa::Baseline);
        assert_eq!(isa(), Isa::Baseline);
        let other = std::thread::spawn(isa).join().unwrap();
        assert_eq!(
            other,
            environment_cap().map_or(detected, |c| c.min(detected))
        );
        // A cap above the processor's level runs at the processor's.
        assert_eq!(set_max_isa(Isa::X86_64V4), detected);
    }
}
