//! The protocol registry: how a scenario's `[protocol]` table becomes agents. A protocol
//! plugs in by adding one [`ProtocolEntry`] to [`REGISTRY`]: a name and a function that
//! reads its parameters and attaches a sender agent to the source and receiver agents to
//! the receivers.

use crate::scenario::Params;
use crate::sim::Sim;
use core::time::Duration;
use rmcast_proto::{saw, GroupId, NodeId};

/// What a protocol builder gets.
pub struct BuildCtx<'a> {
    pub sim: &'a mut Sim,
    pub source: NodeId,
    pub receivers: &'a [NodeId],
    pub group: GroupId,
    /// The `[protocol]` table (without `name`); read it with the typed getters, which
    /// produce errors naming the key.
    pub params: &'a Params,
}

/// A registered protocol.
pub struct ProtocolEntry {
    pub name: &'static str,
    /// Parameter keys it accepts (others are rejected as unknown).
    pub keys: &'static [&'static str],
    pub build: fn(&mut BuildCtx<'_>) -> Result<(), crate::scenario::ScenarioError>,
}

/// Every protocol the simulator can build from a scenario.
pub const REGISTRY: &[ProtocolEntry] = &[
    ProtocolEntry {
        name: "saw",
        keys: &[
            "timeout_ms",
            "mode",
            "max_retransmissions",
            "ack_delay_max_ms",
            "queue_limit",
        ],
        build: build_saw,
    },
    ProtocolEntry {
        name: "unreliable",
        keys: &[],
        build: build_unreliable,
    },
];

pub fn lookup(name: &str) -> Option<&'static ProtocolEntry> {
    REGISTRY.iter().find(|p| p.name == name)
}

fn ms(v: f64) -> Duration {
    Duration::from_nanos((v * 1e6).round() as u64)
}

fn build_saw(cx: &mut BuildCtx<'_>) -> Result<(), crate::scenario::ScenarioError> {
    let p = cx.params;
    let timeout = p.f64_in("timeout_ms", 100.0, 0.0, 1e9)?;
    let mut cfg = saw::SenderConfig::new(cx.source, cx.group, cx.receivers.to_vec(), ms(timeout));
    cfg.mode = match p.str_or("mode", "multicast")?.as_str() {
        "multicast" => saw::RetransmitMode::Multicast,
        "unicast" => saw::RetransmitMode::Unicast,
        _ => return Err(p.bad("mode", "\"multicast\" or \"unicast\"")),
    };
    cfg.max_retransmissions = p
        .opt_u64("max_retransmissions")?
        .map(|v| v.min(u64::from(u32::MAX)) as u32);
    cfg.queue_limit = p.f64_in("queue_limit", 64.0, 1.0, 1e9)? as usize;
    let delay = ms(p.f64_in("ack_delay_max_ms", 0.0, 0.0, 1e9)?);
    cx.sim
        .add_agent(cx.source, Box::new(saw::Sender::new(cfg)))
        .map_err(|e| p.bad("name", &e.to_string()))?;
    for &r in cx.receivers {
        let mut rc = saw::ReceiverConfig::new(r);
        rc.ack_delay_max = delay;
        let rng = cx.sim.agent_rng(r, 0);
        cx.sim
            .add_agent(r, Box::new(saw::Receiver::new(rc, rng)))
            .map_err(|e| p.bad("name", &e.to_string()))?;
    }
    Ok(())
}

fn build_unreliable(cx: &mut BuildCtx<'_>) -> Result<(), crate::scenario::ScenarioError> {
    let p = cx.params;
    cx.sim
        .add_agent(
            cx.source,
            Box::new(crate::unreliable::Sender::new(cx.source, cx.group)),
        )
        .map_err(|e| p.bad("name", &e.to_string()))?;
    for &r in cx.receivers {
        cx.sim
            .add_agent(r, Box::new(crate::unreliable::Receiver::new()))
            .map_err(|e| p.bad("name", &e.to_string()))?;
    }
    Ok(())
}
