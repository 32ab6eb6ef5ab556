//! `prmp` (seed 004 §2–§4) on sockets: the sender is the polling parent, every receiver a
//! child; the ANNOUNCE carries the receive window S. A DATAPOLL names the children it polls,
//! so the DATA overhead grows with the receivers.
//!
//! **Multi-level** (the tree version seed 004 leaves to future work; the simulator's
//! [`prmp::tree::Relay`]): receivers started with `rmcast recv --region R` are the children
//! of region R's relay, an `rmcast relay --region R` between them and the sender, which hosts
//! the relay ([`prmp::tree::RelayRouter`]) under the node id the sender names for it in the
//! running ANNOUNCE ([`PrmpParams`]). The sender polls the relays and the receivers that
//! named no region; each relay takes its parent's data, acknowledges upstream only what its
//! children hold (no custody, [`prmp::tree::Relay::end_to_end`]: the sender keeps every
//! packet until it is below every relay's left edge, so a standby relay that replaces a dead
//! one, `rmcast relay --standby`, resumes the region's receivers where they were and gets
//! what they lack from the sender), and serves its children as their parent: its own DATA and
//! polls, within its own response quota (the sender's epoch, RR, IPG, MTR and RTO floor, which the
//! ANNOUNCE carries), and its own repairs. A relay's response comes from its address, which the
//! sender takes for the relay's ([`super::SenderSide::helper`]); a relay that never answers ends
//! the session with the reason after [`super::HELPER_WAIT`].

use super::QUEUE_LIMIT;
use super::{
    nodes, Announced, Links, Me, NetProtocol, Received, RegionHelpers, RelayAt, Relayed,
    SenderSettings, SenderSide, Start, Started, WindowUse,
};
use crate::NetError;
use rmcast_proto::{prmp, spec, Agent, GroupId, NodeId, RouterAgent, Time};
use rmcast_wire::session::{PrmpEntry, PrmpParams, PrmpRole};
use std::time::Duration;

/// `prmp` parameters (seed 004 §2–§4) the sender exposes.
#[derive(Debug, Clone)]
pub struct PrmpOpts {
    /// Epoch length ε; rounded up to a multiple of the IPG.
    pub epoch: Duration,
    /// Response rate RR, responses per second the sender plans for.
    pub response_rate: u64,
    /// Inter-packet gap (`--ipg-us`, which `ff` reads too, see [`SenderSettings::ipg`]);
    /// `None`: one datagram at the pacing rate (10 µs when unpaced).
    pub ipg: Option<Duration>,
    /// Multicast threshold ratio MTR.
    pub mtr: f64,
    /// Consecutive unanswered polls after which the sender removes a child; 0 = never (the
    /// session layer's eviction after `--evict-after` of silence removes dead receivers).
    pub silent_polls: u32,
}

impl Default for PrmpOpts {
    fn default() -> Self {
        PrmpOpts {
            epoch: spec::ms(prmp::spec::EPOCH_MS),
            response_rate: prmp::spec::RESPONSE_RATE,
            ipg: None,
            mtr: prmp::spec::MTR,
            silent_polls: prmp::spec::SOCKET_SILENT_POLLS,
        }
    }
}

/// The PRMP configuration for these settings (also used to check the flags before any
/// receiver joins).
pub fn prmp_config(s: &SenderSettings, ids: &[u32]) -> Result<prmp::SenderConfig, NetError> {
    let bad = |e: prmp::ConfigError| NetError::setup(format!("prmp: {e}; check the prmp flags"));
    let mut c = prmp::SenderConfig::new(NodeId(s.node), GroupId(0), nodes(ids));
    c.session = s.session;
    c.window = u64::from(s.window);
    let ipg = s.ipg();
    if ipg.is_zero() {
        return Err(NetError::setup(
            "--ipg-us 0: give a positive inter-packet gap",
        ));
    }
    c.ipg = ipg;
    c.ipg_slack = s.ipg_slack();
    let k = s.prmp.epoch.as_nanos().div_ceil(ipg.as_nanos()).max(1);
    c.epoch = Duration::from_nanos(u64::try_from(k * ipg.as_nanos()).map_err(|_| {
        NetError::setup("--epoch-ms is too long for the inter-packet gap: shorten it")
    })?);
    c.response_rate = s.prmp.response_rate;
    c.mtr = s.prmp.mtr;
    // Off by default: with RTO_i = 2 × RTT_i floored at --rto-ms, ten polls span a few
    // hundred milliseconds, and a receiver stalled that long (measured: stopped for 0.6 s on
    // a loaded host) was removed although alive, and then failed.
    c.max_silent_polls = match s.prmp.silent_polls {
        0 => u32::MAX,
        k => k,
    };
    c.min_rto = s.rto;
    c.queue_limit = QUEUE_LIMIT;
    // Check here: the agent refuses bad values with a reason.
    prmp::Sender::new(c.clone()).map_err(bad)?;
    Ok(c)
}

pub struct Prmp;

impl NetProtocol for Prmp {
    /// Its parameters (the relay table, decoded when the receiver starts).
    fn check_params(&self, _params: &[u8]) -> Result<(), NetError> {
        Ok(())
    }

    /// A DATAPOLL names the children it polls.
    fn data_fields(&self, receivers: usize) -> usize {
        26 + 4 * receivers.min(prmp::MAX_POLL_CLD)
    }

    fn check(&self, s: &SenderSettings) -> Result<(), NetError> {
        prmp_config(s, &[]).map(|_| ())
    }

    fn window_use(&self) -> WindowUse {
        WindowUse::Announced
    }

    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        if start.joined.iter().all(|j| j.1.is_none()) {
            let agent = prmp::Sender::new(prmp_config(s, &start.ids())?)
                .map_err(|e| NetError::setup(format!("prmp: {e}")))?;
            return Started::plain(agent);
        }
        start_levels(s, start)
    }

    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        let mut c = prmp::ReceiverConfig::new(NodeId(me.node), u64::from(a.window()?));
        c.session = me.session;
        Received::plain(prmp::Receiver::new(c))
    }

    /// Region R's relay, for `rmcast relay --region R` in a multi-level session; nothing
    /// (forwarded unexamined) otherwise.
    fn relay(&self, a: Announced<'_>, at: &RelayAt<'_>) -> Result<Option<Relayed>, NetError> {
        relay(a, at)
    }

    /// The sender evicted children: their relay stops polling them.
    fn relay_announced(&self, now: Time, agent: &mut dyn RouterAgent, a: Announced<'_>) {
        let Ok(p) = PrmpParams::decode(a.params) else {
            return;
        };
        let Some(r) = agent
            .as_any_mut()
            .and_then(|x| x.downcast_mut::<prmp::tree::RelayRouter>())
        else {
            return;
        };
        for e in p.entries.iter().filter(|e| e.role == PrmpRole::Evicted) {
            if r.remove_child(now, NodeId(e.node)) {
                tracing::warn!(
                    node = format_args!("{:08x}", e.node),
                    "prmp relay: the sender evicted a child; no longer polling it"
                );
            }
        }
    }
}

/// A multi-level session: the relays named per region, the sender polling them and the
/// receivers without a region.
fn start_levels(s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
    let mut taken = start.ids();
    taken.push(s.node);
    let mut regions: Vec<u16> = start.joined.iter().filter_map(|j| j.1).collect();
    regions.sort_unstable();
    regions.dedup();
    let mut relays = RegionHelpers::new(
        "prmp",
        "relay",
        "response",
        "multi-level prmp polls a region's receivers from its relay",
    );
    let mut entries = Vec::new();
    for &region in &regions {
        let node = relays.name(region, &mut taken);
        entries.push(PrmpEntry {
            node,
            region,
            role: PrmpRole::Relay,
        });
    }
    let mut polled: Vec<u32> = start
        .joined
        .iter()
        .filter(|j| j.1.is_none())
        .map(|j| j.0)
        .collect();
    polled.extend(relays.named().iter().map(|&(_, x)| x));
    for &(node, region, _) in start.joined {
        if let Some(region) = region {
            entries.push(PrmpEntry {
                node,
                region,
                role: PrmpRole::Child,
            });
        }
    }
    let mut c = prmp_config(s, &polled)?;
    // The relays give custody up (their left edge is what their region holds): keep every
    // packet until it is below every left edge, so a standby relay replacing a dead one can
    // get back what the region lacks.
    c.release_at_le = true;
    let micros = |d: Duration| u32::try_from(d.as_micros()).unwrap_or(u32::MAX);
    let params = PrmpParams {
        epoch_ipgs: u32::try_from(c.epoch.as_nanos() / c.ipg.as_nanos().max(1)).unwrap_or(u32::MAX),
        response_rate: u32::try_from(c.response_rate).unwrap_or(u32::MAX),
        ipg_ns: u32::try_from(c.ipg.as_nanos()).unwrap_or(u32::MAX),
        mtr_milli: (c.mtr * 1000.0).round() as u32,
        min_rto_us: micros(c.min_rto),
        entries,
    };
    let agent = prmp::Sender::new(c).map_err(|e| NetError::setup(format!("prmp: {e}")))?;
    Ok(Started {
        agent: Box::new(agent),
        side: Box::new(Levels { params, relays }),
    })
}

/// The sender's side of a multi-level session.
struct Levels {
    params: PrmpParams,
    relays: RegionHelpers,
}

impl Levels {
    fn entry(&self, node: u32) -> Option<&PrmpEntry> {
        self.params.entries.iter().find(|e| e.node == node)
    }
}

impl SenderSide for Levels {
    fn params(&self) -> Result<Vec<u8>, NetError> {
        self.params
            .encode()
            .map_err(|e| NetError::setup(format!("prmp: {e}")))
    }

    /// A region's child evicted: its relay stops polling it; once every child of a region is
    /// gone, the sender stops polling the region's relay.
    fn evicted(&mut self, now: Time, agent: &mut dyn Agent, node: u32) -> bool {
        let Some(e) = self
            .params
            .entries
            .iter_mut()
            .find(|e| e.node == node && e.role == PrmpRole::Child)
        else {
            return false;
        };
        e.role = PrmpRole::Evicted;
        let region = e.region;
        let left = self
            .params
            .entries
            .iter()
            .any(|e| e.region == region && e.role == PrmpRole::Child);
        if let (false, Some(x), Some(s)) = (left, self.relays.of(region), agent.as_sender()) {
            s.remove_receiver(now, NodeId(x));
        }
        true
    }

    fn role(&self, node: u32) -> Option<&'static str> {
        self.entry(node).map(|_| "child of a relay")
    }

    /// A region's child is acknowledged to the sender only through its relay.
    fn reported_by(&self, node: u32) -> Option<u32> {
        self.relays.of(self.entry(node)?.region)
    }

    fn helper(&mut self, _now: Time, node: u32) -> bool {
        self.relays.heard(node)
    }

    fn stalled(&mut self, now: Time) -> Option<String> {
        self.relays.stalled(now)
    }
}

/// Windows of packets a relay keeps waiting for its children before it stops taking its
/// parent's data ([`prmp::tree::RelayConfig::backlog_limit`]).
pub const RELAY_BACKLOG_WINDOWS: usize = 4;

/// Region R's relay for `rmcast relay --region R`, from the running ANNOUNCE.
fn relay(a: Announced<'_>, at: &RelayAt<'_>) -> Result<Option<Relayed>, NetError> {
    let Some(region) = at.region else {
        return Ok(None);
    };
    if a.params.is_empty() {
        tracing::warn!(
            region,
            "single-level prmp (no receiver joined with --region): the sender polls every \
             receiver; forwarding unexamined"
        );
        return Ok(None);
    }
    let p = a.params_as(PrmpParams::decode)?;
    let Some(me) = p
        .entries
        .iter()
        .find(|e| e.role == PrmpRole::Relay && e.region == region)
    else {
        tracing::warn!(
            region,
            "the sender named no relay for region {region} (no receiver of that region \
             joined): forwarding unexamined"
        );
        return Ok(None);
    };
    let children: Vec<NodeId> = p
        .entries
        .iter()
        .filter(|e| e.region == region && e.role == PrmpRole::Child)
        .map(|e| NodeId(e.node))
        .collect();
    let strangers: Vec<String> = at
        .receivers
        .iter()
        .map(|&(_, n)| n)
        .filter(|&n| !p.entries.iter().any(|e| e.node == n && e.region == region))
        .map(|n| format!("{n:08x}"))
        .collect();
    if !strangers.is_empty() {
        tracing::error!(
            region,
            "receivers below this relay joined without --region {region} ({}): a region's \
             relay serves only its region; not hosting it (the sender will end the session \
             when region {region}'s relay does not answer)",
            strangers.join(", ")
        );
        return Ok(None);
    }
    let window = u64::from(a.window()?);
    let mut up = prmp::ReceiverConfig::new(NodeId(me.node), window);
    up.session = at.session;
    let mut down = prmp::SenderConfig::new(NodeId(me.node), GroupId(0), children);
    down.session = at.session;
    down.window = window;
    down.ipg = Duration::from_nanos(u64::from(p.ipg_ns));
    down.epoch = down.ipg * p.epoch_ipgs;
    down.response_rate = u64::from(p.response_rate);
    down.mtr = f64::from(p.mtr_milli) / 1000.0;
    down.min_rto = Duration::from_micros(u64::from(p.min_rto_us));
    down.max_silent_polls = u32::MAX;
    let n = down.receivers.len();
    let mut agent = prmp::tree::RelayRouter::new(
        prmp::tree::RelayConfig {
            upstream: up,
            downstream: down,
            messages: None,
            // A relay's memory stays bounded whatever its children's pace.
            backlog_limit: Some(RELAY_BACKLOG_WINDOWS * usize::try_from(window).unwrap_or(1)),
        },
        NodeId(at.sender),
    )
    .map_err(|e| NetError::Failed(format!("prmp: the sender's relay parameters: {e}")))?;
    // No custody: it acknowledges upstream what its children hold, and starts where they are
    // (at 0 with the session, where a dead relay left them when it is a standby taking over).
    agent.end_to_end();
    tracing::info!(
        region,
        relay = format_args!("{:08x}", me.node),
        children = n,
        "prmp: hosting region {region}'s relay"
    );
    Ok(Some(Relayed {
        agent: Box::new(agent),
        links: Links::Interfaces,
        node: Some(me.node),
        local_group: None,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::tests::settings;
    use crate::agents::{Joiner, HELPER_WAIT};
    use rmcast_wire::Family;
    use std::net::SocketAddr;

    fn announce(raw: &[u8]) -> Announced<'_> {
        Announced {
            protocol: Family::Prmp as u8,
            window: 64,
            ack_delay_us: 0,
            ack_timeout_us: 0,
            params: raw,
            running: true,
        }
    }

    fn addr(k: u8) -> SocketAddr {
        SocketAddr::from(([10, 0, 0, k], 5000))
    }

    /// Receivers 5 and 6 of region 1, 7 of region 2, 8 without a region: the sender names a
    /// relay for each region, announces the relays, the children and its settings, polls
    /// the relays and 8; region 1's relay polls 5 and 6 with the sender's settings.
    #[test]
    fn regions_make_relays_the_sender_polls_and_a_relay_serves_its_region() {
        let s = settings();
        let joined: Vec<Joiner> = vec![
            (5, Some(1), addr(1)),
            (6, Some(1), addr(2)),
            (7, Some(2), addr(3)),
            (8, None, addr(4)),
        ];
        let g: SocketAddr = "239.1.2.3:5000".parse().unwrap();
        let start = Start {
            joined: &joined,
            group: g,
            stream: "",
        };
        let mut started = Prmp.start(&s, &start).unwrap();
        let raw = started.side.params().unwrap();
        let p = PrmpParams::decode(&raw).unwrap();
        let relays: Vec<(u16, u32)> = p
            .entries
            .iter()
            .filter(|e| e.role == PrmpRole::Relay)
            .map(|e| (e.region, e.node))
            .collect();
        assert_eq!(relays, [(1, 0xEC00_0001), (2, 0xEC00_0002)]);
        let c = prmp_config(&s, &[]).unwrap();
        assert_eq!(
            u128::from(p.epoch_ipgs) * c.ipg.as_nanos(),
            c.epoch.as_nanos(),
            "the epoch is a whole number of IPGs"
        );
        assert_eq!(started.side.reported_by(6), Some(0xEC00_0001));
        assert_eq!(started.side.reported_by(8), None);
        assert_eq!(started.side.role(5), Some("child of a relay"));
        assert_eq!(started.side.role(8), None);
        assert!(
            !started.side.helper(Time::ZERO, 6),
            "a receiver is no helper"
        );
        // The sender's polls name the relays and 8, never a region's child.
        started
            .agent
            .as_sender()
            .unwrap()
            .send(Time::ZERO, bytes::Bytes::from_static(b"x"))
            .unwrap();
        let mut named = Vec::new();
        while let Some(t) = started.agent.poll_transmit() {
            if let Ok(rmcast_wire::Packet {
                message:
                    rmcast_wire::Message::Prmp(
                        rmcast_wire::prmp::Message::DataPoll { cld, .. }
                        | rmcast_wire::prmp::Message::Poll { cld, .. },
                    ),
                ..
            }) = rmcast_wire::Packet::decode(&t.payload)
            {
                named.extend(cld.iter());
            }
        }
        named.sort_unstable();
        named.dedup();
        assert!(!named.is_empty());
        for n in &named {
            assert!([8, 0xEC00_0001, 0xEC00_0002].contains(n), "polled {n:08x}");
        }
        // A relay that never answers ends the session with the remedy.
        let t0 = Time::ZERO + Duration::from_secs(1);
        assert!(started.side.stalled(t0).is_none());
        assert!(started.side.helper(t0, 0xEC00_0001));
        let why = started
            .side
            .stalled(t0 + HELPER_WAIT)
            .expect("region 2's relay is silent");
        assert!(why.contains("rmcast relay --region 2"), "{why}");
        // Region 1's relay, below which 5 and 6 joined.
        let a = announce(&raw);
        let at = RelayAt {
            session: 9,
            sender: 1,
            node: 77,
            receivers: &[(rmcast_proto::IfaceId(1), 5), (rmcast_proto::IfaceId(2), 6)],
            region: Some(1),
            group: g,
        };
        let r = Prmp.relay(a, &at).unwrap().expect("region 1's relay");
        // A region's relay gives custody up (a standby may take it over).
        assert!(!Prmp.relay_custody(a, Some(1)));
        assert_eq!(r.node, Some(0xEC00_0001));
        assert_eq!(r.links, Links::Interfaces);
        // Without --region, or for a region with a stranger below it: forwarded.
        let none = RelayAt { region: None, ..at };
        assert!(Prmp.relay(a, &none).unwrap().is_none());
        let mixed = RelayAt {
            receivers: &[(rmcast_proto::IfaceId(1), 5), (rmcast_proto::IfaceId(2), 8)],
            ..at
        };
        assert!(Prmp.relay(a, &mixed).unwrap().is_none());
        // Single-level (no region joined): empty parameters, nothing for a relay.
        let plain = Prmp
            .start(
                &s,
                &Start {
                    joined: &[(5, None, addr(1))],
                    ..start
                },
            )
            .unwrap();
        assert!(plain.side.params().unwrap().is_empty());
        assert!(Prmp.relay(announce(&[]), &at).unwrap().is_none());
        // Malformed parameters are an error, not a panic.
        assert!(Prmp.relay(announce(&[1, 2, 3]), &at).is_err());
    }

    /// Evicting a region's last child stops the sender polling its relay, and the relay
    /// is told through the ANNOUNCE.
    #[test]
    fn evicting_a_region_empties_it() {
        let s = settings();
        let joined: Vec<Joiner> = vec![(5, Some(1), addr(1)), (8, None, addr(4))];
        let start = Start {
            joined: &joined,
            group: "239.1.2.3:5000".parse().unwrap(),
            stream: "",
        };
        let mut started = Prmp.start(&s, &start).unwrap();
        let Started { agent, side } = &mut started;
        assert!(side.evicted(Time::ZERO, &mut **agent, 5));
        assert!(
            !side.evicted(Time::ZERO, &mut **agent, 8),
            "8 is no region's child"
        );
        let p = PrmpParams::decode(&side.params().unwrap()).unwrap();
        assert!(p
            .entries
            .iter()
            .any(|e| e.node == 5 && e.role == PrmpRole::Evicted));
        assert!(
            !agent
                .as_sender()
                .unwrap()
                .remove_receiver(Time::ZERO, NodeId(0xEC00_0001)),
            "the relay already left the sender's children"
        );
        assert!(
            agent
                .as_sender()
                .unwrap()
                .remove_receiver(Time::ZERO, NodeId(8)),
            "8 is still a child"
        );
    }
}
