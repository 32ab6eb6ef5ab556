//! Which protocol agents a session runs, built the same way on both sides: the sender builds
//! its agent from its command line and the joined receivers; a receiver builds its agent from
//! the sender's ANNOUNCE. The agents are `rmcast-proto`'s — the very state machines the
//! simulator runs; this module only maps settings onto their configurations.
//!
//! `dsp` (seed 001) adds local regions: every receiver joins with a region number
//! (`rmcast recv --region`, default 0). When the transfer starts, the sender elects in each
//! region the joined receiver with the **lowest node id** as its designated receiver `E_i1`
//! and announces every receiver's region, role and unicast address in the running ANNOUNCE
//! ([`rmcast_wire::session::DspParams`]). The designated receiver reports its own status to
//! the sender and re-multicasts what its members lack on the region's local group
//! ([`local_group`]: the session's group address, port + 1 + region); members join that group
//! and send their status to the designated receiver.

use crate::frame::DATA_OVERHEAD;
use crate::NetError;
use rmcast_proto::rng::AgentRng;
use rmcast_proto::{bap, prmp, saw, spec, tree, xtp, Agent, GroupId, NodeId};
use rmcast_wire::session::{self, DspEntry, DspParams, DspRole};
use rmcast_wire::{Family, HEADER_LEN};
use std::net::SocketAddr;
use std::time::Duration;

/// The wire family of a protocol the driver runs, by command-line name (the protocols whose
/// spec says they run on sockets).
pub fn protocol_family(name: &str) -> Result<Family, NetError> {
    match spec::lookup(name) {
        Some(p) if p.sockets => Ok(p.family),
        _ => {
            let on_sockets: Vec<&str> = spec::socket_protocols().map(|p| p.name).collect();
            let known: Vec<&str> = spec::PROTOCOLS.iter().map(|p| p.name).collect();
            Err(NetError::setup(format!(
                "protocol {name:?} cannot run on the network in this build (available: {}; \
                 implemented in the engine: {}): pass --protocol {}",
                on_sockets.join(", "),
                known.join(", "),
                on_sockets.join(", ")
            )))
        }
    }
}

/// Bytes a protocol's DATA packet adds to an application message (header included), for
/// `receivers` children (a PRMP DATAPOLL names the children it polls).
pub fn data_overhead(family: Family, receivers: usize) -> usize {
    HEADER_LEN
        + DATA_OVERHEAD
        + match family {
            Family::Prmp => 26 + 4 * receivers.min(prmp::MAX_POLL_CLD),
            Family::Tree => 12,
            _ => 1,
        }
}

/// `prmp` parameters (seed 004 §2–§4) the sender exposes.
#[derive(Debug, Clone)]
pub struct PrmpOpts {
    /// Epoch length ε; rounded up to a multiple of the IPG.
    pub epoch: Duration,
    /// Response rate RR, responses per second the sender plans for.
    pub response_rate: u64,
    /// Inter-packet gap; `None`: one datagram at the pacing rate (10 µs when unpaced).
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
            epoch: spec::ms(spec::prmp::EPOCH_MS),
            response_rate: spec::prmp::RESPONSE_RATE,
            ipg: None,
            mtr: spec::prmp::MTR,
            silent_polls: spec::prmp::SOCKET_SILENT_POLLS,
        }
    }
}

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
}

impl Default for DspOpts {
    fn default() -> Self {
        DspOpts {
            rtd: spec::ms(spec::dsp::SOCKET_RTD_MS),
            r_f: spec::dsp::R_F,
            status_interval: spec::ms(spec::dsp::STATUS_MS),
            local_rtd: spec::ms(spec::dsp::LOCAL_RTD_MS),
        }
    }
}

/// What the sender's agent needs besides the receivers.
#[derive(Debug, Clone)]
pub struct SenderSettings {
    pub node: u32,
    pub session: u32,
    pub window: u16,
    /// Retransmission timeout (saw, bap; prmp: the floor of its RTO).
    pub rto: Duration,
    pub xtp_thesis: bool,
    /// xtp: data bytes per packet.
    pub xtp_maxdata: usize,
    /// xtp: send everything by unicast to the one receiver instead of multicasting.
    pub xtp_unicast: bool,
    /// xtp: add receivers whose status arrives unannounced (late joiners the driver
    /// admitted during the transfer; they start at their join point, no back-fill).
    pub xtp_accept_joins: bool,
    /// Pacing rate in bit/s (0 = unlimited) and datagram size, for the prmp IPG.
    pub rate_bps: u64,
    pub datagram_size: usize,
    pub prmp: PrmpOpts,
    pub dsp: DspOpts,
}

/// Messages the sender agent queues (the producer thread keeps the rest).
const QUEUE_LIMIT: usize = 32;

fn nodes(ids: &[u32]) -> Vec<NodeId> {
    ids.iter().map(|&i| NodeId(i)).collect()
}

/// The PRMP configuration for these settings (also used to check the flags before any
/// receiver joins).
pub fn prmp_config(s: &SenderSettings, ids: &[u32]) -> Result<prmp::SenderConfig, NetError> {
    let bad = |e: prmp::ConfigError| NetError::setup(format!("prmp: {e}; check the prmp flags"));
    let mut c = prmp::SenderConfig::new(NodeId(s.node), GroupId(0), nodes(ids));
    c.session = s.session;
    c.window = u64::from(s.window);
    let ipg = s.prmp.ipg.unwrap_or_else(|| match s.rate_bps {
        0 => Duration::from_micros(10),
        r => Duration::from_nanos(
            (s.datagram_size as u64 * 8).saturating_mul(1_000_000_000) / r.max(1),
        )
        .max(Duration::from_micros(1)),
    });
    if ipg.is_zero() {
        return Err(NetError::setup(
            "--ipg-us 0: give a positive inter-packet gap",
        ));
    }
    c.ipg = ipg;
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

/// The sender's agent for `family`, sending to `ids`; for `dsp`, `designated` lists each
/// region's designated receiver (the reporters).
pub fn sender_agent(
    family: Family,
    s: &SenderSettings,
    ids: &[u32],
    designated: &[u32],
) -> Result<Box<dyn Agent>, NetError> {
    let (node, group) = (NodeId(s.node), GroupId(0));
    Ok(match family {
        Family::Saw => {
            let mut c = saw::SenderConfig::new(node, group, nodes(ids), s.rto);
            c.session = s.session;
            c.queue_limit = QUEUE_LIMIT;
            Box::new(saw::Sender::new(c))
        }
        Family::Bap => {
            let mut c = bap::SenderConfig::new(node, group, nodes(ids), s.window, s.rto);
            c.session = s.session;
            c.queue_limit = QUEUE_LIMIT;
            Box::new(bap::Sender::new(c))
        }
        Family::Xtp => {
            if s.xtp_unicast && (ids.len() != 1 || s.xtp_accept_joins) {
                return Err(NetError::setup(format!(
                    "xtp unicast sends to exactly one receiver and admits no late joiners \
                     ({} receivers{}): drop --unicast, or use --receivers 1 without --late-join",
                    ids.len(),
                    if s.xtp_accept_joins {
                        ", late join on"
                    } else {
                        ""
                    }
                )));
            }
            let multicast = !s.xtp_unicast;
            let mut c = if s.xtp_thesis {
                xtp::SenderConfig::thesis(node, group, nodes(ids), multicast)
            } else {
                let mut c = xtp::SenderConfig::improved(node, group, nodes(ids), multicast);
                c.block_on_ack = false;
                c.window = u32::from(s.window.max(1));
                c
            };
            c.session = s.session;
            c.accept_joins = s.xtp_accept_joins;
            c.maxdata = s.xtp_maxdata.max(1);
            c.queue_limit = QUEUE_LIMIT;
            Box::new(xtp::Sender::new(c))
        }
        Family::Prmp => Box::new(
            prmp::Sender::new(prmp_config(s, ids)?)
                .map_err(|e| NetError::setup(format!("prmp: {e}")))?,
        ),
        Family::Tree => {
            let reporters = designated
                .iter()
                .map(|&epi| tree::Reporter {
                    epi,
                    rtd: s.dsp.rtd,
                    slack: Duration::ZERO,
                })
                .collect();
            let mut c = tree::SourceConfig::new(node, group, reporters, u32::from(s.window));
            c.session = s.session;
            c.r_f = s.dsp.r_f;
            // The source paces itself at the driver's rate, so a block's send time is when
            // it leaves rather than when it joins a queue behind the pacer (re-multicasts
            // would otherwise be timed from the queueing and repeat themselves).
            c.rate_bps = s.rate_bps;
            c.queue_limit = QUEUE_LIMIT;
            Box::new(tree::Source::new(c))
        }
        _ => return Err(NetError::setup("protocol not available on the network")),
    })
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

/// Elect the designated receiver of every region: the lowest node id among the receivers
/// of the region. `receivers` are `(node, region, unicast address)`.
pub fn elect(receivers: &[(u32, u16, SocketAddr)]) -> Vec<DspEntry> {
    let mut out: Vec<DspEntry> = receivers
        .iter()
        .map(|&(node, region, addr)| DspEntry {
            node,
            region,
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

/// `xtp` announce parameters: whether the sender admits late joiners now, and the name of
/// the stream they would join (a late joiner keeps what it gets as `<name>.partial`).
/// Layout: one flag byte (bit 0: late joiners admitted), then the name in UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XtpParams {
    pub late_join: bool,
    pub stream: String,
}

impl XtpParams {
    pub fn encode(&self) -> Vec<u8> {
        let mut v = vec![u8::from(self.late_join)];
        v.extend_from_slice(self.stream.as_bytes());
        v
    }

    /// `None` for an empty parameter block (a sender that offers nothing).
    pub fn decode(raw: &[u8]) -> Result<Option<Self>, NetError> {
        let Some((&flags, name)) = raw.split_first() else {
            return Ok(None);
        };
        let stream = std::str::from_utf8(name)
            .map_err(|_| NetError::Failed("the sender's xtp parameters are malformed".into()))?;
        Ok(Some(XtpParams {
            late_join: flags & 1 != 0,
            stream: stream.to_string(),
        }))
    }
}

/// A receiver's place in a `dsp` session.
#[derive(Debug, Clone)]
pub struct DspPlace {
    pub region: u16,
    pub designated: bool,
    /// Its designated receiver (itself when designated).
    pub designated_node: u32,
    /// The peers it takes protocol packets from besides the sender and sends to: its
    /// designated receiver (a member) or its members (the designated receiver).
    pub peers: Vec<(u32, SocketAddr)>,
    pub local_group: SocketAddr,
}

/// What a receiver needs to know from the sender's ANNOUNCE.
#[derive(Debug, Clone, Copy)]
pub struct Announced<'a> {
    pub protocol: u8,
    pub window: u16,
    pub ack_delay_us: u32,
    pub ack_timeout_us: u32,
    pub params: &'a [u8],
}

impl<'a> Announced<'a> {
    /// The fields of an ANNOUNCE (`None` for other session messages).
    pub fn of(m: &session::Message<'a>) -> Option<Self> {
        match *m {
            session::Message::Announce {
                protocol,
                window,
                ack_delay_us,
                ack_timeout_us,
                params,
                ..
            } => Some(Announced {
                protocol,
                window,
                ack_delay_us,
                ack_timeout_us,
                params,
            }),
            _ => None,
        }
    }
}

/// A receiver's agent and, for `dsp`, its place in its region.
pub type Built = (Box<dyn Agent>, Option<DspPlace>);

/// A receiver's agent, built from the sender's announce. `Ok(None)`: not yet (a `dsp`
/// receiver waits for the running announce that names its role).
pub fn receiver_agent(
    a: Announced<'_>,
    node: u32,
    session: u32,
    sender: u32,
    group: SocketAddr,
) -> Result<Option<Built>, NetError> {
    let me = NodeId(node);
    let rng = AgentRng::derive(u64::from(session), me, 1);
    let ack_delay_max = Duration::from_micros(u64::from(a.ack_delay_us));
    let agent: Box<dyn Agent> = match Family::from_u8(a.protocol) {
        Ok(Family::Saw) => {
            let mut c = saw::ReceiverConfig::new(me);
            c.session = session;
            c.ack_delay_max = ack_delay_max;
            Box::new(saw::Receiver::new(c, rng))
        }
        Ok(Family::Xtp) => {
            let mut c = xtp::ReceiverConfig::new(me);
            c.session = session;
            c.buffer = 4096;
            Box::new(xtp::Receiver::new(c))
        }
        Ok(Family::Bap) if a.window > 0 => {
            let ack_timeout = Duration::from_micros(u64::from(a.ack_timeout_us.max(1)));
            let mut c = bap::ReceiverConfig::new(me, a.window, ack_timeout);
            c.session = session;
            c.ack_delay_max = ack_delay_max;
            Box::new(bap::Receiver::new(c, rng))
        }
        Ok(Family::Prmp) if a.window > 0 => {
            let mut c = prmp::ReceiverConfig::new(me, u64::from(a.window));
            c.session = session;
            Box::new(prmp::Receiver::new(c))
        }
        Ok(Family::Tree) if a.window > 0 => {
            if a.params.is_empty() {
                return Ok(None);
            }
            let p = DspParams::decode(a.params).map_err(|e| {
                NetError::Failed(format!("the sender's dsp parameters are malformed: {e}"))
            })?;
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
                let members: Vec<(u32, SocketAddr)> =
                    in_region(DspRole::Member).map(|e| (e.node, e.addr)).collect();
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
                    vec![(d.node, d.addr)],
                    d.node,
                )
            };
            let l = u32::from(a.window);
            let mut c = tree::EndpointConfig::new(me, NodeId(sender), role, l);
            c.session = session;
            c.status_min = Duration::from_micros(u64::from(p.status_min_us));
            c.status_max = Duration::from_micros(u64::from(p.status_max_us.max(p.status_min_us)));
            c.local_rtd = Duration::from_micros(u64::from(p.local_rtd_us));
            c.r_f = f64::from(p.r_f_milli) / 1000.0;
            let place = DspPlace {
                region,
                designated,
                designated_node,
                peers,
                local_group: local_group(group, region)?,
            };
            return Ok(Some((Box::new(tree::Endpoint::new(c, rng)), Some(place))));
        }
        _ => {
            return Err(NetError::setup(format!(
                "the sender uses protocol family {} (window {}), which this build cannot receive: upgrade rmcast",
                a.protocol, a.window
            )))
        }
    };
    Ok(Some((agent, None)))
}

/// The window a protocol runs with on sockets when `--window` is not given (its spec's
/// socket default; 16 for a protocol without a window).
pub fn default_window(protocol: &str) -> u16 {
    spec::lookup(protocol)
        .and_then(|p| p.param("window"))
        .and_then(|q| match q.socket_default() {
            spec::Value::Int(w) => u16::try_from(w).ok(),
            _ => None,
        })
        .unwrap_or(spec::saw::BAP_WINDOW)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lowest_node_id_of_each_region_is_designated() {
        let a: SocketAddr = "10.0.0.1:4000".parse().unwrap();
        let e = elect(&[(9, 0, a), (3, 1, a), (4, 0, a), (2, 1, a), (7, 2, a)]);
        let designated: Vec<u32> = e
            .iter()
            .filter(|e| e.role == DspRole::Designated)
            .map(|e| e.node)
            .collect();
        assert_eq!(designated, [4, 2, 7]);
    }

    #[test]
    fn local_groups_are_derived_from_the_group_port() {
        let g: SocketAddr = "239.1.2.3:5000".parse().unwrap();
        assert_eq!(
            local_group(g, 0).unwrap(),
            "239.1.2.3:5001".parse().unwrap()
        );
        assert_eq!(
            local_group(g, 7).unwrap(),
            "239.1.2.3:5008".parse().unwrap()
        );
        assert!(local_group(g, 65_000).is_err());
    }

    #[test]
    fn unknown_protocols_and_bad_prmp_values_are_setup_errors() {
        assert!(matches!(protocol_family("csp"), Err(NetError::Setup(_))));
        let mut s = SenderSettings {
            node: 1,
            session: 1,
            window: 64,
            rto: Duration::from_millis(20),
            xtp_thesis: false,
            xtp_maxdata: 1000,
            xtp_unicast: false,
            xtp_accept_joins: false,
            rate_bps: 1_000_000_000,
            datagram_size: 60_000,
            prmp: PrmpOpts::default(),
            dsp: DspOpts::default(),
        };
        let c = prmp_config(&s, &[]).unwrap();
        assert_eq!(c.ipg, Duration::from_micros(480));
        assert_eq!(
            c.epoch,
            Duration::from_micros(480 * 21),
            "ε rounded up to k·IPG"
        );
        s.prmp.mtr = 1.5;
        assert!(matches!(prmp_config(&s, &[]), Err(NetError::Setup(_))));
        s.prmp.mtr = 0.2;
        s.prmp.response_rate = 10;
        assert!(
            matches!(prmp_config(&s, &[]), Err(NetError::Setup(_))),
            "RQ = 0"
        );
        let d = DspOpts {
            r_f: 0.5,
            ..DspOpts::default()
        };
        assert!(check_dsp(&d).is_err());
    }

    #[test]
    fn xtp_params_round_trip() {
        let p = XtpParams {
            late_join: true,
            stream: "live.log".into(),
        };
        assert_eq!(XtpParams::decode(&p.encode()).unwrap(), Some(p));
        assert_eq!(XtpParams::decode(&[]).unwrap(), None);
        assert!(XtpParams::decode(&[1, 0xff, 0xfe]).is_err());
        assert!(!XtpParams::decode(&[0]).unwrap().unwrap().late_join);
    }

    #[test]
    fn a_member_learns_its_designated_receiver_and_local_group() {
        let g: SocketAddr = "239.1.2.3:5000".parse().unwrap();
        let addr = |p: u16| SocketAddr::new("10.0.0.1".parse().unwrap(), p);
        let entries = elect(&[(5, 1, addr(1)), (6, 1, addr(2)), (7, 0, addr(3))]);
        let raw = dsp_params(&DspOpts::default(), entries).encode().unwrap();
        let a = Announced {
            protocol: Family::Tree as u8,
            window: 64,
            ack_delay_us: 0,
            ack_timeout_us: 0,
            params: &raw,
        };
        let (_, place) = receiver_agent(a, 6, 9, 1, g).unwrap().unwrap();
        let place = place.unwrap();
        assert!(!place.designated);
        assert_eq!(place.designated_node, 5);
        assert_eq!(place.peers, [(5, addr(1))]);
        assert_eq!(place.local_group, "239.1.2.3:5002".parse().unwrap());
        let (_, place) = receiver_agent(a, 5, 9, 1, g).unwrap().unwrap();
        let place = place.unwrap();
        assert!(place.designated);
        assert_eq!(place.peers, [(6, addr(2))]);
        // Not named: wait for a later announce.
        assert!(receiver_agent(a, 8, 9, 1, g).unwrap().is_none());
        let gathering = Announced { params: &[], ..a };
        assert!(receiver_agent(gathering, 5, 9, 1, g).unwrap().is_none());
    }
}
