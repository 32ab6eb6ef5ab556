//! Issue 21's congestion control end to end in the simulator:
//! `scenarios/examples/pgm-tfmcc.toml` (PGM from a saturated source to receivers behind a
//! 10 Mbit/s dumbbell bottleneck with a 50-packet drop-tail queue), once without and once with
//! TFMCC, on the same seed: with TFMCC every receiver holds every packet, the bottleneck drops
//! far fewer packets, and the source's rate settles near the bottleneck's; a constant-rate
//! `[cross]` flow through the same bottleneck takes its share and TFMCC yields the rest.

use rmcast_sim::scenario::{run_sweep, Metric, RunOptions, RunResult, Sample, Scenario};
use std::path::{Path, PathBuf};

/// The example's bottleneck, bytes per second.
const BOTTLENECK: f64 = 10e6 / 8.0;

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/pgm-tfmcc.toml")
}

fn run(text: &str) -> Vec<RunResult> {
    let sc = Scenario::parse(text, "pgm-tfmcc.toml", PathBuf::from(".")).unwrap();
    run_sweep(&sc, RunOptions::default(), &|| {}).unwrap()
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

/// Bytes per second the slowest receiver received between the samples at `from` and `to`
/// seconds (`cross`: the `[cross]` sink instead).
fn received_rate(s: &[Sample], from: f64, to: f64, cross: bool) -> f64 {
    let at = |t: f64| {
        let x = s
            .iter()
            .find(|x| (x.time_s - t).abs() < 1e-9)
            .unwrap_or_else(|| panic!("no sample at {t} s"));
        match cross {
            false => x.received_bytes_min,
            true => x.cross.expect("a [cross] flow").1,
        }
    };
    (at(to) - at(from)) as f64 / (to - from)
}

#[test]
fn the_example_sweeps_tfmcc_off_and_on() {
    let sc = Scenario::load(&example()).unwrap();
    assert_eq!(sc.runs(), 2);
}

#[test]
fn with_tfmcc_every_receiver_completes_with_far_fewer_drops_at_the_rate_of_the_bottleneck() {
    let text = std::fs::read_to_string(example()).unwrap();
    let runs = run(&text);
    assert_eq!(runs.len(), 2);
    let (off, on) = (&runs[0], &runs[1]);
    assert_eq!(off.column("protocol.tfmcc"), Some(&Metric::B(false)));
    assert_eq!(on.column("protocol.tfmcc"), Some(&Metric::B(true)));

    // With TFMCC: every receiver, every packet.
    assert_eq!(on.column("completed"), Some(&Metric::B(true)));
    assert_eq!(count(on, "delivered_min"), 5000);
    // Without it the flood overflows the bottleneck's queue, and the repairs too.
    let (drops_off, drops_on) = (
        count(off, "lost_queue_overflow"),
        count(on, "lost_queue_overflow"),
    );
    assert!(drops_off > 1000, "drops without TFMCC: {drops_off}");
    assert!(
        20 * drops_on < drops_off,
        "drops: {drops_on} with TFMCC, {drops_off} without"
    );
    assert!(count(on, "originated_repair") < count(off, "originated_repair"));

    // The source's rate and what the receivers get near the end of the transfer (after slow
    // start's overshoot and the back-off), within a generous band of the bottleneck.
    let end = real(on, "last_delivery_s");
    let last = on
        .samples
        .iter()
        .rev()
        .find(|s| s.time_s < end)
        .expect("samples during the transfer");
    let rate = last.source_rate.expect("the TFMCC source's rate gauge");
    assert!(
        (0.5 * BOTTLENECK..1.5 * BOTTLENECK).contains(&rate),
        "rate {rate} B/s at {} s, bottleneck {BOTTLENECK} B/s",
        last.time_s
    );
    let t = (last.time_s * 10.0).round() / 10.0;
    let got = received_rate(&on.samples, t - 1.0, t, false);
    assert!(
        (0.5 * BOTTLENECK..1.01 * BOTTLENECK).contains(&got),
        "received {got} B/s over the last second, bottleneck {BOTTLENECK} B/s"
    );
    // Without TFMCC the source has no rate gauge.
    assert!(off.samples.iter().all(|s| s.source_rate.is_none()));
}

#[test]
fn the_same_seed_gives_the_same_runs_and_series() {
    let text = std::fs::read_to_string(example())
        .unwrap()
        .replace("tfmcc = [false, true]", "tfmcc = true")
        .replace("messages = 5000", "messages = 1000");
    let (a, b) = (run(&text), run(&text));
    assert_eq!(a[0].columns, b[0].columns);
    assert_eq!(a[0].samples, b[0].samples);
    assert!(!a[0].samples.is_empty());
}

#[test]
fn tfmcc_yields_to_a_constant_rate_flow_through_the_bottleneck_and_takes_the_rest() {
    // 4 Mbit/s of CBR from 6 s to 10 s between the dumbbell's spare hosts.
    let text = std::fs::read_to_string(example())
        .unwrap()
        .replace("tfmcc = [false, true]", "tfmcc = true")
        .replace("messages = 5000", "messages = 12000")
        .replace(
            "[metrics]",
            "[cross]\nfrom = 3\nto = 4\nmessages = 2000\nsize = 1000\ninterval_ms = 2\n\
             start_ms = 6000\n\n[metrics]",
        );
    let runs = run(&text);
    let r = &runs[0];
    assert_eq!(r.column("completed"), Some(&Metric::B(true)));
    assert_eq!(count(r, "delivered_min"), 12000);
    let s = &r.samples;
    // While both run (the last 3 s of the CBR): the CBR gets what it sends, TFMCC about the
    // rest, and together they fill the bottleneck without exceeding it.
    let (pgm, cbr) = (
        received_rate(s, 7.0, 10.0, false),
        received_rate(s, 7.0, 10.0, true),
    );
    assert!(
        (0.9 * 500e3..1.1 * 500e3).contains(&cbr),
        "CBR {cbr} B/s (sends 500 kB/s)"
    );
    assert!(
        (0.4 * BOTTLENECK..0.9 * BOTTLENECK).contains(&pgm),
        "TFMCC {pgm} B/s beside the CBR"
    );
    assert!(
        pgm + cbr > 0.8 * BOTTLENECK && pgm + cbr < 1.02 * BOTTLENECK,
        "together {} B/s",
        pgm + cbr
    );
    // After the CBR stops, TFMCC takes the bottleneck back.
    let end = real(r, "last_delivery_s");
    let t = (end * 10.0).floor() / 10.0;
    let alone = received_rate(s, t - 1.0, t, false);
    assert!(
        alone > pgm && alone > 0.7 * BOTTLENECK,
        "TFMCC alone {alone} B/s, beside the CBR {pgm} B/s"
    );
}
