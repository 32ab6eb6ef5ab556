//! The simulator's benchmarks (`rmcast bench sim`). Wall-clock time is measured around runs,
//! never read inside one.

use crate::kernel::Kernel;
use crate::loss::{LossModel, LossRule, LossSite};
use crate::network::LinkConfig;
use crate::rng::SimRng;
use crate::sim::{Sim, Stop, Traffic};
use crate::topo::{self, PlaneParams, TransitStub};
use crate::unreliable;
use core::time::Duration;
use rmcast_proto::{GroupId, NodeId, Time};
use std::time::Instant;

/// CPU time this thread has run, in seconds (Linux `/proc/thread-self/schedstat`), if
/// known. On a loaded machine wall time overstates the work; both are reported.
pub fn thread_cpu_seconds() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = s.split_whitespace().next()?.parse().ok()?;
    Some(ns as f64 / 1e9)
}

/// Wall and CPU seconds of `f`.
fn timed<T>(f: impl FnOnce() -> T) -> (T, f64, Option<f64>) {
    let c0 = thread_cpu_seconds();
    let t0 = Instant::now();
    let v = f();
    let wall = t0.elapsed().as_secs_f64();
    let cpu = match (c0, thread_cpu_seconds()) {
        (Some(a), Some(b)) => Some(b - a),
        _ => None,
    };
    (v, wall, cpu)
}

/// (a) The hold model: `pending` events in the queue; each step pops the earliest and
/// schedules one at now + uniform(0, 2·mean) ns. Returns (steps, wall seconds, CPU seconds).
pub fn hold_model(pending: usize, steps: u64) -> (u64, f64, Option<f64>) {
    let mut k: Kernel<u32> = Kernel::new();
    let mut rng = SimRng::new(1, 0, 0, 0);
    let mean = 1_000_000u64;
    for i in 0..pending {
        k.schedule(Time::from_nanos(rng.below(2 * mean)), i as u32);
    }
    let (_, wall, cpu) = timed(|| {
        for _ in 0..steps {
            let Some((now, e)) = k.pop() else { break };
            k.schedule(Time::from_nanos(now.as_nanos() + rng.below(2 * mean)), e);
        }
    });
    (steps, wall, cpu)
}

/// Figures of one packet-level run.
#[derive(Debug, Clone)]
pub struct RunFigures {
    pub receivers: usize,
    pub nodes: usize,
    pub packets: u64,
    pub link_hops: u64,
    pub kernel_events: u64,
    pub deliveries: u64,
    pub lost: u64,
    pub build_seconds: f64,
    pub run_seconds: f64,
    pub run_cpu_seconds: Option<f64>,
}

fn unreliable_run(
    topo: topo::Topology,
    packets: u64,
    size: usize,
    loss: Option<f64>,
    seed: u64,
    build_start: Instant,
) -> RunFigures {
    let receivers = topo.receivers.clone();
    let src = topo.source;
    let links = topo.net.link_count();
    let nodes = topo.net.node_count();
    let mut sim = Sim::new(topo.net, seed);
    sim.record_events(false);
    let g = GroupId(1);
    let _ = sim.set_group(g, &receivers);
    let _ = sim.add_agent(src, Box::new(unreliable::Sender::new(src, g)));
    for &r in &receivers {
        let _ = sim.add_agent(r, Box::new(unreliable::Receiver::new()));
    }
    let mut t = Traffic::saturated(packets, size);
    t.stamp = false;
    let _ = sim.add_traffic(src, t);
    if let Some(p) = loss {
        for l in 0..links {
            let _ = sim.add_loss(&LossRule::new(
                LossSite::Link {
                    link: l,
                    from: None,
                },
                LossModel::Bernoulli { p },
            ));
        }
    }
    let build_seconds = build_start.elapsed().as_secs_f64();
    let (_, run_seconds, run_cpu_seconds) = timed(|| sim.run(&Stop::default()));
    let k = sim.counters();
    RunFigures {
        receivers: receivers.len(),
        nodes,
        packets,
        link_hops: k.link_hops,
        kernel_events: sim.events_processed(),
        deliveries: k.deliveries,
        lost: k.lost,
        build_seconds,
        run_seconds,
        run_cpu_seconds,
    }
}

/// (b) One sender multicasting `packets` packets of `size` bytes unreliably down a binary
/// tree of height `h` (2^h receivers) with Bernoulli(`loss`) on every link direction.
pub fn binary_tree_multicast(h: u32, packets: u64, size: usize, loss: f64) -> RunFigures {
    let t0 = Instant::now();
    let link = LinkConfig::new(100_000_000, Duration::from_millis(1));
    match topo::binary_tree(h, link) {
        Ok(t) => unreliable_run(t, packets, size, Some(loss), 1, t0),
        Err(_) => unreliable_run(
            topo::Topology {
                net: crate::Network::new(),
                source: NodeId(0),
                receivers: Vec::new(),
                attach_points: Vec::new(),
                link_loss: Vec::new(),
            },
            0,
            0,
            None,
            1,
            t0,
        ),
    }
}

/// (c) A transit–stub graph with `receivers` receiver hosts on stub routers; `packets`
/// unreliable multicasts, no loss.
pub fn transit_stub_multicast(
    ts: &TransitStub,
    receivers: usize,
    packets: u64,
    size: usize,
) -> Option<RunFigures> {
    let t0 = Instant::now();
    let params = PlaneParams {
        bandwidth_bps: 1_000_000_000,
        ..PlaneParams::default()
    };
    let mut t = topo::transit_stub(ts, &params, 1).ok()?;
    topo::attach_hosts(
        &mut t,
        receivers,
        &LinkConfig::new(1_000_000_000, Duration::from_micros(100)),
        1,
    )
    .ok()?;
    Some(unreliable_run(t, packets, size, None, 1, t0))
}

/// Peak resident set size of this process in bytes (Linux `VmHWM`), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_benchmarks_count_what_they_claim() {
        let (n, _, _) = hold_model(1000, 10_000);
        assert_eq!(n, 10_000);
        let b = binary_tree_multicast(3, 20, 1000, 0.0);
        assert_eq!(b.receivers, 8);
        // 14 links, each carrying each packet once.
        assert_eq!(b.link_hops, 14 * 20);
        assert_eq!(b.deliveries, 8 * 20);
        let c = transit_stub_multicast(&TransitStub::default(), 200, 5, 500).unwrap();
        assert_eq!(c.receivers, 200);
        assert_eq!(c.deliveries, 200 * 5);
    }
}
