//! `Fusion::Measure`'s trial ([`Trial`]), driven with launches that sleep
//! instead of running kernels: which way it keeps, and after how many parts.
//! No device is needed.

use std::time::Duration;
use stencil_rt::StencilError;
use stencil_rt::gpu::{Fusion, Measurement, Trial};

/// Steps a launch of several steps fuses, as a `temporal` plan's time block.
const SPAN: u64 = 4;

/// Runs a trial to its decision with launches that sleep `fused` (a fused
/// launch) or `single` (one step), the first `slow` single steps `late`
/// longer. Returns the decision, the parts and the steps run.
fn decide(fused: Duration, single: Duration, late: Duration, slow: usize) -> (Fusion, u32, u64) {
    decide_in_graphs(fused, single, late, slow, 1)
}

/// [`decide`] for a session that replays runs of `graph` launches as graphs
/// (as the launches do not: each sleeps as long).
fn decide_in_graphs(
    fused: Duration,
    single: Duration,
    late: Duration,
    slow: usize,
    graph: u64,
) -> (Fusion, u32, u64) {
    let mut trial = Trial::default();
    let mut singles = 0;
    let mut run = |steps: u64, each: u64| {
        assert_eq!(steps % each, 0, "{steps} steps in launches of {each}");
        for _ in 0..steps / each {
            let took = if each > 1 {
                fused
            } else {
                singles += 1;
                if singles <= slow {
                    single + late
                } else {
                    single
                }
            };
            // A launch of no time returns at once: `sleep` of zero still
            // enters the kernel and, on a loaded machine, can come back late
            // enough to make a quick part slow.
            if !took.is_zero() {
                std::thread::sleep(took);
            }
        }
        Ok::<_, StencilError>(())
    };
    let wait = || Ok(());
    let (mut parts, mut steps) = (0, 0);
    loop {
        let next = trial.steps(SPAN);
        let (ran, measured) = trial.next(SPAN, graph, &mut run, &wait).unwrap();
        assert_eq!(ran, next);
        parts += 1;
        steps += ran;
        if let Some(m) = measured {
            // A timed part ran `m.steps` steps (the last cycle's), and no faster than they sleep.
            assert_eq!(m.steps, ran);
            assert!(m.steps == SPAN || m.steps == SPAN * graph, "{m:?}");
            let launches = u32::try_from(m.steps / SPAN).unwrap();
            assert!(m.fused >= fused * launches, "{m:?}");
            assert!(m.single >= single * launches * SPAN as u32, "{m:?}");
            return (m.faster(), parts, steps);
        }
        assert!(parts < 100, "no decision after {parts} parts");
    }
}

/// `n` tenths of a millisecond.
const fn tenths(n: u64) -> Duration {
    Duration::from_micros(n * 100)
}

#[test]
fn the_trial_keeps_the_faster_way() {
    // A fused launch of 4 steps in 0.8 ms against 4 single steps in 1.6 ms, and the reverse.
    assert_eq!(
        decide(tenths(8), tenths(4), Duration::ZERO, 0).0,
        Fusion::Fused
    );
    assert_eq!(
        decide(tenths(16), tenths(2), Duration::ZERO, 0).0,
        Fusion::Single
    );
    // Single steps 1% faster: not by the 2% they need.
    assert_eq!(
        decide(tenths(20), Duration::from_micros(495), Duration::ZERO, 0).0,
        Fusion::Fused
    );
}

#[test]
fn a_part_slowed_down_does_not_decide() {
    // Single steps twice as fast (4 in 4 ms against a fused launch in 8 ms), but the first 17
    // (the warm-up step and the first two cycles') take 2.5 ms more each: parts of 14 ms, not
    // twice the fused launches' 8 ms, so the first cycle does not end the trial. Summed over
    // the 4 cycles, fused launches would have won (64 ms against 72 ms); the fastest parts
    // say single steps.
    let ms = Duration::from_millis;
    assert_eq!(
        decide(ms(8), ms(1), Duration::from_micros(2500), 17).0,
        Fusion::Single
    );
}

#[test]
fn the_trial_runs_its_fewest_cycles_where_they_take_long_enough() {
    // Every timed part takes at least 0.4 ms: 4 cycles of 4 parts pass `SPENT` (1 ms), and
    // neither way is twice as fast.
    let (_, parts, steps) = decide(tenths(4), tenths(1), Duration::ZERO, 0);
    assert_eq!(Trial::CYCLES, 4);
    assert_eq!(parts, 2 + 4 * 4);
    assert_eq!(steps, SPAN + 1 + 4 * 4 * SPAN);
}

#[test]
fn the_trial_ends_sooner_where_one_way_is_twice_as_fast() {
    // A fused launch of 4 steps in 0.2 ms against 4 single steps in 1.2 ms, the first cycle's
    // parts 2.8 ms in all: one cycle.
    let (fusion, parts, steps) = decide(tenths(2), tenths(3), Duration::ZERO, 0);
    assert_eq!(fusion, Fusion::Fused);
    assert_eq!(Trial::CLEAR_CYCLES, 1);
    assert_eq!(parts, 2 + 4);
    assert_eq!(steps, SPAN + 1 + 4 * SPAN);
}

#[test]
fn the_trial_runs_its_most_cycles_where_parts_are_quick() {
    // Launches that return at once: the timed parts never add up to `SPENT`.
    let (_, parts, steps) = decide(Duration::ZERO, Duration::ZERO, Duration::ZERO, 0);
    assert!(Trial::SPENT >= Duration::from_millis(1));
    assert_eq!(parts, 2 + 4 * Trial::MOST_CYCLES);
    assert_eq!(steps, SPAN + 1 + 4 * u64::from(Trial::MOST_CYCLES) * SPAN);
}

#[test]
fn quick_single_steps_are_timed_again_in_whole_graphs() {
    // Launches that return at once, in a session that replays graphs of 48: after the first
    // cycle of `SPAN`-step parts, the cycles start again with parts of 48 launches each way.
    let (_, parts, steps) = decide_in_graphs(Duration::ZERO, Duration::ZERO, Duration::ZERO, 0, 48);
    assert!(Trial::QUICK >= Duration::from_micros(20));
    assert_eq!(parts, 2 + 4 + 4 * Trial::MOST_CYCLES);
    assert_eq!(
        steps,
        SPAN + 1 + 4 * SPAN + 4 * u64::from(Trial::MOST_CYCLES) * SPAN * 48
    );
    // Single steps of 0.1 ms, over `QUICK`: the parts stay `SPAN` steps.
    let (_, parts, steps) = decide_in_graphs(tenths(4), tenths(1), Duration::ZERO, 0, 48);
    assert_eq!(parts, 2 + 4 * 4);
    assert_eq!(steps, SPAN + 1 + 4 * 4 * SPAN);
}

#[test]
fn the_measurement_keeps_single_steps_only_where_they_are_2_percent_faster() {
    let m = |fused, single| Measurement {
        steps: SPAN,
        fused: Duration::from_micros(fused),
        single: Duration::from_micros(single),
    };
    assert_eq!(m(1000, 979).faster(), Fusion::Single);
    assert_eq!(m(1000, 980).faster(), Fusion::Fused);
    assert_eq!(m(1000, 990).faster(), Fusion::Fused);
    assert_eq!(m(1000, 2000).faster(), Fusion::Fused);
}
