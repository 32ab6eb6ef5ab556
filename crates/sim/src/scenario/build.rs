//! A run's set-up from its table: topology, protocol (through the registry), traffic,
//! losses, host models, the stop condition and the metrics to keep.

use super::topology::{build_topology, Hosts};
use super::{ms_dur, Point, Scenario};
use crate::params::{Params, ScenarioError};
use crate::registry::{self, BuildCtx};
use crate::sim::{Sim, Stop, Traffic};
use crate::topo::Topology;
use core::time::Duration;
use rmcast_proto::{GroupId, NodeId, Time};
use toml::Table;

/// A run ready to go.
pub(super) struct Built {
    pub(super) sim: Sim,
    pub(super) source: NodeId,
    pub(super) receivers: Vec<NodeId>,
    pub(super) stop: Stop,
    /// The metrics to keep (`None`: all).
    pub(super) record: Option<Vec<String>>,
    /// Sample the run every this long (`[metrics] sample_ms`).
    pub(super) sample: Option<Duration>,
    /// The `[cross]` flow's sender and sink.
    pub(super) cross: Option<(NodeId, NodeId)>,
}

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "seed",
    "topology",
    "protocol",
    "traffic",
    "loss",
    "host",
    "stop",
    "metrics",
    "cross",
];

pub(super) fn check_point(sc: &Scenario, p: &Point) -> Result<(), ScenarioError> {
    build(sc, p).map(|_| ())
}

/// The run's seed, its `[topology]` table and the topology it gives, every receiver reachable
/// from the source: a receiver the topology leaves without a path is an error naming it and
/// the run, before anything is simulated.
pub(super) fn topology(
    sc: &Scenario,
    p: &Point,
) -> Result<(Params, u64, Params, Topology), ScenarioError> {
    let file = sc.file.as_str();
    let top = Params::new(file, "", p.table.clone());
    top.check_keys(TOP_KEYS)?;
    let seed = top.u64_in("seed", 1, 0, u64::MAX)?;
    let tp = top
        .sub("topology")?
        .ok_or_else(|| top.bad("topology", "a [topology] table"))?;
    let topo = build_topology(&tp, &sc.dir, Hosts::Attach(seed))?;
    if let Some(r) = topo.net.first_unreachable(topo.source, &topo.receivers) {
        let swept: Vec<String> = p
            .assignment
            .iter()
            .map(|(k, v)| format!("{k} = {v}"))
            .collect();
        return Err(ScenarioError::Unreachable {
            file: file.to_string(),
            run: match swept.is_empty() {
                true => format!("run {}", p.index),
                false => format!("run {} ({})", p.index, swept.join(", ")),
            },
            node: r.0,
            from: topo.source.0,
        });
    }
    Ok((top, seed, tp, topo))
}

pub(super) fn build(sc: &Scenario, p: &Point) -> Result<Built, ScenarioError> {
    let (top, seed, tp, topo) = topology(sc, p)?;
    top.str_or("name", "")?;
    top.str_or("description", "")?;
    let table = &p.table;
    let Topology {
        net,
        source,
        receivers,
        link_loss,
        ..
    } = topo;
    let mut sim = Sim::new(net, seed);
    let group = GroupId(1);
    sim.set_group(group, &receivers)
        .map_err(|e| tp.bad("kind", &e.to_string()))?;

    let pp = protocol(&top, &mut sim, source, &receivers, group)?;
    traffic(&top, &pp, &mut sim, source)?;
    let cross = cross(&top, &mut sim, source, &receivers)?;
    super::loss::add_losses(&mut sim, &top, table, &tp, link_loss, source, &receivers)?;
    hosts(&top, &mut sim, source, &receivers)?;
    let stop = stop(&top)?;
    let (record, sample) = metrics(&top, &mut sim)?;
    Ok(Built {
        sim,
        source,
        receivers,
        stop,
        record,
        sample,
        cross,
    })
}

/// The `[protocol]` table: the registry entry of its `name` attaches the agents.
fn protocol(
    top: &Params,
    sim: &mut Sim,
    source: NodeId,
    receivers: &[NodeId],
    group: GroupId,
) -> Result<Params, ScenarioError> {
    // Protocol.
    let pp = top
        .sub("protocol")?
        .ok_or_else(|| top.bad("protocol", "a [protocol] table"))?;
    let name = pp.str_or("name", "")?;
    let entry = registry::lookup(&name).ok_or_else(|| {
        let names: Vec<&str> = registry::registry().map(|e| e.name()).collect();
        pp.bad("name", &format!("one of {}", names.join(", ")))
    })?;
    let params = pp.without("name");
    params.check_keys(&entry.keys())?;
    entry.build(&mut BuildCtx {
        sim,
        source,
        receivers,
        group,
        name: entry.name(),
        params: &params,
    })?;

    Ok(pp)
}

/// The `[traffic]` table: the source's messages.
fn traffic(top: &Params, pp: &Params, sim: &mut Sim, source: NodeId) -> Result<(), ScenarioError> {
    let file = top.file();
    // Traffic.
    let tr = top
        .sub("traffic")?
        .unwrap_or_else(|| Params::new(file, "traffic", Table::new()));
    tr.check_keys(&TRAFFIC_KEYS)?;
    sim.add_traffic(source, read_traffic(&tr)?)
        .map_err(|e| pp.bad("name", &e.to_string()))?;

    Ok(())
}

const TRAFFIC_KEYS: [&str; 5] = ["messages", "size", "interval_ms", "start_ms", "stamp"];

/// A traffic source from the keys of a `[traffic]` (or `[cross]`) table.
fn read_traffic(tr: &Params) -> Result<Traffic, ScenarioError> {
    let mut traffic = Traffic::saturated(
        tr.u64_in("messages", 100, 0, 1_000_000_000)?,
        tr.u64_in("size", 1000, 0, 65_000)? as usize,
    );
    if tr.has("interval_ms") {
        traffic.interval = Some(ms_dur(tr.f64_in("interval_ms", 0.0, 0.0, 1e9)?));
    }
    traffic.start = Time::ZERO + ms_dur(tr.f64_in("start_ms", 0.0, 0.0, 1e12)?);
    traffic.stamp = tr.bool_or("stamp", true)?;
    Ok(traffic)
}

/// The `[cross]` table: a second flow beside the protocol's, the `unreliable` baseline from
/// node `from` to node `to` (its own group) with the traffic keys of `[traffic]`, e.g. a
/// constant bit rate through a dumbbell's bottleneck (its spare hosts, nodes 3 and 4). Neither
/// node may be the source or a receiver.
fn cross(
    top: &Params,
    sim: &mut Sim,
    source: NodeId,
    receivers: &[NodeId],
) -> Result<Option<(NodeId, NodeId)>, ScenarioError> {
    let Some(cp) = top.sub("cross")? else {
        return Ok(None);
    };
    let mut keys = TRAFFIC_KEYS.to_vec();
    keys.extend(["from", "to"]);
    cp.check_keys(&keys)?;
    let n = sim.network().node_count() as u64;
    let node = |key: &str| -> Result<NodeId, ScenarioError> {
        let id = NodeId(cp.req_u64_in(key, 0, n.saturating_sub(1))? as u32);
        if id == source || receivers.contains(&id) {
            return Err(cp.bad(key, "a node that is neither the source nor a receiver"));
        }
        Ok(id)
    };
    let (from, to) = (node("from")?, node("to")?);
    if from == to {
        return Err(cp.bad("to", "a node other than `from`"));
    }
    if sim.network().first_unreachable(from, &[to]).is_some() {
        return Err(cp.bad("to", &format!("a node reachable from node {}", from.0)));
    }
    let group = GroupId(2);
    let bad = |e: crate::sim::SimError| cp.bad("from", &e.to_string());
    sim.set_group(group, &[to]).map_err(bad)?;
    let sender = crate::unreliable::Sender::new(from, group);
    sim.add_agent(from, Box::new(sender)).map_err(bad)?;
    let sink = crate::unreliable::Receiver::new();
    sim.add_agent(to, Box::new(sink)).map_err(bad)?;
    sim.add_traffic(from, read_traffic(&cp)?).map_err(bad)?;
    Ok(Some((from, to)))
}

/// The `[host]` table: receive queues and processing delays.
fn hosts(
    top: &Params,
    sim: &mut Sim,
    source: NodeId,
    receivers: &[NodeId],
) -> Result<(), ScenarioError> {
    // Host models.
    if let Some(hp) = top.sub("host")? {
        hp.check_keys(&[
            "at",
            "rx_queue",
            "rx_rate",
            "processing_us",
            "timer_late_us",
        ])?;
        let at: Vec<NodeId> = match hp.str_or("at", "source")?.as_str() {
            "source" => vec![source],
            "receivers" => receivers.to_vec(),
            "all" => std::iter::once(source)
                .chain(receivers.iter().copied())
                .collect(),
            _ => return Err(hp.bad("at", "\"source\", \"receivers\" or \"all\"")),
        };
        let q = hp.opt_u64("rx_queue")?;
        let rate = hp.f64_in("rx_rate", 1500.0, 1e-9, 1e12)?;
        let proc_us = hp.f64_in("processing_us", 0.0, 0.0, 1e12)?;
        let late_us = hp.f64_in("timer_late_us", 0.0, 0.0, 1e12)?;
        for &n in &at {
            if let Some(q) = q {
                sim.set_rx_queue(n, q.max(1) as usize, rate)
                    .map_err(|e| hp.bad("rx_queue", &e.to_string()))?;
            }
            if proc_us > 0.0 {
                sim.set_processing_delay(n, Duration::from_nanos((proc_us * 1e3).round() as u64))
                    .map_err(|e| hp.bad("processing_us", &e.to_string()))?;
            }
            if late_us > 0.0 {
                sim.set_timer_lateness(n, Duration::from_nanos((late_us * 1e3).round() as u64))
                    .map_err(|e| hp.bad("timer_late_us", &e.to_string()))?;
            }
        }
    }

    Ok(())
}

/// The `[stop]` table.
fn stop(top: &Params) -> Result<Stop, ScenarioError> {
    let file = top.file();
    // Stop condition.
    let sp = top
        .sub("stop")?
        .unwrap_or_else(|| Params::new(file, "stop", Table::new()));
    sp.check_keys(&["time_limit_s", "max_events", "when_complete"])?;
    Ok(Stop {
        until: Some(
            Time::ZERO + Duration::from_secs_f64(sp.f64_in("time_limit_s", 3600.0, 0.0, 1e9)?),
        ),
        max_events: sp.opt_u64("max_events")?,
        when_complete: sp.bool_or("when_complete", true)?,
    })
}

/// The metrics to keep (`None`: all) and the sampling interval (`None`: no series).
type MetricsChoice = (Option<Vec<String>>, Option<Duration>);

/// The `[metrics]` table: which metrics to keep, whether to keep events, and how often to
/// sample the run (`sample_ms`: the rows of [`super::Sample`]).
fn metrics(top: &Params, sim: &mut Sim) -> Result<MetricsChoice, ScenarioError> {
    // Metrics.
    let mut sample = None;
    let record = match top.sub("metrics")? {
        None => None,
        Some(mp) => {
            mp.check_keys(&["record", "events", "sample_ms"])?;
            if mp.has("sample_ms") {
                sample = Some(ms_dur(mp.f64_in("sample_ms", 100.0, 1.0, 1e9)?));
            }
            sim.record_events(mp.bool_or("events", false)?);
            match mp.list("record") {
                None => None,
                Some(l) => Some(
                    l.iter()
                        .map(|v| {
                            v.as_str()
                                .map(str::to_string)
                                .ok_or_else(|| mp.bad("record", "a list of metric names"))
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                ),
            }
        }
    };
    if record.is_none() && top.sub("metrics")?.is_none() {
        sim.record_events(false);
    }
    Ok((record, sample))
}
