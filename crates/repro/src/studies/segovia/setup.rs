//! The study's setup as reported: topology, parameters and the choices the thesis left open.

use super::plan::Plan;
use crate::study::Setup;
use crate::sweep::join;

pub(super) fn setup(plan: &Plan, runs: usize) -> Setup {
    Setup {
        summary: "Seed 000's simulation study re-run on rmcast's simulator: multicast \
                  stop-and-wait (saw, multicast retransmission) and multicast block \
                  acknowledgment (bap) between one saturated sender and r receivers on one \
                  10 Mb/s Ethernet segment, with the thesis's timeouts and metrics; plus \
                  round-robin acknowledgment (rra), which the thesis proposed and never built."
            .into(),
        topology: "rmcast_sim: 1 sender + r receivers on one shared bus with seed 000 §3's \
                   rules: a frame of S bytes takes 8·S bit times (100 ns each), no interframe \
                   gap, no propagation delay, 1-persistent deferral (requests during a busy \
                   period all start at its end), a collision costs 32 bit times, binary \
                   exponential backoff of k slots of 512 bit times after the i-th collision, \
                   counted from the end of the collision, frame discarded after 16 attempts; \
                   no host processing delay; receive events only at addressed nodes."
            .into(),
        parameters: vec![
            ("receivers r".into(), join(&plan.rs)),
            ("runs (seeds) per point".into(), plan.seeds.to_string()),
            (
                "messages per run".into(),
                format!(
                    "{} (MSAW, RRA and every error run), {} (MBAP error-free)",
                    plan.messages,
                    plan.messages * 9 / 10
                ),
            ),
            ("runs in total".into(), runs.to_string()),
            (
                "data frame".into(),
                "1518 bytes (Table 4.2: 64, 848, 1436): the message size is the frame minus \
                 the protocol's DATA header (read off its encoder) minus the bus overhead (0), \
                 so the frame is exactly the thesis's size; checked per protocol (measures \
                 frames.*)"
                    .into(),
            ),
            (
                "ACK frame".into(),
                "64 bytes: every protocol's ACK datagram is shorter and the bus pads it to the \
                 64-byte minimum frame"
                    .into(),
            ),
            (
                "timeouts".into(),
                "the thesis's formula: MSAW d + a·r + i + increment, MBAP n·d + a·r + i + t + \
                 increment; increment 600,000 bit times error-free, 45,000/90,000/135,000 for \
                 20/40/60 receivers in the error runs (Tables 4.6–4.13)"
                    .into(),
            ),
            (
                "failure rates".into(),
                format!(
                    "{} % per interface, Bernoulli on transmit and on receive at every node, \
                     all packets (a frame dropped on transmit never reaches the medium)",
                    join(&plan.err_fails)
                ),
            ),
            (
                "error runs".into(),
                format!(
                    "r = {:?}, MBAP windows {:?}, SAWrand/BAPrand 0 and 22,000",
                    plan.err_rs, plan.err_windows
                ),
            ),
        ],
        choices: vec![
            (
                "BAP ACK-delay timer after a block ACK".into(),
                "stopped when the receiver's counter reaches the window and it sends the block \
                 ACK, armed again by the next DATA (bap's `disarm_on_window_ack`). The thesis \
                 says in-sequence DATA \"resets\" the timer and that, error-free, it fires only \
                 when the sender cannot fill its window; with a timer that keeps running, t = \
                 95,000 fires during the block ACKs' collision resolution from r ≈ 30 on \
                 (the thesis's own r = 60 block latencies leave > 95,000 bit times after the \
                 last DATA), doubling the ACKs. Sensitivity: both readings are plotted."
                    .into(),
            ),
            (
                "BAP ACK-delay timeout t".into(),
                "95,000 bit times (the thesis's sample command file); sensitivity: 25,000 and \
                 300,000. The receiver re-arms it after firing at most 3 times with no DATA \
                 in between (rmcast's bap default)."
                    .into(),
            ),
            (
                "retransmission limits".into(),
                "SAW 10, BAP 20 (the sample command file), compared as count ≤ max (so up to \
                 11 / 21 retransmissions; Table 4.6's Max Retr of 11 fits); a message over the \
                 limit is recorded failed and the run continues; sensitivity: 5 and 40."
                    .into(),
            ),
            (
                "random ACK delay distribution".into(),
                "uniform on [0, SAWrand] / [0, BAPrand] (the protocols implement only this; \
                 other distributions were not tried)"
                    .into(),
            ),
            (
                "backoff bound".into(),
                "inclusive, k uniform in [0, 2^min(i,10)] (the thesis's words); sensitivity: \
                 exclusive [0, 2^min(i,10) − 1] as IEEE 802.3."
                    .into(),
            ),
            (
                "packets in the error runs".into(),
                "500 for both protocols (all Mean Retr values are multiples of 1/500)".into(),
            ),
            (
                "RRA".into(),
                "window 2r messages, per-request timeout d + r·a + increment, unanswered \
                 request limit 20; throughput compared as a ratio of totals (aggregate RT), \
                 since its per-message latency includes waiting for r turns"
                    .into(),
            ),
        ],
    }
}
