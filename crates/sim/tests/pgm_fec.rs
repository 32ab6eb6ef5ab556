//! Issue 21's FEC repair end to end in the simulator: `scenarios/examples/pgm-fec.toml`
//! (PGM to receivers behind one network element, independent 1 % loss on each access link)
//! with 200 receivers and 320 packets, once with RDATA repair (`fec_k = 0`) and once with
//! on-demand parity (`fec_k = 16`): every receiver holds every packet either way, and parity
//! costs the source fewer repair packets on the same seed.

use rmcast_sim::scenario::{run_sweep, Metric, RunOptions, RunResult, Scenario};
use std::path::{Path, PathBuf};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/examples/pgm-fec.toml")
}

/// The scenario `text` cut to 200 receivers and 320 packets, run: its two runs, each with
/// every receiver complete and holding every packet.
fn run_small(text: &str, name: &str) -> Vec<RunResult> {
    let text = text
        .replace("destinations = 1000", "destinations = 200")
        .replace("messages = 1600", "messages = 320");
    let sc = Scenario::parse(&text, name, PathBuf::from(".")).unwrap();
    let runs = run_sweep(&sc, RunOptions::default(), &|| {}).unwrap();
    assert_eq!(runs.len(), 2);
    for r in &runs {
        assert_eq!(r.column("completed"), Some(&Metric::B(true)));
        assert_eq!(
            count(r, "delivered_min"),
            320,
            "every receiver, every packet"
        );
    }
    runs
}

fn count(r: &RunResult, name: &str) -> u64 {
    match r.column(name) {
        Some(Metric::U(v)) => *v,
        other => panic!("{name}: {other:?}"),
    }
}

#[test]
fn the_example_sweeps_fec_off_and_on_over_five_seeds() {
    let sc = Scenario::load(&example()).unwrap();
    assert_eq!(sc.runs(), 10);
}

#[test]
fn with_fec_every_receiver_gets_every_packet_for_fewer_repairs_than_rdata() {
    let text = std::fs::read_to_string(example())
        .unwrap()
        .replace("seed = [1, 2, 3, 4, 5]", "seed = 3");
    let mut repairs = Vec::new();
    for r in &run_small(&text, "pgm-fec.toml") {
        assert!(count(r, "lost_access") > 300, "loss on the access links");
        repairs.push(count(r, "originated_repair"));
    }
    let (rdata, parity) = (repairs[0], repairs[1]);
    // Closed forms at 200 receivers, 1 % loss (docs/fec.md): 0.89 RDATA and 0.13 parity
    // packets per source packet.
    assert!(rdata > 150, "RDATA {rdata}");
    assert!(3 * parity < rdata, "parity {parity}, RDATA {rdata}");
}

fn evidence(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../scenarios/evidence")
        .join(name)
}

/// `scenarios/evidence/pgm-fec-proactive.toml` with 200 receivers and 320 packets: with two
/// proactive parity symbols per block every receiver gets every packet and sends far fewer
/// NAKs than with parity on demand only; without fec_k the key is refused.
#[test]
fn proactive_parity_spares_most_naks_and_needs_fec_k() {
    let text = std::fs::read_to_string(evidence("pgm-fec-proactive.toml"))
        .unwrap()
        .replace("seed = [1, 2, 3]", "seed = 3")
        .replace("fec_proactive = [0, 1, 2, 4]", "fec_proactive = [0, 2]");
    let runs = run_small(&text, "pgm-fec-proactive.toml");
    let naks: Vec<u64> = runs
        .iter()
        .map(|r| count(r, "receiver_control_sent"))
        .collect();
    assert!(naks[0] > 100, "NAKs on demand only: {}", naks[0]);
    assert!(10 * naks[1] < naks[0], "NAKs {naks:?}");
    let bad = text.replace("fec_k = 16", "fec_k = 0");
    let sc = Scenario::parse(&bad, "bad.toml", PathBuf::from(".")).unwrap();
    let err = run_sweep(&sc, RunOptions::default(), &|| {}).unwrap_err();
    assert!(err.to_string().contains("fec_proactive"), "{err}");
}
