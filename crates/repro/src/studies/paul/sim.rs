//! One run of seed 001's §7 network: the exchanges and destinations, the protocol deployed
//! on them, the run, and what it measured.

use core::time::Duration;
use rmcast_proto::tree::{deploy, Endpoint, Exchange, Region, Settings, Source, Variant};
use rmcast_proto::{Agent, Event, Gauge, GroupId, NodeId, Outbox, Stats, Time};
use rmcast_sim::{topo, KindFilter, LossModel, LossRule, LossSite, Sim, Stop, Traffic};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

/// The paper's round-trip delays (ms), New Jersey to MA, FL, IL, TX, CO, CA.
pub const RTDS_MS: [f64; 6] = [10.0, 25.0, 30.0, 40.0, 50.0, 60.0];
/// Block size (bytes of data per block).
pub const BLOCK: usize = 1024;
/// DATA header bytes on rmcast's wire (20 common + 12 tree).
pub const DATA_OVERHEAD: usize = 32;
/// Links are this many times faster than the connection's transmission speed: the source
/// sends at the speed (its multicast VC's peak rate) and status packets, ASSIGNs and local
/// re-multicasts travel beside it (ATM: a 150 Mb/s VC on a 622 Mb/s link).
pub const LINK_FACTOR: u64 = 4;
/// Mean of the uniform 4–6 ms status interval.
pub const STATUS_MEAN_S: f64 = 0.005;

const G: GroupId = GroupId(1);

/// One simulation run.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The protocol: DSP, CSP or CP.
    pub variant: Variant,
    /// Window `W = L` as a multiple of the largest RTD in blocks at `window_ref_mbps`.
    pub window: f64,
    /// Speed at which the window's block count is computed (Figure 10 keeps the window's
    /// block count fixed while the speed changes).
    pub window_ref_mbps: f64,
    /// The paper's r_f (1.2 unless Figure 9 sweeps it).
    pub r_f: f64,
    /// Transmission speed, Mb/s.
    pub rate_mbps: f64,
    /// Block error rate: each endpoint loses each data block it is sent with this probability.
    pub err: f64,
    /// Destinations (endpoints).
    pub dests: usize,
    /// Round-trip delays of the exchanges, ms.
    pub rtds_ms: Vec<f64>,
    /// Data blocks the source sends.
    pub blocks: u64,
    /// Seed of the run's random choices.
    pub seed: u64,
    /// Keep every delivery (for the end-to-end delay and the exactly-once check).
    pub record: bool,
    /// Multiplies the status interval (1: the paper's 4–6 ms; `--mutants` doubles it).
    pub status_scale: f64,
}

impl Spec {
    /// The paper's Figure 4–8 point at window `window`.
    pub fn paper(variant: Variant, window: f64, blocks: u64, seed: u64) -> Self {
        Spec {
            variant,
            window,
            window_ref_mbps: 150.0,
            r_f: 1.2,
            rate_mbps: 150.0,
            err: 1e-3,
            dests: 25,
            rtds_ms: RTDS_MS.to_vec(),
            blocks,
            seed,
            record: true,
            status_scale: 1.0,
        }
    }
    /// Seconds to send one block (its datagram) at `mbps`.
    pub fn ipt_at(mbps: f64) -> f64 {
        (BLOCK + DATA_OVERHEAD) as f64 * 8.0 / (mbps * 1e6)
    }
    /// The time to send one data block at `rate_mbps`, seconds.
    pub fn ipt(&self) -> f64 {
        Self::ipt_at(self.rate_mbps)
    }
    /// The largest exchange RTD, seconds.
    pub fn max_rtd_s(&self) -> f64 {
        self.rtds_ms.iter().copied().fold(0.0, f64::max) / 1e3
    }
    /// `L` in blocks.
    pub fn l(&self) -> u32 {
        let blocks = self.window * self.max_rtd_s() / Self::ipt_at(self.window_ref_mbps);
        (blocks.round() as u32).max(1)
    }
}

/// An endpoint that notes when each block first reaches it (the source's DATA or a local
/// re-multicast), for the paper's per-block delay; everything passes through unchanged.
struct Noting {
    ep: Endpoint,
    first: Rc<RefCell<Vec<Option<Time>>>>,
}

impl Agent for Noting {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        use rmcast_wire::{tree::Message as T, Message, Packet};
        if let Ok(Packet {
            message: Message::Tree(T::Data { seq, .. } | T::LocalData { seq, .. }),
            ..
        }) = Packet::decode(packet)
        {
            let mut first = self.first.borrow_mut();
            if let Some(slot) = usize::try_from(seq).ok().and_then(|k| first.get_mut(k)) {
                slot.get_or_insert(now);
            }
        }
        self.ep.handle_packet(now, from, packet);
    }
    fn handle_timeout(&mut self, now: Time) {
        self.ep.handle_timeout(now);
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.ep.poll_timeout()
    }
    fn outbox(&self) -> &Outbox {
        self.ep.outbox()
    }
    fn outbox_mut(&mut self) -> &mut Outbox {
        self.ep.outbox_mut()
    }
    fn gauge(&self, gauge: Gauge) -> Option<f64> {
        self.ep.gauge(gauge)
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        self.ep.as_any_mut()
    }
    fn as_sender(&mut self) -> Option<&mut dyn rmcast_proto::SenderAgent> {
        Some(self)
    }
}

impl rmcast_proto::SenderAgent for Noting {
    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        self.ep.remove_receiver(now, node)
    }
}

/// The mean of `n` delays summing to `sum` seconds, in ms (0 without any).
fn mean_ms(sum: f64, n: u64) -> f64 {
    if n > 0 {
        sum / n as f64 * 1e3
    } else {
        0.0
    }
}

/// What one run measured.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunOut {
    /// Normalized throughput: new blocks per block time in steady state.
    pub rho: f64,
    /// Mean end-to-end delay of a block, the paper's measure (§7: "once a block is not
    /// received, the destination has to wait" for its re-multicast): first transmission to
    /// the block's first arrival at the destination, from the source or a local
    /// re-multicast, ms.
    pub delay_ms: f64,
    /// Mean delay to in-order delivery (first transmission to the delivery of a block, which
    /// also waits for every block before it), ms.
    pub delivery_delay_ms: f64,
    /// Global re-multicasts per second.
    pub global_rate: f64,
    /// Local re-multicasts per second (all endpoints).
    pub local_rate: f64,
    /// Status packets reaching the source per second.
    pub status_rate: f64,
    /// Data packets the source sent per second (new and re-multicast).
    pub data_rate: f64,
    /// Peak and time-mean of the source's outstanding blocks.
    pub src_peak: f64,
    /// Time-mean of the source's outstanding blocks (see `src_peak`).
    pub src_mean: f64,
    /// Mean over regions of the largest peak buffer (reassembly + retransmission) of the
    /// region's endpoints: the local source's buffer for DSP and CP.
    pub local_peak: f64,
    /// Source peak plus every endpoint's peak (reassembly + retransmission).
    pub buffer_total: f64,
    /// Sum over endpoints of the peak retransmission buffer (blocks kept for others): what
    /// DSP adds at `E_i1` and CP at every endpoint.
    pub retx_total: f64,
    /// Blocks that arrived beyond an endpoint's reassembly buffer.
    pub overflow: f64,
    /// The source completed every block within the run.
    pub completed: bool,
    /// Every endpoint got every block once, in order (from its events when recording, else from
    /// its delivered count).
    pub exactly_once: bool,
    /// Simulated time to completion, s.
    pub duration_s: f64,
}

/// The §7 network of a spec: one local exchange per RTD, the destinations spread over them;
/// returns it with the regions (an exchange and its endpoints) the protocol is deployed on.
fn network(s: &Spec) -> Result<(topo::Topology, Vec<Region>), String> {
    let rtds: Vec<Duration> = s
        .rtds_ms
        .iter()
        .map(|&m| Duration::from_secs_f64(m / 1e3))
        .collect();
    let per = topo::spread(s.dests, rtds.len());
    let bps = (s.rate_mbps * 1e6) as u64;
    let t = topo::local_exchanges(&rtds, &per, bps * LINK_FACTOR, Duration::ZERO)
        .map_err(|e| e.to_string())?;
    let mut regions = Vec::new();
    let mut it = t.receivers.iter().copied();
    for (i, &x) in t.attach_points.iter().enumerate() {
        let k = per.get(i).copied().unwrap_or(0);
        let eps: Vec<NodeId> = it.by_ref().take(k).collect();
        regions.push(Region {
            exchange: x,
            rtd_endpoints: vec![rtds[i]; eps.len()],
            endpoints: eps,
            rtd_exchange: rtds[i],
        });
    }
    Ok((t, regions))
}

/// Who a run's measurement reads: the source, the destinations, the regions, the nodes
/// that have an endpoint agent, and (recorded runs) the first arrival of each block at each.
struct Nodes {
    source: NodeId,
    receivers: Vec<NodeId>,
    regions: Vec<Region>,
    endpoints: BTreeSet<NodeId>,
    arrivals: BTreeMap<NodeId, Rc<RefCell<Vec<Option<Time>>>>>,
}

/// The simulation of a spec: the protocol deployed on `t` (exchanges, endpoints and the
/// source), with the block errors and the source's traffic.
fn deploy_on(s: &Spec, t: topo::Topology, regions: Vec<Region>) -> Result<(Sim, Nodes), String> {
    let bps = (s.rate_mbps * 1e6) as u64;
    let mut set = Settings::new(s.variant, s.l());
    set.rate_bps = bps;
    set.block_datagram = BLOCK + DATA_OVERHEAD;
    set.r_f = s.r_f;
    set.status_min = set.status_min.mul_f64(s.status_scale);
    set.status_max = set.status_max.mul_f64(s.status_scale);
    let d = deploy(t.source, G, 100, &regions, &set);
    let mut sim = Sim::new(t.net, s.seed);
    if s.record {
        // Deliveries' numbers and times, not their blocks (a copy of every block at every
        // destination: 3 GB for 100 destinations of 30,000 blocks).
        sim.record_events(true);
        sim.record_payloads(false);
    } else {
        // Large runs: only the source's events (its MessageDone times give ρ).
        sim.record_events_of(&[t.source]);
    }
    sim.set_group(G, &t.receivers).map_err(|e| e.to_string())?;
    for (g, m) in &d.local_groups {
        sim.set_group(*g, m).map_err(|e| e.to_string())?;
    }
    for x in d.exchanges {
        let rng = sim.agent_rng(x.node, 1);
        sim.add_router_agent(x.node, Box::new(Exchange::new(x, rng)))
            .map_err(|e| e.to_string())?;
    }
    let mut endpoints: BTreeSet<NodeId> = BTreeSet::new();
    // First arrival of each block at each endpoint (recorded runs only).
    let mut arrivals: BTreeMap<NodeId, Rc<RefCell<Vec<Option<Time>>>>> = BTreeMap::new();
    for e in d.endpoints {
        let rng = sim.agent_rng(e.node, 0);
        let node = e.node;
        endpoints.insert(node);
        let ep = Endpoint::new(e, rng);
        let agent: Box<dyn Agent> = if s.record {
            let first = Rc::new(RefCell::new(vec![None; s.blocks as usize]));
            arrivals.insert(node, Rc::clone(&first));
            Box::new(Noting { ep, first })
        } else {
            Box::new(ep)
        };
        sim.add_agent(node, agent).map_err(|e| e.to_string())?;
    }
    sim.add_agent(t.source, Box::new(Source::new(d.source)))
        .map_err(|e| e.to_string())?;
    if s.err > 0.0 {
        for &r in &t.receivers {
            sim.add_loss(
                &LossRule::new(
                    LossSite::Rx {
                        node: r,
                        iface: None,
                    },
                    LossModel::Bernoulli { p: s.err },
                )
                .filter(KindFilter::Data),
            )
            .map_err(|e| e.to_string())?;
        }
    }
    let mut traffic = Traffic::saturated(s.blocks, BLOCK);
    traffic.stamp = s.record;
    sim.add_traffic(t.source, traffic)
        .map_err(|e| e.to_string())?;
    let nodes = Nodes {
        source: t.source,
        receivers: t.receivers,
        regions,
        endpoints,
        arrivals,
    };
    Ok((sim, nodes))
}

/// What running to completion (or the limit) leaves beside the events: whether the source
/// completed, when the run stopped, the source's counters and the local re-multicasts sent.
struct Ran {
    completed: bool,
    end: Time,
    src_stats: Stats,
    local_sent: u64,
}

/// Run until the source completes (or a generous limit), then 300 ms more for the local
/// repairs after the source's last acknowledgment.
fn run_to_end(sim: &mut Sim, s: &Spec, nodes: &Nodes) -> Ran {
    let ipt = s.ipt();
    // Generous limit: 40 × the error-free transfer time plus 20 s.
    let limit = Time::from_nanos(((s.blocks as f64 * ipt * 40.0 + 20.0) * 1e9) as u64);
    let out = sim.run(&Stop::when_complete().until(limit));
    let end = out.end;
    let src_stats = sim
        .agent(nodes.source)
        .map(|a| a.stats().clone())
        .unwrap_or_default();
    let local_sent: u64 = nodes
        .receivers
        .iter()
        .filter_map(|&r| sim.agent(r).map(|a| a.stats().repairs_sent))
        .sum();
    // Let local repairs after the source's last acknowledgment finish.
    let tail = sim.now() + Duration::from_millis(300);
    sim.run(&Stop::at(tail));

    Ran {
        completed: out.completed,
        end,
        src_stats,
        local_sent,
    }
}

/// What a run measured: throughput in steady state, delays, repair and status rates, and the
/// buffers' occupancy from the agents' gauges.
fn measure(sim: &Sim, s: &Spec, nodes: &Nodes, ran: &Ran) -> RunOut {
    let ipt = s.ipt();
    // Steady state: the rate at which new blocks leave the source, from block N/5 on.
    let mut sent_at: Vec<Option<Time>> = vec![None; s.blocks as usize];
    let mut last_done = Time::ZERO;
    for (_, e) in sim.events(nodes.source) {
        if let Event::MessageDone {
            seq,
            sent_at: t0,
            done_at,
            ..
        } = e
        {
            if let Some(slot) = sent_at.get_mut(*seq as usize) {
                *slot = Some(*t0);
            }
            last_done = last_done.max(*done_at);
        }
    }
    let k1 = (s.blocks / 5) as usize;
    let k2 = s.blocks.saturating_sub(1) as usize;
    let rho = match (
        sent_at.get(k1).copied().flatten(),
        sent_at.get(k2).copied().flatten(),
    ) {
        (Some(a), Some(b)) if b > a => (k2 - k1) as f64 * ipt / (b - a).as_secs_f64(),
        _ => 0.0,
    };
    let dur = if ran.completed {
        last_done.as_secs_f64()
    } else {
        ran.end.as_secs_f64()
    }
    .max(1e-9);
    let mut exactly_once = true;
    let mut delay_sum = 0.0;
    let mut delay_n = 0u64;
    let (mut receipt_sum, mut receipt_n) = (0.0, 0u64);
    for first in nodes.arrivals.values() {
        for (k, at) in first.borrow().iter().enumerate().skip(k1) {
            if let (Some(at), Some(Some(t0))) = (at, sent_at.get(k)) {
                receipt_sum += at.saturating_since(*t0).as_secs_f64();
                receipt_n += 1;
            }
        }
    }
    if s.record {
        for &r in &nodes.receivers {
            let mut next = 0u64;
            for (at, e) in sim.events(r) {
                if let Event::Delivered { seq, .. } = e {
                    if *seq != next {
                        exactly_once = false;
                    }
                    next = seq + 1;
                    if *seq as usize >= k1 {
                        if let Some(Some(t0)) = sent_at.get(*seq as usize) {
                            delay_sum += at.saturating_since(*t0).as_secs_f64();
                            delay_n += 1;
                        }
                    }
                }
            }
            if next != s.blocks {
                exactly_once = false;
            }
        }
    } else {
        // Without receivers' events: every receiver delivered every block (agents deliver
        // in order, so the count is the check).
        exactly_once = nodes
            .receivers
            .iter()
            .all(|&r| sim.metrics(r).is_some_and(|m| m.delivered == s.blocks));
    }
    // Buffer occupancy from the agents' gauges (0 for a node without the agent).
    let gauge = |n: NodeId, g: Gauge| sim.agent(n).and_then(|a| a.gauge(g)).unwrap_or(0.0);
    let endpoint_sum = |g: Gauge| nodes.endpoints.iter().map(|&e| gauge(e, g)).sum::<f64>();
    let mut local_peak = 0.0;
    for reg in &nodes.regions {
        let m = reg
            .endpoints
            .iter()
            .filter(|e| nodes.endpoints.contains(e))
            .map(|&e| gauge(e, Gauge::HeldPeak))
            .fold(0.0, f64::max);
        local_peak += m;
    }
    local_peak /= nodes.regions.len().max(1) as f64;
    let src_peak = gauge(nodes.source, Gauge::HeldPeak);
    let buffer_total = src_peak + endpoint_sum(Gauge::HeldPeak);
    RunOut {
        rho,
        delay_ms: mean_ms(receipt_sum, receipt_n),
        delivery_delay_ms: mean_ms(delay_sum, delay_n),
        global_rate: ran.src_stats.repairs_sent as f64 / dur,
        local_rate: ran.local_sent as f64 / dur,
        status_rate: ran.src_stats.packets_received as f64 / dur,
        data_rate: (ran.src_stats.data_sent + ran.src_stats.repairs_sent) as f64 / dur,
        src_peak,
        src_mean: gauge(
            nodes.source,
            Gauge::HeldMean {
                until: Time::from_nanos((dur * 1e9) as u64),
            },
        ),
        local_peak,
        buffer_total,
        retx_total: endpoint_sum(Gauge::RetxPeak),
        overflow: endpoint_sum(Gauge::Overflow),
        completed: ran.completed,
        exactly_once: exactly_once && ran.completed,
        duration_s: dur,
    }
}

/// Run one simulation.
pub fn run_one(s: &Spec) -> Result<RunOut, String> {
    let (t, regions) = network(s)?;
    let (mut sim, nodes) = deploy_on(s, t, regions)?;
    let ran = run_to_end(&mut sim, s, &nodes);
    Ok(measure(&sim, s, &nodes, &ran))
}
