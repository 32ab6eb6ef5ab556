//! Seed 000's windowed protocols from scenario files: the registry builds `bap` (block
//! acknowledgment) and `rra` (round-robin acknowledgment) from a `[protocol]` table whose keys
//! and defaults are the spec's, and each delivers every message exactly once over a lossy
//! tree.

use rmcast_sim::scenario::{run_sweep, Metric, RunOptions, RunResult, Scenario};

/// One run of `[protocol]` keys `proto` on a binary tree of height 3 (8 receivers behind
/// routers, 10 ms links), 200 messages, `loss` (a `[[loss]]` table's keys, or nothing).
fn run(proto: &str, loss: &str) -> RunResult {
    let mut text = format!(
        "name = \"t\"\nseed = 3\n[topology]\nkind = \"binary_tree\"\nheight = 3\n\
         bandwidth_bps = 10000000\ndelay_ms = 10\n[protocol]\n{proto}\n[traffic]\n\
         messages = 200\nsize = 1000\n[stop]\ntime_limit_s = 120\n"
    );
    if !loss.is_empty() {
        text += &format!("[[loss]]\n{loss}\n");
    }
    let sc = Scenario::parse(&text, "t.toml", ".".into()).unwrap_or_else(|e| panic!("{e}"));
    let mut res = run_sweep(&sc, RunOptions::default(), &|| {}).unwrap();
    res.remove(0)
}

fn count(r: &RunResult, k: &str) -> u64 {
    match r.column(k) {
        Some(Metric::U(v)) => *v,
        other => panic!("{k}: {other:?}"),
    }
}

const LOSSY: &str = "model = \"bernoulli\"\np = 0.05\nat = \"rx\"\nnodes = \"receivers\"";

#[test]
fn bap_and_rra_deliver_everything_exactly_once_over_loss() {
    for proto in [
        "name = \"bap\"\nwindow = 8\nrto_ms = 200",
        "name = \"bap\"\nwindow = 8\nrto_ms = 200\nack_delay_max_ms = 2",
        "name = \"rra\"\nwindow = 16\ntimeout_ms = 200",
    ] {
        let r = run(proto, LOSSY);
        assert_eq!(r.column("completed"), Some(&Metric::B(true)), "{proto}");
        assert_eq!(count(&r, "delivered_min"), 200, "{proto}");
        assert_eq!(
            count(&r, "delivered_max"),
            200,
            "{proto}: a message delivered twice"
        );
        assert_eq!(count(&r, "messages_done"), 200, "{proto}");
        assert_eq!(count(&r, "messages_failed"), 0, "{proto}");
        assert!(count(&r, "lost_bernoulli") > 0, "{proto}: no loss happened");
        assert!(
            count(&r, "originated_repair") > 0,
            "{proto}: nothing repaired"
        );
    }
}

/// A key left out takes the spec's default: the same run as with the default written out.
#[test]
fn absent_keys_take_the_spec_defaults() {
    let window = rmcast_proto::protocols::lookup("bap")
        .and_then(|p| p.param("window"))
        .unwrap();
    let timeout = rmcast_proto::protocols::lookup("rra")
        .and_then(|p| p.param("timeout_ms"))
        .unwrap();
    for (bare, written) in [
        (
            "name = \"bap\"",
            format!("name = \"bap\"\nwindow = {}", window.default),
        ),
        (
            "name = \"rra\"",
            format!("name = \"rra\"\ntimeout_ms = {}", timeout.default),
        ),
    ] {
        assert_eq!(
            run(bare, LOSSY).columns,
            run(&written, LOSSY).columns,
            "{written}"
        );
    }
}

/// The keys reach the agents: bap's receivers ACK once per window, so a larger window means
/// fewer ACKs; a retransmission limit of 0 gives up on what silent receivers never
/// acknowledge (counted as failed, the run not completed).
#[test]
fn window_and_retransmission_limit_take_effect() {
    let acks = |w: u32| {
        count(
            &run(&format!("name = \"bap\"\nwindow = {w}\nrto_ms = 200"), ""),
            "receiver_control_sent",
        )
    };
    let (one, sixteen) = (acks(1), acks(16));
    assert!(
        one >= 8 * 200,
        "window 1: at least an ACK per message and receiver"
    );
    assert!(sixteen * 8 <= one, "window 16: {sixteen} ACKs vs {one}");
    let silent = "model = \"bernoulli\"\np = 1.0\nat = \"rx\"\nnodes = \"receivers\"";
    for proto in [
        "name = \"bap\"\nrto_ms = 200\nmax_retransmissions = 0",
        "name = \"rra\"\ntimeout_ms = 200\nmax_retransmissions = 0",
    ] {
        let r = run(proto, silent);
        assert_eq!(
            r.column("stop_reason"),
            Some(&Metric::S("complete".into())),
            "{proto}"
        );
        assert_eq!(r.column("completed"), Some(&Metric::B(false)), "{proto}");
        assert_eq!(count(&r, "delivered_min"), 0, "{proto}");
        assert!(count(&r, "messages_failed") > 0, "{proto}");
    }
}
