//! UDP encapsulation as OpenPGM does it (RFC 3208 runs PGM directly over IP, protocol 113;
//! it does not define a UDP encapsulation, OpenPGM's is the one PGM hosts use).
//!
//! * The PGM packet is the whole UDP payload: no extra header, the PGM header's ports are
//!   PGM's own (TSI source port and data-destination port), independent of the UDP ports
//!   (`pgm_parse_udp_encap` hands the payload to the same parser as raw IP).
//! * Downstream packets (SPM, ODATA, RDATA, NCF) go to the group at the *multicast*
//!   encapsulation port; upstream packets (NAK, NNAK, SPMR) go unicast to the source's
//!   address (its SPM's path NLA) at the *unicast* encapsulation port. A receiver also
//!   multicasts its SPMR to the group so others hold theirs back. Defaults 3056 and 3055
//!   (`DEFAULT_UDP_ENCAP_MCAST_PORT`, `DEFAULT_UDP_ENCAP_UCAST_PORT`); OpenPGM's examples
//!   and ZeroMQ's `epgm://` set both to the same port, so in practice one UDP port carries
//!   the session both ways.
//! * The PGM checksum does not cover the UDP or IP header (no pseudo header); the UDP
//!   checksum is the kernel's business.
//! * OpenPGM's data-destination port (the PGM header's `dport` downstream) defaults to 7500;
//!   its TSI source port is random unless the application sets it.

use super::{Body, Error, Packet};

/// OpenPGM's default UDP port for unicast (upstream) encapsulated packets.
pub const DEFAULT_UDP_ENCAP_UCAST_PORT: u16 = 3055;
/// OpenPGM's default UDP port for multicast (downstream) encapsulated packets.
pub const DEFAULT_UDP_ENCAP_MCAST_PORT: u16 = 3056;
/// OpenPGM's default PGM data-destination port (`DEFAULT_DATA_DESTINATION_PORT`).
pub const DEFAULT_DATA_DESTINATION_PORT: u16 = 7500;

/// Where an encapsulated packet goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// To the group, at the multicast encapsulation port.
    Group,
    /// Unicast to the source (its path NLA), at the unicast encapsulation port.
    Source,
}

impl Route {
    /// The UDP destination port for this route, given the two encapsulation ports.
    pub fn port(self, ucast: u16, mcast: u16) -> u16 {
        match self {
            Route::Group => mcast,
            Route::Source => ucast,
        }
    }
}

/// Where OpenPGM sends a packet of this body's type: upstream types to the source, the rest
/// to the group. (An SPMR also goes to the group, once, to suppress other receivers'.)
pub fn route(body: &Body<'_>) -> Route {
    if body.upstream() {
        Route::Source
    } else {
        Route::Group
    }
}

/// Read the PGM packet a UDP datagram carries (the payload as it came from the socket).
pub fn decode_payload(payload: &[u8]) -> Result<Packet<'_>, Error> {
    Packet::decode(payload)
}

/// The UDP payload that carries `p`: its encoding, with checksum.
pub fn encode_payload(p: &Packet<'_>) -> Result<Vec<u8>, Error> {
    p.to_vec()
}
