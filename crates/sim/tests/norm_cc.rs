//! Issue 62's NORM-CC (RFC 5740 §5.5.2) end to end in the simulator:
//! `scenarios/examples/norm-cc.toml` (norm from a saturated source to 20 receivers behind a
//! 10 Mbit/s dumbbell bottleneck with a 50-packet drop-tail queue), once without and once with
//! NORM-CC, on the same seed: with it every receiver holds every segment, the bottleneck drops
//! far fewer packets, and the sender's rate settles near the bottleneck's.

use rmcast_sim::scenario::{run_sweep, Metric, RunOptions, RunResult, Scenario};
use std::path::{Path, PathBuf};

/// The example's bottleneck, bytes per second.
const BOTTLENECK: f64 = 10e6 / 8.0;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/norm-cc.toml")
}

fn count(r: &RunResult, name: &str) -> u64 {
    match r.column(name) {
        Some(Metric::U(v)) => *v,
        other => panic!("{name}: {other:?}"),
    }
}

fn real(r: &RunResult, name: &str) -> f64 {
    match r.column(name) {
        Some(Metric::F(v)) => *v,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn with_norm_cc_every_receiver_completes_sooner_with_far_fewer_drops_near_the_bottleneck() {
    let sc = Scenario::load(&example()).unwrap();
    let runs = run_sweep(&sc, RunOptions::default(), &|| {}).unwrap();
    assert_eq!(runs.len(), 2);
    let (off, on) = (&runs[0], &runs[1]);
    assert_eq!(off.column("protocol.cc"), Some(&Metric::B(false)));
    assert_eq!(on.column("protocol.cc"), Some(&Metric::B(true)));
    assert_eq!(on.column("completed"), Some(&Metric::B(true)));
    assert_eq!(count(on, "delivered_min"), 3200);

    // Without NORM-CC the burst overflows the bottleneck's queue, and the repairs too.
    let (drops_off, drops_on) = (
        count(off, "lost_queue_overflow"),
        count(on, "lost_queue_overflow"),
    );
    assert!(drops_off > 10_000, "drops without NORM-CC: {drops_off}");
    assert!(
        20 * drops_on < drops_off,
        "drops: {drops_on} with NORM-CC, {drops_off} without"
    );
    assert!(10 * count(on, "originated_repair") < count(off, "originated_repair"));
    let (t_off, t_on) = (real(off, "last_delivery_s"), real(on, "last_delivery_s"));
    assert!(
        t_on < t_off,
        "last delivery {t_on} s with, {t_off} s without"
    );

    // What the slowest receiver got over the last second of the transfer: near the link.
    let end = t_on;
    let at = |t: f64| {
        on.samples
            .iter()
            .rev()
            .find(|s| s.time_s <= t)
            .map_or(0, |s| s.received_bytes_min)
    };
    let got = (at(end) - at(end - 1.0)) as f64;
    assert!(
        (0.5 * BOTTLENECK..1.01 * BOTTLENECK).contains(&got),
        "received {got} B/s over the last second, bottleneck {BOTTLENECK} B/s"
    );
    let rate = on
        .samples
        .iter()
        .rev()
        .find(|s| s.time_s < end)
        .and_then(|s| s.source_rate)
        .expect("the NORM-CC sender's rate gauge");
    assert!(
        (0.5 * BOTTLENECK..1.5 * BOTTLENECK).contains(&rate),
        "rate {rate} B/s at the end, bottleneck {BOTTLENECK} B/s"
    );
    assert!(off.samples.iter().all(|s| s.source_rate.is_none()));
}

#[test]
fn the_same_seed_gives_the_same_runs() {
    let text = std::fs::read_to_string(example())
        .unwrap()
        .replace("cc = [false, true]", "cc = true")
        .replace("messages = 3200", "messages = 640");
    let sc = Scenario::parse(&text, "norm-cc.toml", PathBuf::from(".")).unwrap();
    let run = || run_sweep(&sc, RunOptions::default(), &|| {}).unwrap();
    let (a, b) = (run(), run());
    assert_eq!(a[0].columns, b[0].columns);
    assert_eq!(a[0].samples, b[0].samples);
}
