//! `lms` (seed 003, Papadopoulos, Parulkar and Varghese) on sockets. On one LAN, with no
//! router in the path, it is a plain NAK protocol: a receiver that finds a gap (DATA, a
//! REPAIR or the source's HEARTBEAT leading edge) unicasts a REQUEST to the source at once
//! and repeats it every request timeout; the source multicasts the REPAIR. Behind `rmcast
//! relay` the relay hosts LMS's router ([`NetProtocol::relay`]): its replier link leads to
//! one receiver served through it (links are receivers, [`Links::Receivers`]), a REQUEST
//! from another turns there and goes down to the replier as a DREQ, and the replier's REPAIR
//! comes back to the turning point, which sends it only to the receiver (or relay) that
//! asked. Relays stack, each its own turning point.
//!
//! Timers on sockets (the spec's socket defaults): requests repeated after 30 ms, heartbeats
//! every 50 ms. LMS has no acknowledgments ([`NetProtocol::acknowledged`] false): the
//! transfer ends when every receiver reported, as for `pgm`.

use super::{Announced, Links, Me, NetProtocol, Received, RelayAt, Relayed, SenderSettings};
use super::{Start, Started};
use crate::NetError;
use rmcast_proto::{lms, GroupId, IfaceId, NodeId, RouterAgent};
use std::time::Duration;

pub struct Lms;

fn socket_ms(key: &str) -> Duration {
    super::socket_ms("lms", key)
}

/// How long the source answers after the last data when no report ends it first: the
/// session ends the transfer (every receiver reported, or `--final-wait`).
const LINGER: Duration = Duration::from_secs(24 * 3600);

impl NetProtocol for Lms {
    /// REPAIR, the larger packet carrying a message: an 8-byte sequence number, the turning
    /// point and its interface (DATA: the sequence number alone).
    fn data_fields(&self, _receivers: usize) -> usize {
        16
    }

    fn acknowledged(&self) -> bool {
        false
    }

    fn start(&self, s: &SenderSettings, _start: &Start<'_>) -> Result<Started, NetError> {
        let mut c = lms::SourceConfig::new(NodeId(s.node), GroupId(0));
        c.session = s.session;
        let hb = socket_ms("heartbeat_ms");
        c.heartbeat = (!hb.is_zero()).then_some(hb);
        c.linger = LINGER;
        Started::plain(lms::Source::new(c))
    }

    fn receiver(&self, _a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        let mut c = lms::ReceiverConfig::new(NodeId(me.node), NodeId(me.sender));
        c.session = me.session;
        c.request_timeout = socket_ms("request_timeout_ms");
        Received::plain(lms::Receiver::new(c))
    }

    /// LMS's router with a static replier link (seed 003 §5.8): toward the receiver with the
    /// lowest node id served through this relay (every one is as close on a LAN; the lowest
    /// id, as `dsp` elects); none when nobody joined through it (requests then pass up).
    fn relay(&self, _a: Announced<'_>, at: &RelayAt<'_>) -> Result<Option<Relayed>, NetError> {
        let replier = at
            .receivers
            .iter()
            .min_by_key(|&&(_, node)| node)
            .map(|&(link, _)| link);
        let mut c = lms::RouterConfig::new(NodeId(at.node), GroupId(0), replier);
        c.session = at.session;
        Ok(Some(Relayed {
            agent: Box::new(lms::Router::new(c)),
            links: Links::Receivers,
            node: None,
            local_group: None,
        }))
    }

    /// A replier that went silent (killed, cut off) leaves every request turned here
    /// unanswered: the link moves to the live receiver with the lowest node id (none: requests
    /// pass up to the source).
    fn relay_links(&self, agent: &mut dyn RouterAgent, live: &[(IfaceId, u32)]) -> Option<IfaceId> {
        let router = agent.as_any_mut()?.downcast_mut::<lms::Router>()?;
        let current = router.replier();
        if current.is_some_and(|r| live.iter().any(|&(l, _)| l == r)) {
            return None;
        }
        let next = live.iter().min_by_key(|&&(_, node)| node).map(|&(l, _)| l);
        router.set_replier(next);
        next
    }
}
