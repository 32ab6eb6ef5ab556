//! One run on a Table 1 star: a PRMP or full-feedback parent and NC children, and §4's T, N, I.

use core::time::Duration;
use rmcast_proto::{ff, prmp, Agent, GroupId, NodeId, Time};
use rmcast_sim::topo::{self, LinkClass, Topology};
use rmcast_sim::{LinkConfig, LossModel, LossRule, LossSite, Sim, Stop, Traffic};

pub(super) const GROUP: GroupId = GroupId(1);
/// §4: 1000 packets (`DP`) of 1 KB.
pub const PACKETS: u64 = 1000;
/// §4: bytes per packet.
pub const PACKET_BYTES: usize = 1024;
/// §4: the parent's response buffer and the implosion threshold rate.
pub const IMPLOSION_BUFFER: usize = 16;
/// §4: the implosion threshold rate, packets/s.
pub const ITR: f64 = 1500.0;
/// §4: `S = 64` for PF and FF.
pub const WINDOW: u64 = 64;

/// The five protocol versions of §4.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Proto {
    /// PRMP (polling), window S = 64.
    Pf,
    /// PRMP with a window of the whole transfer (IW).
    PfIw,
    /// Full feedback, window S = 64.
    Ff,
    /// Full feedback with a window of the whole transfer.
    FfIw,
    /// FF-IW without the parent's response buffer (no implosion losses).
    FfIwIt,
    /// Beyond the paper: FF whose receivers send cumulative ACKs (CUMACK).
    FfCum,
    /// Beyond the paper: FF-IW whose receivers send cumulative ACKs (CUMACK).
    FfIwCum,
}

impl Proto {
    /// Every version, in the paper's order.
    pub const ALL: [Proto; 5] = [
        Proto::Pf,
        Proto::PfIw,
        Proto::Ff,
        Proto::FfIw,
        Proto::FfIwIt,
    ];

    /// The FF versions with a cumulative ACK (beyond the paper: HYBRID only).
    pub const CUMULATIVE: [Proto; 2] = [Proto::FfCum, Proto::FfIwCum];

    /// Key in measure names.
    pub fn key(self) -> &'static str {
        match self {
            Proto::Pf => "pf",
            Proto::PfIw => "pf_iw",
            Proto::Ff => "ff",
            Proto::FfIw => "ff_iw",
            Proto::FfIwIt => "ff_iw_it",
            Proto::FfCum => "ff_cum",
            Proto::FfIwCum => "ff_iw_cum",
        }
    }

    /// Name in legends and tables.
    pub fn label(self) -> &'static str {
        match self {
            Proto::Pf => "PF",
            Proto::PfIw => "PF-IW",
            Proto::Ff => "FF",
            Proto::FfIw => "FF-IW",
            Proto::FfIwIt => "FF-IW-IT",
            Proto::FfCum => "FF (cum. ACK)",
            Proto::FfIwCum => "FF-IW (cum. ACK)",
        }
    }

    fn window(self, packets: u64) -> u64 {
        match self {
            Proto::Pf => prmp::Variant::Pf.window(WINDOW, packets),
            Proto::PfIw => prmp::Variant::PfIw.window(WINDOW, packets),
            Proto::Ff | Proto::FfCum => ff::Variant::Ff.window(WINDOW, packets),
            Proto::FfIw | Proto::FfIwCum => ff::Variant::FfIw.window(WINDOW, packets),
            Proto::FfIwIt => ff::Variant::FfIwIt.window(WINDOW, packets),
        }
    }

    fn implosion(self) -> bool {
        self != Proto::FfIwIt
    }

    /// Whether its receivers send cumulative ACKs.
    pub fn cumulative(self) -> bool {
        matches!(self, Proto::FfCum | Proto::FfIwCum)
    }

    pub(super) fn color(self) -> usize {
        match self {
            Proto::Pf => 0,
            Proto::PfIw => 1,
            Proto::Ff => 2,
            Proto::FfIw => 3,
            Proto::FfIwIt => 4,
            Proto::FfCum => 5,
            Proto::FfIwCum => 6,
        }
    }
}

/// One run on a star.
#[derive(Debug, Clone, Copy)]
pub struct RunSpec {
    /// The protocol version.
    pub proto: Proto,
    /// The children's link class.
    pub class: LinkClass,
    /// Children (NC).
    pub nc: usize,
    /// PRMP's response rate `RR` (responses/s).
    pub rr: u64,
    /// Data packets (DP).
    pub packets: u64,
    /// Simulated-time limit; a run that has not finished by then is reported as unfinished.
    pub limit: Duration,
    /// Seed of the run's random choices.
    pub seed: u64,
    /// No response buffer at the parent, whatever the version (`--mutants` only).
    pub implosion_off: bool,
    /// No link errors (`--mutants` only).
    pub lossless: bool,
}

impl RunSpec {
    /// A run with §4's settings: `proto`, `nc` children on `class` links.
    pub fn paper(proto: Proto, class: LinkClass, nc: usize, seed: u64) -> Self {
        RunSpec {
            proto,
            class,
            nc,
            rr: ITR as u64,
            packets: PACKETS,
            limit: Duration::from_secs(3600),
            seed,
            implosion_off: false,
            lossless: false,
        }
    }
}

/// What one run measured.
#[derive(Debug, Clone, Copy, Default)]
pub struct RunOut {
    /// Every packet fully acknowledged before the time limit.
    pub finished: bool,
    /// Packets fully acknowledged.
    pub acked: u64,
    /// Δt in ms (to the last packet fully acknowledged, or to the limit if unfinished).
    pub dt_ms: f64,
    /// T = acked / Δt, packets/ms.
    pub t: f64,
    /// N = TP / (NC · DP).
    pub n: f64,
    /// I = implosion losses / (NC · DP).
    pub i: f64,
    /// Responses (RESP or ACK) sent by the children, per child per packet.
    pub feedback: f64,
    /// Children removed by the protocol for silence.
    pub evicted: u64,
    /// Every child that was not removed delivered every packet exactly once.
    pub delivery_ok: bool,
    /// Simulator events processed (cost of the run).
    pub events: u64,
}

/// PRMP sender configuration for a run (§4 values; `S` by variant).
pub fn prmp_sender(
    node: NodeId,
    group: GroupId,
    receivers: Vec<NodeId>,
    window: u64,
    rr: u64,
) -> prmp::SenderConfig {
    let mut c = prmp::SenderConfig::new(node, group, receivers);
    c.window = window;
    c.response_rate = rr;
    c
}

fn sender_for(s: &RunSpec, node: NodeId, receivers: Vec<NodeId>) -> Result<Box<dyn Agent>, String> {
    let w = s.proto.window(s.packets);
    Ok(match s.proto {
        Proto::Pf | Proto::PfIw => Box::new(
            prmp::Sender::new(prmp_sender(node, GROUP, receivers, w, s.rr))
                .map_err(|e| e.to_string())?,
        ),
        Proto::Ff | Proto::FfIw | Proto::FfIwIt | Proto::FfCum | Proto::FfIwCum => {
            let mut c = ff::SenderConfig::new(node, GROUP, receivers);
            c.window = w;
            Box::new(ff::Sender::new(c).map_err(|e| e.to_string())?)
        }
    })
}

fn receiver_for(s: &RunSpec, node: NodeId) -> Box<dyn Agent> {
    let w = s.proto.window(s.packets);
    match s.proto {
        Proto::Pf | Proto::PfIw => {
            Box::new(prmp::Receiver::new(prmp::ReceiverConfig::new(node, w)))
        }
        _ => {
            let mut c = ff::ReceiverConfig::new(node, w);
            c.cumulative = s.proto.cumulative();
            Box::new(ff::Receiver::new(c))
        }
    }
}

/// Independent losses at `err` on each `(link, err)`, both directions, counted as `"err"`.
pub(super) fn add_link_losses(
    sim: &mut Sim,
    links: impl IntoIterator<Item = (usize, f64)>,
) -> Result<(), String> {
    for (link, err) in links {
        sim.add_loss(
            &LossRule::new(
                LossSite::Link { link, from: None },
                LossModel::Bernoulli { p: err },
            )
            .cause("err"),
        )
        .map_err(|e| e.to_string())?;
    }
    Ok(())
}

pub(super) fn loss_of(sim: &Sim, cause: &str) -> u64 {
    sim.losses()
        .iter()
        .find(|(c, _)| c == cause)
        .map_or(0, |(_, n)| *n)
}

/// Seed 004's star ([`topo::star`]): the parent (node 0) and `nc` children, each on its own
/// link of a Table 1 class. Latency is Normal(L, SD) drawn independently for every packet
/// (clamped at 0), so packets may overtake one another, as §4 (g) models it; no bandwidth
/// limit.
pub fn star(nc: usize, class: LinkClass) -> Result<Topology, String> {
    topo::star(
        nc,
        class,
        &LinkConfig::new(0, Duration::ZERO).reordering(true),
    )
    .map_err(|e| e.to_string())
}

/// Run one star simulation.
pub fn run_one(s: &RunSpec) -> Result<RunOut, String> {
    let Topology {
        net,
        source,
        receivers,
        link_loss,
        ..
    } = star(s.nc, s.class)?;
    let mut sim = Sim::new(net, s.seed);
    sim.record_events(false);
    sim.set_group(GROUP, &receivers)
        .map_err(|e| e.to_string())?;
    sim.add_agent(source, sender_for(s, source, receivers.clone())?)
        .map_err(|e| e.to_string())?;
    for &r in &receivers {
        sim.add_agent(r, receiver_for(s, r))
            .map_err(|e| e.to_string())?;
    }
    add_link_losses(
        &mut sim,
        link_loss
            .into_iter()
            .filter(|&(_, err)| err > 0.0 && !s.lossless),
    )?;
    if s.proto.implosion() && !s.implosion_off {
        sim.set_rx_queue(source, IMPLOSION_BUFFER, ITR)
            .map_err(|e| e.to_string())?;
    }
    let mut traffic = Traffic::saturated(s.packets, PACKET_BYTES);
    traffic.stamp = false;
    sim.add_traffic(source, traffic)
        .map_err(|e| e.to_string())?;
    let limit = Time::from_nanos(u64::try_from(s.limit.as_nanos()).unwrap_or(u64::MAX));
    let out = sim.run(&Stop::when_complete().until(limit));
    Ok(measure(s, &sim, source, &receivers, out.completed, limit))
}

fn measure(
    s: &RunSpec,
    sim: &Sim,
    source: NodeId,
    receivers: &[NodeId],
    finished: bool,
    limit: Time,
) -> RunOut {
    let sm = sim.metrics(source).unwrap_or_default();
    let stats = sim
        .agent(source)
        .map(|a| a.stats().clone())
        .unwrap_or_default();
    // The first DATA leaves at t = 0 (saturated source from time zero, no earlier packet).
    let end = if finished {
        sm.completed_at.unwrap_or(limit)
    } else {
        limit
    };
    let dt_ms = end.as_nanos() as f64 / 1e6;
    let acked = sm.messages_done;
    let denom = (s.nc as f64) * (s.packets as f64);
    let mut feedback = 0u64;
    let mut delivery_ok = true;
    for &r in receivers {
        let Some(a) = sim.agent(r) else { continue };
        feedback += a.stats().packets_sent;
        let delivered = sim.metrics(r).map_or(0, |m| m.delivered);
        delivery_ok &= delivered <= s.packets;
    }
    // A child the protocol did not remove must have delivered every packet.
    let evicted = stats.evicted;
    if finished && evicted == 0 {
        delivery_ok &= receivers
            .iter()
            .all(|&r| sim.metrics(r).is_some_and(|m| m.delivered == s.packets));
    }
    RunOut {
        finished,
        acked,
        dt_ms,
        t: if dt_ms > 0.0 {
            acked as f64 / dt_ms
        } else {
            0.0
        },
        n: sim.counters().link_hops as f64 / denom,
        i: loss_of(sim, "implosion") as f64 / denom,
        feedback: feedback as f64 / denom,
        evicted,
        delivery_ok,
        events: sim.events_processed(),
    }
}
