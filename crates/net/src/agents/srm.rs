//! `srm` (seed 003, after Floyd et al. 1995 and ns-2's `Agent/SRM`) on sockets: every
//! receiver and the source are members of one group. A member that finds a gap multicasts a
//! REQUEST after a random wait scaled by its distance to the source; any member holding the
//! packet multicasts a REPAIR after a wait scaled by its distance to the requester; hearing
//! another's request or repair suppresses one's own. Distances come from SESSION messages'
//! timestamp echoes, as SRM specifies, so no clock needs to agree with another.
//!
//! The session layer adds what SRM leaves to the application: the running ANNOUNCE names every
//! receiver with its unicast address ([`session::encode_peers`]), so a member accepts
//! requests, repairs and session messages from the other members and from nobody else; the
//! sender reads the group ([`NetProtocol::hears_group`]), since requests go there. SRM has no
//! acknowledgments ([`NetProtocol::acknowledged`] false): the transfer ends when every
//! receiver reported, as for `pgm`.
//!
//! Timers on sockets (the spec's socket defaults): session messages every 100 ms (the seed's
//! 1 s would leave the loss of the last packets unnoticed that long), stretched so the group's
//! session messages use at most 5 % of `--rate`; 1 ms assumed before a distance is measured.

use super::{socket_ms, Announced, Me, NetProtocol, Received, ReceiverSide, SenderSettings};
use super::{Joiner, SenderSide, Start, Started};
use crate::NetError;
use rmcast_proto::rng::AgentRng;
use rmcast_proto::{srm, Agent, GroupId, NodeId, Time};
use rmcast_wire::srm::SESSION_ENTRY_LEN;
use rmcast_wire::{session, HEADER_LEN};
use std::net::SocketAddr;
use std::time::Duration;

pub struct Srm;

/// How long the source answers after the last data when no report ends it first: the
/// session ends the transfer (every receiver reported, or `--final-wait`).
const LINGER: Duration = Duration::from_secs(24 * 3600);

/// Share of `--rate` the group's session messages may use.
const SESSION_SHARE: f64 = 0.05;

/// The interval between a member's session messages for `members` members at `rate_bps`
/// (0: unpaced): the spec's socket default, longer when every member's message of one round
/// (one entry per member it heard) would take more than [`SESSION_SHARE`] of the rate.
fn session_interval(members: usize, rate_bps: u64) -> Duration {
    let base = socket_ms("srm", "session_interval_ms");
    if rate_bps == 0 {
        return base;
    }
    let bytes = members as f64 * (HEADER_LEN + 18 + SESSION_ENTRY_LEN * members) as f64;
    let round =
        Duration::from_secs_f64((bytes * 8.0 / (SESSION_SHARE * rate_bps as f64)).min(3600.0));
    base.max(round)
}

/// A member of a session of `members` members with `source`'s data, at `rate_bps`.
fn member(node: u32, session: u32, source: u32, members: usize, rate_bps: u64) -> srm::Config {
    let p = srm::Params {
        session_interval: Some(session_interval(members, rate_bps)),
        default_distance: socket_ms("srm", "default_distance_ms"),
        linger: LINGER,
        ..srm::Params::default()
    };
    let mut c = p.member(NodeId(node), GroupId(0), NodeId(source), members);
    c.session = session;
    // A distance sample on sockets is now and then a hundred times too long (a queue, a
    // descheduled host): an armed request timer follows the next, shorter one back down.
    c.follow_falling_distance = true;
    c
}

/// The receivers and their unicast addresses, as the ANNOUNCE carries them.
fn peers(joined: &[Joiner]) -> Vec<(u32, SocketAddr)> {
    joined.iter().map(|&(node, _, addr)| (node, addr)).collect()
}

impl NetProtocol for Srm {
    /// Its parameters (the members, decoded when the receiver starts).
    fn check_params(&self, _params: &[u8]) -> Result<(), NetError> {
        Ok(())
    }

    /// REPAIR, the larger packet carrying a message: the data's sender, the requester, the
    /// round, the 8-byte sequence number and the distance (DATA: the sequence number alone).
    fn data_fields(&self, _receivers: usize) -> usize {
        25
    }

    fn acknowledged(&self) -> bool {
        false
    }

    fn hears_group(&self) -> bool {
        true
    }

    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        let c = member(
            s.node,
            s.session,
            s.node,
            start.joined.len() + 1,
            s.rate_bps,
        );
        let rng = AgentRng::derive(u64::from(s.session), NodeId(s.node), 1);
        Ok(Started {
            agent: Box::new(srm::Member::new(c, rng)),
            side: Box::new(Sending {
                peers: peers(start.joined),
            }),
        })
    }

    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        // The gathering ANNOUNCE names nobody yet: the agent waits for the running one.
        if a.params.is_empty() {
            return Ok(None);
        }
        let peers = session::decode_peers(a.params).map_err(|e| {
            NetError::Failed(format!("the sender's srm member list is malformed: {e}"))
        })?;
        // The sender's rate is not announced: members are sized for the group, at the
        // spec's interval (the sender stretches only its own).
        let c = member(me.node, me.session, me.sender, peers.len() + 1, 0);
        Ok(Some(Received {
            agent: Box::new(srm::Member::new(c, me.rng())),
            side: Box::new(Receiving { peers }),
        }))
    }
}

/// The sender's part: the member list in the running ANNOUNCE.
struct Sending {
    peers: Vec<(u32, SocketAddr)>,
}

impl SenderSide for Sending {
    fn params(&self) -> Result<Vec<u8>, NetError> {
        session::encode_peers(&self.peers)
            .map_err(|e| NetError::Failed(format!("srm: cannot announce the members: {e}")))
    }

    fn evicted(&mut self, _now: Time, _agent: &mut dyn Agent, node: u32) -> bool {
        let before = self.peers.len();
        self.peers.retain(|(n, _)| *n != node);
        self.peers.len() != before
    }
}

/// A receiver's part: the members it accepts protocol packets from.
struct Receiving {
    peers: Vec<(u32, SocketAddr)>,
}

impl ReceiverSide for Receiving {
    fn peers(&self) -> &[(u32, SocketAddr)] {
        &self.peers
    }

    fn announced(&mut self, _now: Time, _agent: &mut dyn Agent, params: &[u8]) {
        if let Ok(p) = session::decode_peers(params) {
            self.peers = p;
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn session_messages_stay_under_a_twentieth_of_the_rate() {
        let base = Duration::from_millis(100);
        assert_eq!(session_interval(4, 1_000_000_000), base);
        assert_eq!(session_interval(1_000, 0), base);
        for (members, rate) in [(1_000, 1_000_000_000u64), (300, 10_000_000), (50, 100_000)] {
            let i = session_interval(members, rate);
            assert!(i > base, "{members} at {rate}: {i:?}");
            let bytes = members * (HEADER_LEN + 18 + SESSION_ENTRY_LEN * members);
            let share = bytes as f64 * 8.0 / i.as_secs_f64() / rate as f64;
            assert!(
                (share - SESSION_SHARE).abs() < 1e-3,
                "{members} at {rate}: {share}"
            );
        }
    }

    #[test]
    fn the_socket_timers_are_the_spec_s() {
        assert_eq!(
            socket_ms("srm", "session_interval_ms"),
            Duration::from_millis(100)
        );
        assert_eq!(
            socket_ms("srm", "default_distance_ms"),
            Duration::from_millis(1)
        );
    }
}
