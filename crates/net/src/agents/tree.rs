//! Seed 001's three protocols on sockets — `dsp`, `csp` and `cp`, one wire family, one
//! adapter ([`Tree`]) — with local regions.
//!
//! **`dsp`.** every receiver joins with a region number
//! (`rmcast recv --region`, default 0). When the transfer starts, the sender elects in each
//! region the joined receiver with the **lowest node id** as its designated receiver `E_i1`
//! and announces every receiver's region, role and unicast address in the running ANNOUNCE
//! ([`rmcast_wire::session::DspParams`]). The designated receiver reports its own status to
//! the sender and re-multicasts what its members lack on the region's local group
//! ([`local_group`]: the session's group address, port + 1 + region); members join that group
//! and send their status to the designated receiver.
//!
//! **Re-election.** When the session evicts a region's designated receiver (silent for
//! `--evict-after`), the sender designates the region's member with the **lowest remaining
//! node id** ([`Regions`]), makes it the source's reporter in the evicted one's place
//! ([`tree::Source::replace_reporter`]) and announces the new role in the running ANNOUNCE;
//! members re-point their statuses and accept local repairs from it, and it repairs them
//! from the delivered blocks every member keeps for the purpose (`standby`,
//! [`STANDBY_WINDOWS`] windows), while the source re-multicasts globally what it lacks from
//! the acknowledged blocks it keeps (`history`, as many). Lowest node id rather than
//! highest `LW_r`: the sender knows no member's `LW_r` (members report it to the designated
//! receiver that just died; the session's byte counts are up to a report interval old), any
//! member can serve since each keeps the blocks the others may still lack, and the rule is
//! the start's own, so every receiver and the operator can tell who it will be. The
//! ANNOUNCE's role wins: a designated receiver that only stalled and comes back finds
//! itself evicted and another designated, and steps down (it reports to the new one and
//! repairs nobody), so a region never has two.

//!
//! **`csp` and `cp`.** A region's local exchange `L_i` is a node inside the network, as in the
//! paper: `rmcast relay --region R` between the sender and region R's receivers hosts it
//! ([`tree::Exchange`], the simulator's router agent). The sender names one exchange per
//! region that has receivers ([`DspRole::Exchange`] entries in the running ANNOUNCE, node ids
//! it picks, [`super::helper_id`]) and makes them the source's reporters; every receiver is a
//! [`DspRole::Consolidated`] (csp) or [`DspRole::Combined`] (cp) endpoint that sends its status
//! to its region's exchange — through the relay it receives from, since a receiver sends
//! unicast for a node it does not know to the address its session comes from. The relay that
//! hosts the exchange answers to the exchange's node id, sends the consolidated status up and
//! (cp) ASSIGN orders down to the endpoint that holds a block, and carries the region's local
//! group ([`local_group`]) between its downstream interfaces, so an endpoint's local
//! re-multicast reaches the region's endpoints on every interface. The sender takes the
//! exchange's status from whatever address it comes (a relay's) and ends the transfer with
//! the reason when an exchange has not spoken [`super::HELPER_WAIT`] after the start (no relay
//! hosts it). An evicted endpoint is announced as evicted and its exchange stops waiting for
//! it. The gathering ANNOUNCE carries which of the three runs ([`Tree::gathering_params`]),
//! so a relay can refuse a `dsp` session (its members reach their designated receiver at its
//! own address) at once.
use super::{Announced, Me, NetProtocol, Received, ReceiverSide, SenderSettings, SenderSide};
use super::{
    Joiner, Links, RegionHelpers, RelayAt, Relayed, Start, Started, WindowUse, QUEUE_LIMIT,
};
use crate::NetError;
use rmcast_proto::rng::AgentRng;
use rmcast_proto::tree::Variant;
use rmcast_proto::SenderAgent;
use rmcast_proto::{spec, tree, Agent, GroupId, NodeId, RouterAgent, Time};
use rmcast_wire::session::{DspEntry, DspParams, DspRole};
use rmcast_wire::{HEADER_LEN, MAX_DATAGRAM};
use std::net::SocketAddr;
use std::time::Duration;

/// `dsp` parameters (seed 001) the sender exposes.
#[derive(Debug, Clone)]
pub struct DspOpts {
    /// Round-trip delay assumed to every designated receiver (`RTD_i`): a block is
    /// re-multicast globally once a designated receiver's status lacks it `r_f × RTD` after it
    /// was sent.
    pub rtd: Duration,
    /// Retransmission timeout factor `r_f`.
    pub r_f: f64,
    /// Mean status interval; each interval is drawn from [0.8, 1.2] × this (the paper: 4–6 ms).
    pub status_interval: Duration,
    /// Round-trip delay inside a region (hold-off of local re-multicasts: `r_f ×` this).
    pub local_rtd: Duration,
    /// dsp: each region's designated receiver is the `rmcast relay --region R` between the
    /// sender and the region (`--designated relay`), not one of its receivers.
    pub designated_relays: bool,
}

impl Default for DspOpts {
    fn default() -> Self {
        DspOpts {
            rtd: spec::ms(tree::spec::SOCKET_RTD_MS),
            r_f: tree::spec::R_F,
            status_interval: spec::ms(tree::spec::STATUS_MS),
            local_rtd: spec::ms(tree::spec::LOCAL_RTD_MS),
            designated_relays: false,
        }
    }
}

/// Check the dsp flags before any receiver joins.
pub fn check_dsp(d: &DspOpts) -> Result<(), NetError> {
    if !(d.r_f.is_finite() && d.r_f >= 1.0 && d.r_f <= 1000.0) {
        return Err(NetError::setup(format!(
            "--rf {} is out of range: give a retransmission timeout factor from 1 to 1000 (the paper: 1.2)",
            d.r_f
        )));
    }
    if d.status_interval.is_zero() || d.status_interval > Duration::from_secs(1) {
        return Err(NetError::setup(
            "--status-ms must be above 0 and at most 1000 (the paper: 4–6 ms, i.e. 5)",
        ));
    }
    Ok(())
}

/// The local multicast group of `region` for a session on `group`: the same address, port
/// `group.port() + 1 + region`.
pub fn local_group(group: SocketAddr, region: u16) -> Result<SocketAddr, NetError> {
    let port = u32::from(group.port()) + 1 + u32::from(region);
    let port = u16::try_from(port).map_err(|_| {
        NetError::setup(format!(
            "--region {region}: the local group's port {port} (group port + 1 + region) is above \
             65535; use a smaller region number or group port"
        ))
    })?;
    Ok(SocketAddr::new(group.ip(), port))
}

/// Windows of delivered blocks a member keeps to serve its region if it is elected
/// designated, and of acknowledged blocks the source keeps for it: a member lags the newest
/// block by at most `R + C` (reassembly plus retransmission buffer, one window each); one
/// more window of margin.
pub const STANDBY_WINDOWS: u32 = 3;

/// Elect the designated receiver of every region: the lowest node id among the receivers
/// of the region. `receivers` are `(node, region, unicast address)`.
pub fn elect(receivers: &[Joiner]) -> Vec<DspEntry> {
    let mut out: Vec<DspEntry> = receivers
        .iter()
        .map(|&(node, region, addr)| DspEntry {
            node,
            region: region.unwrap_or(0),
            role: DspRole::Member,
            addr,
        })
        .collect();
    let mut regions: Vec<u16> = out.iter().map(|e| e.region).collect();
    regions.sort_unstable();
    regions.dedup();
    for r in regions {
        let lowest = out.iter().filter(|e| e.region == r).map(|e| e.node).min();
        for e in out.iter_mut() {
            if Some(e.node) == lowest {
                e.role = DspRole::Designated;
            }
        }
    }
    out
}

/// The `dsp` announce parameters for `entries`.
pub fn dsp_params(d: &DspOpts, entries: Vec<DspEntry>) -> DspParams {
    let us = |t: Duration| u32::try_from(t.as_micros()).unwrap_or(u32::MAX);
    DspParams {
        status_min_us: us(d.status_interval.mul_f64(0.8)),
        status_max_us: us(d.status_interval.mul_f64(1.2)),
        local_rtd_us: us(d.local_rtd),
        r_f_milli: (d.r_f * 1000.0).round() as u32,
        entries,
    }
}

/// `dsp`, `csp` or `cp` on sockets: one adapter for the three (they share wire family 4, so a
/// receiver's or relay's adapter is the family's and reads the variant from the ANNOUNCE).
pub struct Tree(pub Variant);

/// The `dsp` adapter.
pub static DSP: Tree = Tree(Variant::Dsp);
/// The `csp` adapter.
pub static CSP: Tree = Tree(Variant::Csp);
/// The `cp` adapter.
pub static CP: Tree = Tree(Variant::Cp);

/// The gathering ANNOUNCE's parameter byte of each variant (and of dsp with designated
/// relays, [`DSP_ON_RELAYS`]).
fn variant_code(v: Variant) -> u8 {
    match v {
        Variant::Dsp => 0,
        Variant::Csp => 1,
        Variant::Cp => 2,
    }
}

/// The gathering ANNOUNCE's parameter byte of dsp whose designated receivers are relays.
const DSP_ON_RELAYS: u8 = 3;

/// Whether a dsp ANNOUNCE puts its designated receivers on relays: the gathering one's byte,
/// or a running one naming a designated receiver without an address (hosted by a relay).
fn dsp_on_relays(a: &Announced<'_>) -> bool {
    if !a.running {
        return a.params == [DSP_ON_RELAYS];
    }
    DspParams::decode(a.params).is_ok_and(|p| {
        p.entries
            .iter()
            .any(|e| e.role == DspRole::Designated && e.addr.ip().is_unspecified())
    })
}

/// Which of the three an ANNOUNCE runs: the gathering one's byte, or the running one's roles
/// (`None`: it does not say, or not in a form this build reads).
pub fn announced_variant(a: &Announced<'_>) -> Option<Variant> {
    if !a.running {
        return match a.params {
            [0] | [DSP_ON_RELAYS] => Some(Variant::Dsp),
            [1] => Some(Variant::Csp),
            [2] => Some(Variant::Cp),
            _ => None,
        };
    }
    let p = DspParams::decode(a.params).ok()?;
    let role = |r: DspRole| p.entries.iter().any(|e| e.role == r);
    if role(DspRole::Combined) {
        Some(Variant::Cp)
    } else if role(DspRole::Consolidated) || role(DspRole::Exchange) {
        Some(Variant::Csp)
    } else if role(DspRole::Designated) || role(DspRole::Member) {
        Some(Variant::Dsp)
    } else {
        None
    }
}

impl NetProtocol for Tree {
    /// Its parameters (the variant byte or the regions, checked in the announce check).
    fn check_params(&self, _params: &[u8]) -> Result<(), NetError> {
        Ok(())
    }

    fn relay_refusal(&self, a: Announced<'_>) -> Option<&'static str> {
        (announced_variant(&a) == Some(Variant::Dsp) && !dsp_on_relays(&a)).then_some(
            "its members send their status to their designated receiver's own address and it \
             repairs them on a local group, which a relay does not carry (csp and cp pass, and \
             dsp sent with --designated relay, whose designated receivers are relays)",
        )
    }

    fn relay_announced(&self, now: Time, agent: &mut dyn RouterAgent, a: Announced<'_>) {
        let Ok(p) = DspParams::decode(a.params) else {
            return;
        };
        let Some(any) = agent.as_any_mut() else {
            return;
        };
        for e in p.entries.iter().filter(|e| e.role == DspRole::Evicted) {
            let node = NodeId(e.node);
            let dropped = if let Some(x) = any.downcast_mut::<tree::Exchange>() {
                x.remove_endpoint(node)
            } else if let Some(d) = any.downcast_mut::<tree::HostedDesignated>() {
                d.remove_member(now, node)
            } else {
                false
            };
            if dropped {
                tracing::warn!(
                    node = format_args!("{:08x}", e.node),
                    "the sender evicted a receiver of this region; no longer waiting for it"
                );
            }
        }
    }

    fn gathering_params(&self, cfg: &crate::sender::SendConfig) -> Vec<u8> {
        match self.0 {
            Variant::Dsp if cfg.dsp.designated_relays => vec![DSP_ON_RELAYS],
            v => vec![variant_code(v)],
        }
    }

    fn data_fields(&self, _receivers: usize) -> usize {
        12
    }

    fn check(&self, s: &SenderSettings) -> Result<(), NetError> {
        check_dsp(&s.dsp)
    }

    fn window_use(&self) -> WindowUse {
        WindowUse::Announced
    }

    fn needs_relay(&self) -> bool {
        matches!(self.0, Variant::Csp | Variant::Cp)
    }

    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        match self.0 {
            Variant::Dsp if s.dsp.designated_relays => consolidated::start(Variant::Dsp, s, start),
            Variant::Dsp => self.start_dsp(s, start),
            v => consolidated::start(v, s, start),
        }
    }

    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        if !a.running {
            return Ok(None);
        }
        if matches!(announced_variant(&a), Some(Variant::Csp | Variant::Cp)) {
            return consolidated::endpoint(a, me);
        }
        Ok(endpoint(a, me)?.map(|(agent, place)| {
            tracing::info!(
                region = place.region,
                designated = place.designated_node,
                local_group = %place.local_group,
                "dsp: {} of region {}",
                if place.designated { "designated receiver" } else { "member" },
                place.region
            );
            Received {
                agent: Box::new(agent),
                side: Box::new(place),
            }
        }))
    }

    /// csp and cp: the local exchange of the relay's region (`rmcast relay --region R`);
    /// nothing (forwarded unexamined) for a relay without a region or a region the sender
    /// named no exchange for.
    fn relay(&self, a: Announced<'_>, at: &RelayAt<'_>) -> Result<Option<Relayed>, NetError> {
        if dsp_on_relays(&a) {
            return consolidated::designated(a, at);
        }
        consolidated::exchange(a, at)
    }

    fn variant_name(&self, a: &Announced<'_>) -> Option<&'static str> {
        announced_variant(a).map(Variant::name)
    }
}

impl Tree {
    fn start_dsp(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        let entries = elect(start.joined);
        for e in entries.iter().filter(|e| e.role == DspRole::Designated) {
            tracing::info!(
                node = e.node,
                region = e.region,
                local_group = %local_group(start.group, e.region)?,
                "designated receiver"
            );
        }
        let designated: Vec<u32> = entries
            .iter()
            .filter(|e| e.role == DspRole::Designated)
            .map(|e| e.node)
            .collect();
        let reporters = designated
            .iter()
            .map(|&epi| tree::Reporter {
                epi,
                rtd: s.dsp.rtd,
                slack: Duration::ZERO,
            })
            .collect();
        let mut c =
            tree::SourceConfig::new(NodeId(s.node), GroupId(0), reporters, u32::from(s.window));
        c.session = s.session;
        c.r_f = s.dsp.r_f;
        // The source paces itself at the driver's rate, so a block's send time is when
        // it leaves rather than when it joins a queue behind the pacer (re-multicasts
        // would otherwise be timed from the queueing and repeat themselves).
        c.rate_bps = s.rate_bps;
        c.burst_bytes = s.pacing_burst();
        c.queue_limit = QUEUE_LIMIT;
        c.history = STANDBY_WINDOWS * u32::from(s.window);
        Ok(Started {
            agent: Box::new(tree::Source::new(c)),
            side: Box::new(Regions {
                opts: s.dsp.clone(),
                entries,
                designated,
                former: Vec::new(),
                elections: Vec::new(),
            }),
        })
    }
}

/// The endpoints' timing a running ANNOUNCE carries.
struct Timing {
    status_min: Duration,
    status_max: Duration,
    local_rtd: Duration,
    r_f: f64,
}

impl Timing {
    fn of(p: &DspParams) -> Self {
        Timing {
            status_min: Duration::from_micros(u64::from(p.status_min_us)),
            status_max: Duration::from_micros(u64::from(p.status_max_us.max(p.status_min_us))),
            local_rtd: Duration::from_micros(u64::from(p.local_rtd_us)),
            r_f: f64::from(p.r_f_milli) / 1000.0,
        }
    }
}

/// The running ANNOUNCE's parameters for `entries`, refused when they do not fit one datagram.
fn announce_entries(opts: &DspOpts, entries: &[DspEntry]) -> Result<Vec<u8>, NetError> {
    if entries.is_empty() {
        return Ok(Vec::new());
    }
    let raw = dsp_params(opts, entries.to_vec())
        .encode()
        .map_err(|e| NetError::Failed(format!("cannot announce the regions: {e}")))?;
    // The running ANNOUNCE carries the member list and every receiver's entry at once.
    if HEADER_LEN + 16 + 4 * entries.len() + raw.len() > MAX_DATAGRAM {
        return Err(NetError::Failed(format!(
            "the ANNOUNCE carries every receiver's region and address in one datagram: {} \
             receivers do not fit (at most about 2,000)",
            entries.len()
        )));
    }
    Ok(raw)
}

/// The sender's regions: every receiver's entry as the running ANNOUNCE carries it.
struct Regions {
    opts: DspOpts,
    entries: Vec<DspEntry>,
    /// The designated receivers now (elected at the start or re-elected since).
    designated: Vec<u32>,
    /// Designated receivers the session evicted and replaced.
    former: Vec<u32>,
    /// What re-election did, for the summary.
    elections: Vec<String>,
}

impl Regions {
    /// The member of `region` to designate in place of an evicted designated receiver: the
    /// lowest node id among those not evicted.
    fn successor(&self, region: u16) -> Option<u32> {
        self.entries
            .iter()
            .filter(|e| e.region == region && e.role == DspRole::Member)
            .map(|e| e.node)
            .min()
    }
}

impl SenderSide for Regions {
    fn params(&self) -> Result<Vec<u8>, NetError> {
        announce_entries(&self.opts, &self.entries)
    }

    /// Mark the evicted receiver in the announce (its designated receiver stops waiting for
    /// it); if it was its region's designated receiver, designate the next one
    /// ([`Regions::successor`]) and make it the source's reporter for the region.
    fn evicted(&mut self, now: Time, agent: &mut dyn Agent, node: u32) -> bool {
        let Some(e) = self.entries.iter_mut().find(|e| e.node == node) else {
            return false;
        };
        let was_designated = e.role == DspRole::Designated;
        let region = e.region;
        e.role = DspRole::Evicted;
        if !was_designated {
            return true;
        }
        self.designated.retain(|&d| d != node);
        self.former.push(node);
        let Some(next) = self.successor(region) else {
            let note = format!(
                "region {region}: designated receiver {node:08x} evicted; no receiver left to designate"
            );
            tracing::warn!("{note}");
            self.elections.push(note);
            return true;
        };
        let Some(source) = agent
            .as_any_mut()
            .and_then(|a| a.downcast_mut::<tree::Source>())
        else {
            tracing::error!("dsp: the sender's agent is not a tree source; cannot re-elect");
            return true;
        };
        source.replace_reporter(
            now,
            NodeId(node),
            tree::Reporter {
                epi: next,
                rtd: self.opts.rtd,
                slack: Duration::ZERO,
            },
        );
        if let Some(e) = self.entries.iter_mut().find(|e| e.node == next) {
            e.role = DspRole::Designated;
        }
        self.designated.push(next);
        let note = format!(
            "region {region}: designated receiver {node:08x} evicted; {next:08x} elected \
             (lowest remaining node id) and announced"
        );
        tracing::warn!("{note}");
        self.elections.push(note);
        true
    }

    fn role(&self, node: u32) -> Option<&'static str> {
        Some(if self.designated.contains(&node) {
            "designated"
        } else if self.former.contains(&node) {
            "former designated"
        } else {
            "member"
        })
    }

    /// A member's statuses go to its region's designated receiver, never to the sender.
    fn reported_by(&self, node: u32) -> Option<u32> {
        let e = self.entries.iter().find(|e| e.node == node)?;
        if e.role == DspRole::Designated {
            return None;
        }
        self.entries
            .iter()
            .find(|d| d.region == e.region && d.role == DspRole::Designated)
            .map(|d| d.node)
    }

    fn role_changes(&self) -> Vec<String> {
        self.elections.clone()
    }
}

/// A receiver's place in a `dsp` session.
#[derive(Debug, Clone)]
pub struct DspPlace {
    /// This receiver's node id.
    pub me: u32,
    /// Its region (`rmcast recv --region`).
    pub region: u16,
    /// Whether it is its region's designated receiver.
    pub designated: bool,
    /// Its designated receiver (itself when designated).
    pub designated_node: u32,
    /// The peers it takes protocol packets from besides the sender and sends to: its
    /// designated receiver (a member) or its members (the designated receiver).
    pub peers: Vec<(u32, SocketAddr)>,
    /// Its region's local group ([`local_group`]).
    pub local_group: SocketAddr,
}

impl DspPlace {
    /// Take the role `entries` give this receiver ([`ReceiverSide::announced`]).
    fn follow(&mut self, now: Time, endpoint: &mut tree::Endpoint, entries: &[DspEntry]) {
        let region = self.region;
        let named = entries
            .iter()
            .find(|e| e.region == region && e.role == DspRole::Designated);
        let Some(named) = named else {
            // Nobody designated (everyone else evicted): keep the role held.
            return;
        };
        if named.node == self.me {
            let members: Vec<(u32, SocketAddr)> = entries
                .iter()
                .filter(|e| e.region == region && e.role == DspRole::Member && e.node != self.me)
                .map(|e| (e.node, e.addr))
                .collect();
            if !self.designated {
                tracing::warn!(
                    region,
                    former = self.designated_node,
                    "dsp: the sender designated this receiver for region {region}"
                );
                endpoint.reassign(
                    now,
                    tree::Role::Designated {
                        members: members.iter().map(|m| NodeId(m.0)).collect(),
                        local_group: GroupId(1 + u32::from(region)),
                    },
                );
                self.designated = true;
                self.designated_node = self.me;
                self.peers = members;
            }
            for e in entries
                .iter()
                .filter(|e| e.role == DspRole::Evicted && e.region == region)
            {
                endpoint.remove_receiver(now, NodeId(e.node));
            }
        } else if named.node != self.designated_node {
            tracing::warn!(
                region,
                designated = named.node,
                "dsp: {} region {region}'s designated receiver {:08x}",
                if self.designated {
                    "stepping down: the sender named"
                } else {
                    "re-pointing to"
                },
                named.node
            );
            endpoint.reassign(
                now,
                tree::Role::Member {
                    designated: NodeId(named.node),
                },
            );
            self.designated = false;
            self.designated_node = named.node;
            self.peers = designated_peer(named);
        }
    }
}

impl ReceiverSide for DspPlace {
    fn peers(&self) -> &[(u32, SocketAddr)] {
        &self.peers
    }

    fn local_group(&self) -> Option<SocketAddr> {
        Some(self.local_group)
    }

    /// A member joins the region's local group, where its designated receiver repairs.
    fn join(&self) -> Option<SocketAddr> {
        (!self.designated).then_some(self.local_group)
    }

    /// Follow the running ANNOUNCE: a designated receiver stops waiting for members the
    /// sender evicted; when the sender designated another receiver of the region, a member
    /// re-points to it, the one named takes the role, and a designated receiver that is no
    /// longer named (it stalled, was evicted and replaced) steps down.
    fn announced(&mut self, now: Time, agent: &mut dyn Agent, params: &[u8]) {
        if params.is_empty() {
            return;
        }
        let Ok(p) = DspParams::decode(params) else {
            return;
        };
        let Some(endpoint) = agent
            .as_any_mut()
            .and_then(|a| a.downcast_mut::<tree::Endpoint>())
        else {
            return;
        };
        self.follow(now, endpoint, &p.entries);
    }

    fn place(&self) -> Option<(u16, &'static str)> {
        Some((
            self.region,
            if self.designated {
                "designated"
            } else {
                "member"
            },
        ))
    }
}

/// A member's peer: its designated receiver at its address; none for a designated relay (no
/// address: the member reaches it through the relay its session comes from, whose repairs
/// come from that address too).
fn designated_peer(d: &DspEntry) -> Vec<(u32, SocketAddr)> {
    if d.addr.ip().is_unspecified() {
        Vec::new()
    } else {
        vec![(d.node, d.addr)]
    }
}

/// A receiver's endpoint and its place in its region, from the running ANNOUNCE that names
/// its role (`Ok(None)` before).
pub fn endpoint(a: Announced<'_>, me: &Me) -> Result<Option<(tree::Endpoint, DspPlace)>, NetError> {
    let window = a.window()?;
    if a.params.is_empty() {
        return Ok(None);
    }
    let p = a.params_as(DspParams::decode)?;
    let node = me.node;
    let Some(mine) = p.entries.iter().find(|e| e.node == node) else {
        return Ok(None);
    };
    let region = mine.region;
    let in_region = |role: DspRole| {
        p.entries
            .iter()
            .filter(move |e| e.region == region && e.role == role && e.node != node)
    };
    let designated = mine.role == DspRole::Designated;
    let (role, peers, designated_node) = if designated {
        let members: Vec<(u32, SocketAddr)> = in_region(DspRole::Member)
            .map(|e| (e.node, e.addr))
            .collect();
        (
            tree::Role::Designated {
                members: members.iter().map(|m| NodeId(m.0)).collect(),
                local_group: GroupId(1 + u32::from(region)),
            },
            members,
            node,
        )
    } else {
        let Some(d) = in_region(DspRole::Designated).next() else {
            return Err(NetError::Failed(format!(
                "the sender named no designated receiver for region {region}"
            )));
        };
        (
            tree::Role::Member {
                designated: NodeId(d.node),
            },
            designated_peer(d),
            d.node,
        )
    };
    let mut c = tree::EndpointConfig::new(NodeId(node), NodeId(me.sender), role, u32::from(window));
    c.session = me.session;
    c.status_min = Duration::from_micros(u64::from(p.status_min_us));
    c.status_max = Duration::from_micros(u64::from(p.status_max_us.max(p.status_min_us)));
    c.local_rtd = Duration::from_micros(u64::from(p.local_rtd_us));
    c.r_f = f64::from(p.r_f_milli) / 1000.0;
    c.standby = STANDBY_WINDOWS * u32::from(window);
    let place = DspPlace {
        me: node,
        region,
        designated,
        designated_node,
        peers,
        local_group: local_group(me.group, region)?,
    };
    Ok(Some((tree::Endpoint::new(c, me.rng()), place)))
}

mod consolidated;
#[cfg(test)]
mod tests;
