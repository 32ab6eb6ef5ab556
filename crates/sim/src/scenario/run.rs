//! Running one point of a sweep and turning what it measured into metric columns.

use super::build::{build, Built};
use super::{Metric, Point, RunResult, Sample, Scenario, ScenarioError, Trace};
use crate::sim::{Outcome, Sim, Stop};
use rmcast_proto::{Gauge, GroupId, NodeId, Time};

pub(super) fn run_point(sc: &Scenario, p: &Point, trace: bool) -> Result<RunResult, ScenarioError> {
    let Built {
        mut sim,
        source,
        receivers,
        stop,
        record,
        sample,
        cross,
    } = build(sc, p)?;
    if trace {
        sim.enable_trace();
    }
    let mut samples = Vec::new();
    let out = match sample {
        None => sim.run(&stop),
        Some(every) => {
            // The same run in steps: the kernel processes the same events in the same order
            // whether it is stopped at each sampling instant or not.
            let mut at = Time::ZERO + every;
            loop {
                let until = stop.until.map_or(at, |u| u.min(at));
                let step = Stop {
                    until: Some(until),
                    ..stop.clone()
                };
                let o = sim.run(&step);
                if o.reason != "time_limit" || stop.until.is_some_and(|u| until >= u) {
                    break o;
                }
                samples.push(take_sample(&sim, at, source, &receivers, cross));
                at += every;
            }
        }
    };
    let mut cols: Vec<(String, Metric)> = vec![("run".into(), Metric::U(p.index as u64))];
    for (k, v) in &p.assignment {
        cols.push((k.clone(), Metric::from_value(v)));
    }
    let mut m = metrics(&sim, &out, source, &receivers);
    if let Some(rec) = &record {
        m.retain(|(k, _)| k == "seed" || rec.iter().any(|r| r == k));
    }
    cols.extend(m);
    let trace = if trace {
        sim.trace().map(|(pk, ls)| Trace {
            packets: pk.to_vec(),
            losses: ls.to_vec(),
            recoveries: sim.recoveries().to_vec(),
            nodes: sim.network().node_count(),
            groups: vec![(GroupId(1), receivers.clone())],
        })
    } else {
        None
    };
    Ok(RunResult {
        index: p.index,
        columns: cols,
        trace,
        samples,
    })
}

/// The metric columns of a finished run, each named as `runs.csv` names it.
fn metrics(
    sim: &Sim,
    out: &Outcome,
    source: NodeId,
    receivers: &[NodeId],
) -> Vec<(String, Metric)> {
    let mut m: Vec<(String, Metric)> = vec![
        ("seed".into(), Metric::U(sim.seed())),
        ("receivers".into(), Metric::U(receivers.len() as u64)),
        // The sender finished and every receiver holds every message: a sender that gave up,
        // or a NAK-based one whose linger ended, completes without the receivers' data.
        (
            "completed".into(),
            Metric::B(out.completed && sim.delivered_everything(source, receivers)),
        ),
        ("stop_reason".into(), Metric::S(out.reason.into())),
    ];
    let end = out.end.as_secs_f64();
    m.push(("end_time_s".into(), Metric::F(end)));
    m.push(("events".into(), Metric::U(sim.events_processed())));
    let sm = sim.metrics(source).unwrap_or_default();
    m.push(("messages_done".into(), Metric::U(sm.messages_done)));
    m.push(("messages_failed".into(), Metric::U(sm.messages_failed)));
    let done = sm.messages_done.max(1) as f64;
    m.push((
        "latency_mean_s".into(),
        Metric::F(if sm.messages_done == 0 {
            0.0
        } else {
            sm.latency_sum_ns as f64 / done / 1e9
        }),
    ));
    m.push((
        "latency_max_s".into(),
        Metric::F(sm.latency_max_ns as f64 / 1e9),
    ));
    m.push((
        "transmissions_per_message".into(),
        Metric::F(if sm.messages_done == 0 {
            0.0
        } else {
            sm.transmissions as f64 / done
        }),
    ));
    let dur = sm.completed_at.map_or(end, |t| t.as_secs_f64());
    m.push(("completion_time_s".into(), Metric::F(dur)));
    m.push((
        "throughput_msgs_per_s".into(),
        Metric::F(if dur > 0.0 {
            sm.messages_done as f64 / dur
        } else {
            0.0
        }),
    ));
    // When the last receiver delivered its last message (with `completed`, when every
    // receiver held everything; a NAK-based sender completes only after its linger).
    let last_delivery = receivers
        .iter()
        .filter_map(|&r| sim.metrics(r).and_then(|x| x.last_delivery))
        .max();
    m.push((
        "last_delivery_s".into(),
        Metric::F(last_delivery.map_or(f64::NAN, Time::as_secs_f64)),
    ));
    let delivered: Vec<u64> = receivers
        .iter()
        .map(|&r| sim.metrics(r).map_or(0, |x| x.delivered))
        .collect();
    let sum_stat = |f: fn(&rmcast_proto::Stats) -> u64| -> u64 {
        receivers
            .iter()
            .filter_map(|&r| sim.agent(r).map(|a| f(a.stats())))
            .sum()
    };
    push_counts(
        &mut m,
        [
            (
                "delivered_min",
                delivered.iter().copied().min().unwrap_or(0),
            ),
            (
                "delivered_max",
                delivered.iter().copied().max().unwrap_or(0),
            ),
            ("delivered_total", delivered.iter().sum()),
            ("receiver_duplicates", sum_stat(|s| s.duplicates)),
            ("receiver_control_sent", sum_stat(|s| s.control_sent)),
        ],
    );
    if let Some(a) = sim.agent(source) {
        let s = a.stats();
        push_counts(
            &mut m,
            [
                ("sender_timeouts", s.timeouts),
                ("sender_packets_sent", s.packets_sent),
                // The source's own repairs (`originated_repair` counts every repairer's).
                ("sender_repairs", s.repairs_sent),
            ],
        );
    }
    let k = sim.counters().clone();
    // The network counters, each column named as its field.
    macro_rules! counters {
        ($($field:ident),+) => { [$((stringify!($field), k.$field)),+] };
    }
    push_counts(
        &mut m,
        counters!(
            originated_data,
            originated_repair,
            originated_control,
            link_hops,
            deliveries,
            bus_frames,
            bus_collisions,
            bus_collided_frames,
            bus_deferrals,
            bus_backoffs,
            bus_receive_events,
            unreachable
        ),
    );
    push_counts(&mut m, [("lost_total", k.lost)]);
    for (cause, v) in sim.losses() {
        m.push((format!("lost_{cause}"), Metric::U(v)));
    }
    m
}

/// The run's state at `at` (every event up to it processed).
fn take_sample(
    sim: &Sim,
    at: Time,
    source: NodeId,
    receivers: &[NodeId],
    cross: Option<(NodeId, NodeId)>,
) -> Sample {
    let stats = |n: NodeId| sim.agent(n).map(|a| a.stats().clone()).unwrap_or_default();
    let rate = |n: NodeId| sim.agent(n).and_then(|a| a.gauge(Gauge::Rate));
    let source_stats = stats(source);
    let mut received_min = None::<u64>;
    let mut delivered_min = None::<u64>;
    let mut rate_min = None::<f64>;
    for &r in receivers {
        let Some(a) = sim.agent(r) else { continue };
        let s = a.stats();
        received_min = Some(received_min.map_or(s.bytes_received, |m| m.min(s.bytes_received)));
        let d = sim.metrics(r).map_or(0, |m| m.delivered);
        delivered_min = Some(delivered_min.map_or(d, |m| m.min(d)));
        if let Some(x) = a.gauge(Gauge::Rate).filter(|x| x.is_finite()) {
            rate_min = Some(rate_min.map_or(x, |m| m.min(x)));
        }
    }
    Sample {
        time_s: at.as_secs_f64(),
        source_rate: rate(source),
        source_sent_bytes: source_stats.bytes_sent,
        received_bytes_min: received_min.unwrap_or(0),
        delivered_min: delivered_min.unwrap_or(0),
        receiver_rate_min: rate_min,
        lost_queue: sim
            .losses()
            .iter()
            .find(|(cause, _)| cause == "queue_overflow")
            .map_or(0, |(_, n)| *n),
        cross: cross.map(|(from, to)| (stats(from).bytes_sent, stats(to).bytes_received)),
    }
}

/// Append named counts to the metric columns, in order.
fn push_counts<'a>(
    m: &mut Vec<(String, Metric)>,
    counts: impl IntoIterator<Item = (&'a str, u64)>,
) {
    m.extend(
        counts
            .into_iter()
            .map(|(name, v)| (name.into(), Metric::U(v))),
    );
}
