//! The session a receiver found: its sender, whether it was admitted, the agent built from
//! the ANNOUNCE, and where the agent's datagrams go.

use crate::agents::{self, Announced, Me, Received, ReceiverSide};
use crate::NetError;
use bytes::Bytes;
use rmcast_proto::{Agent, Dest, GroupId, Time};
use rmcast_wire::session;
use rmcast_wire::Header;
use std::net::SocketAddr;

/// At most this many bytes of the sender's protocol packets are held while the agent does not
/// exist yet (see [`Joined::hold`]): about 33 ms at 1 Gbit/s, above the 20 ms after which a
/// JOIN asks for the running ANNOUNCE again; later ones are dropped and recovered by the
/// protocol.
pub(super) const EARLY_BYTES: usize = 4 << 20;

/// The session this receiver found.
pub(super) struct Joined {
    pub(super) session: u32,
    pub(super) sender_node: u32,
    pub(super) sender_addr: SocketAddr,
    pub(super) admitted: bool,
    /// `None` until the announce says enough to build it (`dsp`: the running announce).
    pub(super) built: Option<Received>,
    pub(super) last_from_sender: Time,
    /// Joining a running stream late (the sender offered it); protocol packets are
    /// ignored until the sender admits it.
    pub(super) late: bool,
    /// When the receiver found the session (it gives up one that does not admit it soon).
    pub(super) since: Time,
    /// It sent a REPORT since its admission (the first says it held nothing then).
    pub(super) reported: bool,
    /// Times it followed the session to another address ([`super::Receiving::follow`]).
    pub(super) moves: u32,
    /// The sender's protocol packets that came before the agent was built, and their bytes.
    pub(super) early: (Vec<(Header, Bytes)>, usize),
    /// Until when it JOINs although admitted: the session listed it when found, so the
    /// process before it was a member (killed and restarted under its node id), and the
    /// sender is to take it back at its new address.
    pub(super) rejoin_until: Option<Time>,
    /// The protocol lets a dense stream gather between reads
    /// ([`agents::NetProtocol::gathers_reads`]); false until the agent is built.
    pub(super) gathers: bool,
}

impl Joined {
    /// Hold the sender's protocol packet `pkt` that came before the running ANNOUNCE (lost
    /// on the way, or late) admitted us and built the agent, up to [`EARLY_BYTES`]; returns whether
    /// it was kept. [`Joined::take_early`] hands them over once the agent exists, so what the
    /// ANNOUNCE's loss cost is not NAKed and sent again.
    pub(super) fn hold(&mut self, h: Header, pkt: &[u8]) -> bool {
        let (held, bytes) = &mut self.early;
        if (self.built.is_some() && self.admitted) || *bytes + pkt.len() > EARLY_BYTES {
            return false;
        }
        *bytes += pkt.len();
        held.push((h, Bytes::copy_from_slice(pkt)));
        true
    }

    /// The packets [`Joined::hold`] kept, oldest first; none are kept after this.
    pub(super) fn take_early(&mut self) -> Vec<(Header, Bytes)> {
        let (held, bytes) = &mut self.early;
        *bytes = 0;
        std::mem::take(held)
    }

    pub(super) fn agent(&mut self) -> Option<&mut dyn Agent> {
        self.built.as_mut().map(|b| &mut *b.agent as &mut dyn Agent)
    }

    pub(super) fn side(&self) -> Option<&dyn ReceiverSide> {
        self.built.as_ref().map(|b| &*b.side)
    }

    /// Whether a protocol packet from `h`/`from` belongs to our session: from the sender's
    /// address (the sender's, or an `rmcast relay`'s in its place, whose network agent
    /// speaks under its own node id: an LMS turning point's DREQ), or from a peer the
    /// protocol names (`dsp`: a peer of our region).
    pub(super) fn accepts(&self, h: &Header, from: SocketAddr) -> bool {
        if h.session != self.session {
            return false;
        }
        if from == self.sender_addr {
            // The sender sends everything from one socket: its address and port.
            return true;
        }
        if h.source == self.sender_node {
            return false;
        }
        self.side().is_some_and(|d| {
            d.peers()
                .iter()
                .any(|(n, a)| *n == h.source && a.ip() == from.ip())
        })
    }

    /// Build the agent from the sender's announce `m`, if it says enough; returns a further
    /// group to join, if any.
    pub(super) fn build(
        &mut self,
        m: &session::Message<'_>,
        node: u32,
        group: SocketAddr,
    ) -> Result<Option<SocketAddr>, NetError> {
        let Some(a) = Announced::of(m) else {
            return Ok(None);
        };
        let me = Me {
            node,
            session: self.session,
            sender: self.sender_node,
            group,
        };
        let Some(built) = agents::receiver_agent(a, &me)? else {
            return Ok(None);
        };
        let join = built.side.join();
        self.gathers = agents::announced(a.protocol).is_some_and(|p| p.gathers_reads());
        self.built = Some(built);
        Ok(join)
    }

    /// Where a transmit of the agent goes.
    pub(super) fn route(&self, dest: Dest, group: SocketAddr) -> Option<SocketAddr> {
        match dest {
            Dest::Node(n) if n.0 == self.sender_node => Some(self.sender_addr),
            Dest::Node(n) => match self.side().map(|d| d.peers()) {
                Some(peers) if !peers.is_empty() => {
                    peers.iter().find(|(p, _)| *p == n.0).map(|(_, a)| *a)
                }
                // A protocol without peers names a node in the network (an LMS replier's
                // REPAIR to its turning point): everything goes up through the sender's
                // address, where a relay stands for the network.
                _ => Some(self.sender_addr),
            },
            Dest::Group(GroupId(0)) => Some(group),
            Dest::Group(_) => self.side().and_then(|d| d.local_group()),
        }
    }
}
