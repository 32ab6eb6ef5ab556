//! The `[topology]` table: one generator per `kind`, then link queues and the routing metric.

use super::ms_dur;
use crate::network::{Backoff, BusConfig, LinkConfig, RoutingMetric};
use crate::params::{Params, ScenarioError};
use crate::topo::{self, LinkClass, PlaneParams, Topology, TransitStub};
use core::time::Duration;
use rmcast_proto::NodeId;
use std::path::Path;
use toml::Table;

/// Whether a generated graph (`flat_random`, `waxman`, `transit_stub`) gets its hosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hosts {
    /// As in a scenario: a source and `receivers` hosts (default 10), placed with this seed
    /// (a scenario's run `seed`).
    Attach(u64),
    /// The routers only (a graph to look at before placing anything on it).
    RoutersOnly,
}

/// The topology a `[topology]` table describes, built exactly as a scenario builds it (the
/// same keys, defaults, ranges and errors, which name `file`); an `edge_list`'s `file` key
/// is read relative to `dir`. For the Python package's `rmcast.topology`, which has no
/// defaults of its own.
pub fn topology_from_table(
    table: Table,
    file: &str,
    dir: &Path,
    hosts: Hosts,
) -> Result<Topology, ScenarioError> {
    build_topology(&Params::new(file, "topology", table), dir, hosts)
}

/// Keys every topology takes.
const COMMON: [&str; 3] = ["kind", "queue", "routing"];
/// Keys of the generated graphs (`flat_random`, `waxman`, `transit_stub`).
const PLANE_KEYS: [&str; 9] = [
    "scale",
    "delay_per_unit_ms",
    "bandwidth_bps",
    "attempts",
    "receivers",
    "host_delay_ms",
    "host_bandwidth_bps",
    "seed",
    "placement",
];
/// Every kind with the keys it takes besides [`COMMON`] (the generated graphs also take
/// [`PLANE_KEYS`]).
const KINDS: [(&str, &[&str]); 9] = [
    (
        "bus",
        &[
            "receivers",
            "bandwidth_bps",
            "overhead",
            "min_frame",
            "backoff",
            "max_attempts",
        ],
    ),
    (
        "star",
        &["children", "class", "bandwidth_bps", "class_loss"],
    ),
    (
        "local_exchanges",
        &[
            "rtds_ms",
            "destinations",
            "per_exchange",
            "bandwidth_bps",
            "access_delay_ms",
        ],
    ),
    (
        "binary_tree",
        &["height", "bandwidth_bps", "delay_ms", "source_link"],
    ),
    (
        "dumbbell",
        &[
            "receivers",
            "bandwidth_bps",
            "delay_ms",
            "bottleneck_queue",
            "host_bandwidth_bps",
            "host_delay_ms",
        ],
    ),
    ("flat_random", &["n", "p"]),
    (
        "transit_stub",
        &[
            "transit_domains",
            "transit_nodes",
            "stubs_per_transit",
            "stub_nodes",
            "p_transit",
            "p_stub",
        ],
    ),
    ("waxman", &["n", "alpha", "beta"]),
    (
        "edge_list",
        &[
            "file",
            "source",
            "receiver_ids",
            "receivers",
            "delay_ms",
            "bandwidth_bps",
        ],
    ),
];
/// Most receivers a generated graph may have.
const MAX_RECEIVERS: u64 = 10_000_000;

fn topo_err(p: &Params, e: topo::TopoError) -> ScenarioError {
    // `kind` was read successfully before any generator runs.
    let kind = p.str_or("kind", "").unwrap_or_default();
    p.bad("kind", &format!("a valid {kind} topology: {e}"))
}

fn plane(p: &Params) -> Result<PlaneParams, ScenarioError> {
    let d = PlaneParams::default();
    Ok(PlaneParams {
        scale: p.f64_in("scale", d.scale, 1e-9, 1e12)?,
        delay_per_unit: ms_dur(p.f64_in("delay_per_unit_ms", 0.1, 0.0, 1e6)?),
        bandwidth_bps: p.u64_in(
            "bandwidth_bps",
            d.bandwidth_bps,
            0,
            u64::MAX / 8_000_000_000,
        )?,
        attempts: p.u64_in("attempts", 1000, 1, 1_000_000)? as u32,
    })
}

fn host_link(p: &Params) -> Result<LinkConfig, ScenarioError> {
    Ok(LinkConfig::new(
        p.u64_in(
            "host_bandwidth_bps",
            10_000_000,
            0,
            u64::MAX / 8_000_000_000,
        )?,
        ms_dur(p.f64_in("host_delay_ms", 1.0, 0.0, 1e6)?),
    ))
}

/// The run's topology (host placement varies with the run seed in `hosts`).
pub(super) fn build_topology(
    p: &Params,
    dir: &Path,
    hosts: Hosts,
) -> Result<Topology, ScenarioError> {
    let kind = p.str_or("kind", "")?;
    let Some((_, extra)) = KINDS.iter().find(|(k, _)| *k == kind) else {
        let names: Vec<&str> = KINDS.iter().map(|(k, _)| *k).collect();
        return Err(p.bad("kind", &format!("one of {}", names.join(", "))));
    };
    let plane_kind = matches!(kind.as_str(), "flat_random" | "waxman" | "transit_stub");
    let mut allowed = COMMON.to_vec();
    if plane_kind {
        allowed.extend(PLANE_KEYS);
    }
    allowed.extend(*extra);
    p.check_keys(&allowed)?;
    let mut t = match kind.as_str() {
        "bus" => bus(p)?,
        "star" => star(p)?,
        "local_exchanges" => local_exchanges(p)?,
        "binary_tree" => binary_tree(p)?,
        "dumbbell" => dumbbell(p)?,
        "edge_list" => edge_list(dir, p)?,
        _ => plane_graph(p, &kind, hosts)?,
    };
    if let Some(q) = p.opt_u64("queue")? {
        t.net.set_link_queues(q as usize);
    }
    t.net
        .set_routing(match p.str_or("routing", "delay")?.as_str() {
            "delay" => RoutingMetric::Delay,
            "hops" => RoutingMetric::Hops,
            _ => return Err(p.bad("routing", "\"delay\" or \"hops\"")),
        });
    Ok(t)
}

fn bus(p: &Params) -> Result<Topology, ScenarioError> {
    Ok({
        let backoff = match p.str_or("backoff", "inclusive")?.as_str() {
            "inclusive" => Backoff::Exponential { inclusive: true },
            "exclusive" => Backoff::Exponential { inclusive: false },
            _ => return Err(p.bad("backoff", "\"inclusive\" or \"exclusive\"")),
        };
        let cfg = BusConfig {
            bandwidth_bps: p.u64_in("bandwidth_bps", 10_000_000, 1, 1_000_000_000)?,
            overhead: p.u64_in("overhead", 0, 0, 65_536)? as usize,
            min_frame: p.u64_in("min_frame", 64, 0, 65_536)? as usize,
            max_attempts: p.u64_in("max_attempts", 16, 1, 1000)? as u32,
            backoff,
            ..BusConfig::default()
        };
        if 1_000_000_000 % cfg.bandwidth_bps != 0 {
            return Err(p.bad(
                "bandwidth_bps",
                "a rate giving a whole number of ns per bit (e.g. 10000000)",
            ));
        }
        topo::bus(p.req_u64_in("receivers", 1, 100_000)? as usize, cfg)
            .map_err(|e| topo_err(p, e))?
    })
}

fn star(p: &Params) -> Result<Topology, ScenarioError> {
    Ok({
        let class = LinkClass::parse(&p.str_or("class", "lan")?)
            .ok_or_else(|| p.bad("class", "\"lan\", \"interlan\", \"wan\" or \"hybrid\""))?;
        let mut t = topo::star(
            p.req_u64_in("children", 1, 1_000_000)? as usize,
            class,
            &LinkConfig::new(
                p.u64_in("bandwidth_bps", 10_000_000, 0, u64::MAX / 8_000_000_000)?,
                Duration::ZERO,
            ),
        )
        .map_err(|e| p.bad("children", &e.to_string()))?;
        if !p.bool_or("class_loss", true)? {
            t.link_loss.clear();
        }
        t
    })
}

fn local_exchanges(p: &Params) -> Result<Topology, ScenarioError> {
    Ok({
        let rtds: Vec<Duration> = p
            .num_list("rtds_ms")?
            .unwrap_or_else(|| vec![10.0, 25.0, 30.0, 40.0, 50.0, 60.0])
            .into_iter()
            .map(|v| {
                if v >= 0.0 {
                    Ok(ms_dur(v))
                } else {
                    Err(p.bad("rtds_ms", "non-negative delays in ms"))
                }
            })
            .collect::<Result<_, _>>()?;
        let per: Vec<usize> = match p.num_list("per_exchange")? {
            Some(v) => v.into_iter().map(|x| x.max(0.0) as usize).collect(),
            None => topo::spread(
                p.u64_in("destinations", 25, 1, 1_000_000)? as usize,
                rtds.len(),
            ),
        };
        topo::local_exchanges(
            &rtds,
            &per,
            p.u64_in("bandwidth_bps", 150_000_000, 0, u64::MAX / 8_000_000_000)?,
            ms_dur(p.f64_in("access_delay_ms", 0.0, 0.0, 1e6)?),
        )
        .map_err(|e| p.bad("per_exchange", &e.to_string()))?
    })
}

fn binary_tree(p: &Params) -> Result<Topology, ScenarioError> {
    Ok({
        let link = LinkConfig::new(
            p.u64_in("bandwidth_bps", 1_500_000, 0, u64::MAX / 8_000_000_000)?,
            ms_dur(p.f64_in("delay_ms", 10.0, 0.0, 1e6)?),
        );
        let h = p.req_u64_in("height", 1, 24)? as u32;
        if p.bool_or("source_link", false)? {
            // Seed 003's trees: the source one link above a root router.
            topo::binary_tree_under_source(h, link).map_err(|e| topo_err(p, e))?
        } else {
            topo::binary_tree(h, link).map_err(|e| topo_err(p, e))?
        }
    })
}

/// Two routers joined by a bottleneck of `bandwidth_bps`, `delay_ms` one way and a drop-tail
/// queue of `bottleneck_queue` packets (unbounded without it); hosts on access links of
/// `host_bandwidth_bps` and `host_delay_ms` with unbounded queues, so a flood is dropped at the
/// bottleneck and nowhere else (the common `queue` key would bound every link).
fn dumbbell(p: &Params) -> Result<Topology, ScenarioError> {
    let mut bottleneck = LinkConfig::new(
        p.u64_in("bandwidth_bps", 10_000_000, 0, u64::MAX / 8_000_000_000)?,
        ms_dur(p.f64_in("delay_ms", 10.0, 0.0, 1e6)?),
    );
    if let Some(q) = p.opt_u64("bottleneck_queue")? {
        bottleneck = bottleneck.queue(usize::try_from(q).unwrap_or(usize::MAX));
    }
    let access = LinkConfig::new(
        p.u64_in(
            "host_bandwidth_bps",
            1_000_000_000,
            0,
            u64::MAX / 8_000_000_000,
        )?,
        ms_dur(p.f64_in("host_delay_ms", 1.0, 0.0, 1e6)?),
    );
    topo::dumbbell(
        p.req_u64_in("receivers", 1, MAX_RECEIVERS)? as usize,
        bottleneck,
        &access,
    )
    .map_err(|e| topo_err(p, e))
}

fn plane_graph(p: &Params, kind: &str, hosts: Hosts) -> Result<Topology, ScenarioError> {
    Ok({
        let pl = plane(p)?;
        let gseed = p.u64_in("seed", 1, 0, u64::MAX)?;
        let mut t = match kind {
            "flat_random" => topo::flat_random(
                p.req_u64_in("n", 2, 1_000_000)? as usize,
                p.req_f64_in("p", 0.0, 1.0)?,
                &pl,
                gseed,
            ),
            "waxman" => topo::waxman(
                p.req_u64_in("n", 2, 1_000_000)? as usize,
                p.f64_in("alpha", 0.4, 0.0, 1.0)?,
                p.f64_in("beta", 0.2, 1e-9, 1e9)?,
                &pl,
                gseed,
            ),
            _ => {
                let d = TransitStub::default();
                let ts = TransitStub {
                    transit_domains: p.u64_in(
                        "transit_domains",
                        d.transit_domains as u64,
                        1,
                        10_000,
                    )? as usize,
                    transit_nodes: p.u64_in("transit_nodes", d.transit_nodes as u64, 1, 100_000)?
                        as usize,
                    stubs_per_transit: p.u64_in(
                        "stubs_per_transit",
                        d.stubs_per_transit as u64,
                        0,
                        100_000,
                    )? as usize,
                    stub_nodes: p.u64_in("stub_nodes", d.stub_nodes as u64, 1, 100_000)? as usize,
                    p_transit: p.f64_in("p_transit", d.p_transit, 0.0, 1.0)?,
                    p_stub: p.f64_in("p_stub", d.p_stub, 0.0, 1.0)?,
                };
                topo::transit_stub(&ts, &pl, gseed)
            }
        }
        .map_err(|e| topo_err(p, e))?;
        let r = p.u64_in("receivers", 10, 1, MAX_RECEIVERS)? as usize;
        let placement = p.str_or("placement", "distinct")?;
        let link = host_link(p)?;
        let Hosts::Attach(seed) = hosts else {
            if !matches!(placement.as_str(), "distinct" | "with_replacement") {
                return Err(p.bad("placement", "\"distinct\" or \"with_replacement\""));
            }
            return Ok(t);
        };
        // Host placement varies with the run seed; the graph with `topology.seed`.
        match placement.as_str() {
            "distinct" => topo::attach_hosts(&mut t, r, &link, seed),
            "with_replacement" => topo::attach_hosts_with_replacement(&mut t, r, &link, seed),
            _ => return Err(p.bad("placement", "\"distinct\" or \"with_replacement\"")),
        }
        .map_err(|e| topo_err(p, e))?;
        t
    })
}

fn edge_list(dir: &Path, p: &Params) -> Result<Topology, ScenarioError> {
    Ok({
        let f = p.str_or("file", "")?;
        if f.is_empty() {
            return Err(p.bad(
                "file",
                "the path of an edge-list file (relative to the scenario)",
            ));
        }
        let path = dir.join(&f);
        let text = std::fs::read_to_string(&path)
            .map_err(|e| p.bad("file", &format!("a readable file: {}: {e}", path.display())))?;
        let default = LinkConfig::new(
            p.u64_in("bandwidth_bps", 10_000_000, 0, u64::MAX / 8_000_000_000)?,
            ms_dur(p.f64_in("delay_ms", 1.0, 0.0, 1e6)?),
        );
        let mut t = topo::edge_list(&text, &default).map_err(|e| {
            p.bad(
                "file",
                &format!("a valid edge list: {}: {e}", path.display()),
            )
        })?;
        let n = t.net.node_count() as u64;
        let src = p.u64_in("source", 0, 0, n.saturating_sub(1))?;
        t.source = NodeId(src as u32);
        t.receivers = match p.list("receiver_ids") {
            Some(ids) => ids
                .iter()
                .map(|v| match v.as_integer() {
                    Some(i) if i >= 0 && (i as u64) < n && i as u64 != src => Ok(NodeId(i as u32)),
                    _ => Err(p.bad(
                        "receiver_ids",
                        &format!("node ids in [0, {n}) other than the source"),
                    )),
                })
                .collect::<Result<_, _>>()?,
            None => {
                let k = p.u64_in("receivers", n - 1, 1, n - 1)?;
                (0..n as u32)
                    .filter(|&i| i != src as u32)
                    .take(k as usize)
                    .map(NodeId)
                    .collect()
            }
        };
        t
    })
}
