//! The testbed's hook: every link of a scenario's network (or its one bus) emulated on the
//! segments `rmcast testbed` built for it, with the scenario's loss rules.

use super::chain::unbridge;
use super::model::{Medium, MediumSpec};
use super::plan::{bus_spec, link_spec, Sites};
use super::{Channel, EmuSpec, Emulator, Port};
use crate::netns::Segment;
use rmcast_net::NetError;
use rmcast_proto::NodeId;
use rmcast_sim::loss::LossRule;
use rmcast_sim::{Network, SimRng};

/// Start an emulator on each of `segments` (segment `i` is link `i`'s, or with a bus and no
/// links the bus's): `port(i, n)` names node `n`'s interface on segment `i` in its switch
/// namespace. `rules` are the run's loss rules in the simulator's order, seeded by `seed`.
/// Only the links `carried` says yes to are emulated (the others carry nothing: the testbed
/// lays out the source's tree to the receivers only).
pub fn emulate(
    net: &Network,
    rules: &[LossRule],
    seed: u64,
    segments: &[Segment],
    port: &dyn Fn(usize, NodeId) -> Option<String>,
    carried: &dyn Fn(usize) -> bool,
) -> Result<Vec<Emulator>, NetError> {
    let mut sites = Sites::new(net, rules, seed)?;
    let missing = |i: usize, n: NodeId| {
        NetError::setup(format!("segment {i} has no interface toward node {}", n.0))
    };
    let seg = |i: usize| {
        segments
            .get(i)
            .ok_or_else(|| NetError::setup(format!("no segment for link {i}")))
    };
    let mut out = Vec::new();
    if net.link_count() == 0 && net.bus_count() == 1 {
        let members = net.bus_members(0).unwrap_or_default();
        let ports = members
            .iter()
            .map(|&n| port(0, n).ok_or_else(|| missing(0, n)))
            .collect::<Result<Vec<_>, _>>()?;
        let s = seg(0)?;
        let refs: Vec<&str> = ports.iter().map(String::as_str).collect();
        unbridge(s, &refs)?;
        out.push(Emulator::start(bus_spec(
            net,
            0,
            &s.switch(),
            ports,
            &sites,
        )?)?);
        return Ok(out);
    }
    if net.bus_count() > 0 {
        return Err(NetError::setup(
            "the emulator runs links, or one bus alone, not both",
        ));
    }
    for i in (0..net.link_count()).filter(|&i| carried(i)) {
        let Some((a, b, _)) = net.link(i) else {
            continue;
        };
        let ends = [
            port(i, a).ok_or_else(|| missing(i, a))?,
            port(i, b).ok_or_else(|| missing(i, b))?,
        ];
        let s = seg(i)?;
        unbridge(s, &[&ends[0], &ends[1]])?;
        let spec = link_spec(net, i, &s.switch(), ends, &mut sites, seed)?;
        out.push(Emulator::start(spec)?);
    }
    Ok(out)
}

/// Make every host of `seg` a member of one shared medium of `rate_bps` (seed 000's and seed
/// 002's 10 Mb/s Ethernet): the hosts' ports taken off the bridge, one emulator whose single
/// serialiser carries each member's frames, in the order they came, to every other member.
/// No collisions or backoff (a frame waits for the medium instead), no propagation delay, an
/// unbounded queue, no loss. For code that runs endpoints on a [`Segment`]'s hosts.
pub fn shared_medium(seg: &Segment, rate_bps: u64) -> Result<Emulator, NetError> {
    let ports: Vec<String> = (0..seg.hosts()).map(|h| seg.port(h)).collect();
    let refs: Vec<&str> = ports.iter().map(String::as_str).collect();
    unbridge(seg, &refs)?;
    let spec = MediumSpec {
        rate_bps,
        delay_ns: 0,
        jitter_ns: None,
        reorder: false,
        queue: None,
    };
    Emulator::start(EmuSpec {
        name: format!("shared medium on {}", seg.switch()),
        netns: Some(seg.switch()),
        ports: ports
            .into_iter()
            .map(|ifname| Port {
                ifname,
                channel: 0,
                iface: 0,
                tx: None,
                rx: None,
            })
            .collect(),
        channels: vec![Channel {
            medium: Medium::new(spec, SimRng::new(0, 0, 0, 0)),
            loss: Vec::new(),
        }],
    })
}
