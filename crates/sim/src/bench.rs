//! The simulator's benchmarks (`rmcast bench sim`). Wall-clock time is measured around runs,
//! never read inside one.

use crate::kernel::Kernel;
use crate::loss::{LossModel, LossRule, LossSite};
use crate::network::LinkConfig;
use crate::oracle::TopologyOracle;
use crate::registry;
use crate::rng::SimRng;
use crate::scheme::Scheme;
use crate::sim::{Sim, Stop, Traffic};
use crate::topo::{self, PlaneParams, TransitStub};
use crate::unreliable;
use core::time::Duration;
use rmcast_proto::deploy::{DistanceOracle, Layout, MemberDistances};
use rmcast_proto::{GroupId, NodeId, Time};
use std::sync::Arc;
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
    /// Receivers.
    pub receivers: usize,
    /// Nodes in the network.
    pub nodes: usize,
    /// Data packets the source sent.
    pub packets: u64,
    /// Packet transmissions on link directions.
    pub link_hops: u64,
    /// Events the kernel processed.
    pub kernel_events: u64,
    /// Datagrams handed to host agents.
    pub deliveries: u64,
    /// Losses, all causes.
    pub lost: u64,
    /// Wall-clock seconds to build the network and agents.
    pub build_seconds: f64,
    /// Wall-clock seconds of the run.
    pub run_seconds: f64,
    /// CPU seconds of the run, where the platform reports them.
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

/// The transit–stub graph `rmcast bench scale` uses for `receivers` receivers: about one
/// stub router per ten receivers (seed 003's 1 × 4 × 3 × 8 = 100-router graph at 1,000).
pub fn scale_graph(receivers: usize) -> TransitStub {
    let base = TransitStub::default();
    match receivers {
        0..=2_000 => base,
        2_001..=20_000 => TransitStub {
            transit_domains: 4,
            transit_nodes: 10,
            stubs_per_transit: 3,
            stub_nodes: 8,
            ..base
        },
        20_001..=200_000 => TransitStub {
            transit_domains: 4,
            transit_nodes: 10,
            stubs_per_transit: 25,
            stub_nodes: 10,
            ..base
        },
        _ => TransitStub {
            transit_domains: 10,
            transit_nodes: 20,
            stubs_per_transit: 50,
            stub_nodes: 10,
            ..base
        },
    }
}

/// Figures of one [`scale_run`].
#[derive(Debug, Clone)]
pub struct ScaleFigures {
    /// The recovery scheme.
    pub scheme: Scheme,
    /// Receivers.
    pub receivers: usize,
    /// Routers in the network.
    pub routers: usize,
    /// Nodes in the network.
    pub nodes: usize,
    /// Links in the network.
    pub links: usize,
    /// Data packets the source sent.
    pub packets: u64,
    /// Wall-clock seconds to build the network and agents.
    pub build_seconds: f64,
    /// Wall-clock seconds of the run.
    pub run_seconds: f64,
    /// CPU seconds of the run, where the platform reports them.
    pub run_cpu_seconds: Option<f64>,
    /// Events the kernel processed.
    pub events: u64,
    /// Packet transmissions on link directions.
    pub link_hops: u64,
    /// Datagrams handed to host agents.
    pub deliveries: u64,
    /// Receivers that delivered every packet.
    pub receivers_complete: usize,
    /// Requests/NAKs sent by receivers (their `control_sent`).
    pub requests: u64,
    /// Repair packets originated (by any agent or router agent).
    pub repairs: u64,
    /// Losses, all causes (the experiment's drop and any other).
    pub drops: u64,
    /// Simulated time at the end of the run, seconds.
    pub sim_end_seconds: f64,
    /// Whether the run stopped because every source reported `Completed` (not at a limit).
    pub completed: bool,
    /// Resident memory when the network (graph, hosts) was built, bytes (where known).
    pub rss_network_bytes: Option<u64>,
    /// Resident memory when the agents were attached too, just before the run.
    pub rss_agents_bytes: Option<u64>,
}

/// Seed 003's single-loss experiment at scale: one source and `receivers` receivers on the
/// [`scale_graph`] transit–stub graph (1.5 Mb/s links, GT-ITM-style delays), five
/// 1,000-byte packets at 10 packets/s, the second original data packet lost at the source
/// (on transmit, so no receiver gets it). Protocol parameters are the spec's defaults
/// ([`registry::install_scheme`]); SRM (topology variants) sends no session messages and
/// asks a [`TopologyOracle`] for its one-way distance to the source and to each requester
/// when it needs one: the routing delay plus, per hop, the transmission time of a 1,000-byte
/// packet (at 1.5 Mb/s transmission, 5.3 ms a hop, dominates these graphs' propagation
/// delays of a few ms, and it is what a member measuring delays would see). The oracle stands
/// in for session-message estimates, which — like a table of all pairs — are quadratic in
/// the group size.
/// Runs until the source reports `Completed` (5 s linger) or 120 s simulated.
pub fn scale_run(scheme: Scheme, receivers: usize, seed: u64) -> Result<ScaleFigures, String> {
    let t0 = Instant::now();
    let ts = scale_graph(receivers);
    let params = PlaneParams::default();
    let mut t = topo::transit_stub(&ts, &params, seed).map_err(|e| e.to_string())?;
    let routers = t.net.node_count();
    topo::attach_hosts(
        &mut t,
        receivers,
        &LinkConfig::new(params.bandwidth_bps, Duration::from_millis(1)),
        seed,
    )
    .map_err(|e| e.to_string())?;
    let nodes = t.net.node_count();
    let links = t.net.link_count();
    let rss_network_bytes = rss_bytes();
    let src = t.source;
    let rx = t.receivers.clone();
    let g = GroupId(1);
    let packets = 5;
    let mut sim = Sim::new(t.net, seed);
    sim.record_events(false);
    let err = |e: crate::SimError| e.to_string();
    // The layout holds what the scheme uses: routers for PGM and LMS (LMS with what lies
    // below each), each member's distance to the source for SRM's topology variant.
    let mut layout = Layout::new(src, g, &rx);
    let oracle: Arc<dyn DistanceOracle>;
    match scheme {
        Scheme::Srm { topo, .. } => {
            if topo {
                oracle = Arc::new(TopologyOracle::with_packet(sim.network(), 1000));
                layout.distances = MemberDistances::Oracle(&oracle);
            }
        }
        Scheme::Pgm => layout.routers = registry::all_routers(sim.network()),
        // NORM needs no router: receivers multicast their NACKs to the group.
        Scheme::Norm => {}
        Scheme::Lms | Scheme::LmsAdaptive => {
            layout.routers = registry::tree_routers(sim.network(), src, &rx, true);
        }
    }
    sim.set_group(g, &rx).map_err(err)?;
    registry::install_scheme(&mut sim, scheme, &layout).map_err(err)?;
    let mut traffic = Traffic::every(packets, 1000, Duration::from_millis(100));
    traffic.stamp = false;
    sim.add_traffic(src, traffic).map_err(err)?;
    let mut rule = LossRule::new(
        LossSite::Tx {
            node: src,
            iface: None,
        },
        LossModel::DropNth { k: 2 },
    );
    rule.filter = crate::loss::KindFilter::OriginalData;
    sim.add_loss(&rule).map_err(err)?;
    let build_seconds = t0.elapsed().as_secs_f64();
    let rss_agents_bytes = rss_bytes();
    let stop = Stop {
        until: Some(Time::from_nanos(120_000_000_000)),
        ..Stop::when_complete()
    };
    let (out, run_seconds, run_cpu_seconds) = timed(|| sim.run(&stop));
    let k = sim.counters().clone();
    let receivers_complete = rx
        .iter()
        .filter(|&&r| sim.metrics(r).is_some_and(|m| m.delivered == packets))
        .count();
    let requests = rx
        .iter()
        .filter_map(|&r| sim.agent(r).map(|a| a.stats().control_sent))
        .sum();
    Ok(ScaleFigures {
        scheme,
        receivers: rx.len(),
        routers,
        nodes,
        links,
        packets,
        build_seconds,
        run_seconds,
        run_cpu_seconds,
        events: sim.events_processed(),
        link_hops: k.link_hops,
        deliveries: k.deliveries,
        receivers_complete,
        requests,
        repairs: k.originated_repair,
        drops: k.lost,
        sim_end_seconds: out.end.as_secs_f64(),
        completed: out.completed,
        rss_network_bytes,
        rss_agents_bytes,
    })
}

/// Peak resident set size of this process in bytes (Linux `VmHWM`), if known.
pub fn peak_rss_bytes() -> Option<u64> {
    proc_status_bytes("VmHWM:")
}

/// Resident set size of this process now, in bytes (Linux `VmRSS`), if known.
pub fn rss_bytes() -> Option<u64> {
    proc_status_bytes("VmRSS:")
}

/// A `kB` field of `/proc/self/status`, in bytes.
fn proc_status_bytes(field: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(field))?;
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

    #[test]
    fn scale_runs_recover_the_single_loss_for_every_receiver() {
        for s in Scheme::SCALE.into_iter().chain([Scheme::Norm]) {
            let f = scale_run(s, 200, 1).unwrap();
            assert_eq!(f.receivers, 200);
            assert_eq!(f.drops, 1, "{s:?}");
            assert!(f.repairs >= 1, "{s:?}");
            assert_eq!(f.receivers_complete, 200, "{s:?}: {f:?}");
            assert!(f.completed, "{s:?}");
        }
    }

    /// More receivers than one ACK REQ names: the sender completes on the named ones' ACKs,
    /// and every receiver still recovers the loss.
    #[test]
    fn norm_at_scale_acks_a_named_few_and_every_receiver_recovers() {
        let f = scale_run(Scheme::Norm, 1000, 1).unwrap();
        assert_eq!(f.receivers_complete, 1000, "{f:?}");
        assert!(f.completed, "{f:?}");
        assert_eq!(f.repairs, 1, "{f:?}");
        // 256 watermark ACKs (every acking node) and a few NACKs and probe answers, not one
        // per receiver.
        assert!(f.requests >= 256 && f.requests < 300, "{f:?}");
    }
}
