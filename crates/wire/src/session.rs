//! Session control for the real-network driver (family 15).
//!
//! These packets are not part of any reliable-multicast protocol: they are how `rmcast send`
//! and `rmcast recv` find each other before a transfer, keep track of each other during it and
//! say goodbye after it. The protocol agents never see them.
//!
//! ```text
//! ANNOUNCE body (sender → group, periodic):
//!   protocol (u8, the data family's wire number) | phase (u8: 0 gathering, 1 running)
//!   | security (u8: bit 0 authenticated, bit 1 encrypted) | reserved (u8, 0)
//!   | ack_delay_us (u32) | window (u16) | ack_timeout_us (u32)
//!   | count (u16) | count × member node id (u32)
//!   | params (the rest: protocol parameters; empty except for `dsp`, see [`DspParams`], and
//!     `srm`, see [`encode_peers`])
//! JOIN body (receiver → sender, unicast): empty, or region (u16) — the receiver's local
//!   region for protocols with local repair (`dsp`); empty means region 0
//! REPORT body (receiver → sender, unicast, periodic and final):
//!   state (u8: 0 receiving, 1 complete and verified, 2 failed) | reason (u8)
//!   | bytes (u64) | messages (u64) | repairs (u64) | duplicates (u64) | rejected (u64)
//! END body (sender → group):
//!   count (u16) | count × (node id (u32) | outcome (u8))
//! ```

use crate::field::{decode_items, encode_items, Field, Invalid, Rest};
use crate::layout::{slot, Wire};
use crate::samples::{Sample, ENV};
use crate::{DecodeError, EncodeError, Reader, Writer};

/// Security bit: packets carry an authentication trailer.
pub const SECURITY_AUTH: u8 = 0x01;
/// Security bit: packet bodies are encrypted.
pub const SECURITY_ENCRYPT: u8 = 0x02;

wire_enum! {
    /// Phase of an announced session.
    Phase, "session.phase", "unknown phase";
    /// The sender is collecting receivers.
    Gathering = 0,
    /// The transfer is under way; the member list is final.
    Running = 1,
}

wire_enum! {
    /// A receiver's state in a report.
    ReportState, "session.state", "unknown report state";
    /// Still receiving.
    Receiving = 0,
    /// Everything received and every digest verified.
    Complete = 1,
    /// The receiver gave up (digest mismatch, refused name, write error); `reason` says why.
    Failed = 2,
}

wire_enum! {
    /// A receiver's outcome in the sender's END.
    Outcome, "session.outcome", "unknown outcome";
    /// It reported everything received and verified.
    Completed = 0,
    /// It was removed for silence.
    Evicted = 1,
    /// It reported a failure, or the transfer ended without its completion.
    Failed = 2,
}

/// ANNOUNCE's `security` byte and the reserved byte after it: on decode, security bits
/// other than [`SECURITY_AUTH`] and [`SECURITY_ENCRYPT`] and a non-zero reserved byte are
/// refused; the encoder writes the byte as given and a zero.
struct Security;

impl<'a> Field<'a> for Security {
    type Value = u8;
    const WIRE: Wire = Wire::Struct(&[
        slot(
            "security",
            &["Security bits"],
            Wire::Flags {
                width: 1,
                bits: &[
                    (SECURITY_AUTH as u16, "auth"),
                    (SECURITY_ENCRYPT as u16, "encrypt"),
                ],
            },
        ),
        slot("reserved", &["Reserved"], Wire::Zero),
    ]);
    fn len(_: &u8) -> usize {
        2
    }
    fn write(v: &u8, w: &mut Writer<'_>) {
        w.u8(*v);
        w.u8(0);
    }
    fn read(r: &mut Reader<'a>) -> Result<u8, DecodeError> {
        let security = r.u8()?;
        if security & !(SECURITY_AUTH | SECURITY_ENCRYPT) != 0 {
            return Err(DecodeError::Reserved("session.security"));
        }
        if r.u8()? != 0 {
            return Err(DecodeError::Reserved("session announce reserved byte"));
        }
        Ok(security)
    }
}

raw_list! {
    /// ANNOUNCE's member list: node ids.
    Members, item: u32, len: 4, count: "count", each: "member";
}

wire_struct! {
    /// One entry of an END: a receiver and its outcome.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct EndEntry {
        /// The receiver's node id.
        pub node: u32,
        /// Its outcome.
        pub outcome: Outcome,
    }
}

raw_list! {
    /// END's entries ([`EndEntry`]).
    EndEntries, item: EndEntry, len: 5, count: "count", each: "receiver";
}

wire_struct! {
    /// One partial copy a HAVE names: the file (its size, the first 8 bytes of the BLAKE3
    /// hash of its name, its digest) and the bytes from its start the receiver holds.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Held {
        /// The file's size, bytes.
        pub size: u64,
        /// Bytes from its start the receiver holds (at most `size`).
        pub held: u64,
        /// The first 8 bytes of BLAKE3 of the file's name, big-endian.
        pub name_key: u64,
        /// The file's BLAKE3 digest.
        pub digest: [u8; 32],
    }
}

raw_list! {
    /// HAVE's entries ([`Held`]).
    HeldFiles, item: Held, len: 56, count: "count", each: "file";
}

messages! {
    /// Packet kinds of the session family (none carries application data).
    Session, data: [];
    /// A session message body. Lists borrow the datagram; iterate them with the accessor
    /// functions ([`members`], [`outcomes`]).
    Message<'a>, validate: validate;
    /// ANNOUNCE: the sender's periodic description of the session.
    Announce = 1 {
        /// The data family's wire number.
        protocol: u8,
        /// Gathering receivers or running.
        phase: Phase,
        /// [`SECURITY_AUTH`] and [`SECURITY_ENCRYPT`] bits (and the reserved byte after them).
        security: u8 as Security,
        /// Upper bound of the receivers' random ACK delay, microseconds.
        ack_delay_us: u32,
        /// Window size for windowed protocols (`bap`); 0 when unused.
        window: u16,
        /// Receivers' ACK-delay timeout for windowed protocols, in microseconds.
        ack_timeout_us: u32,
        /// `4 × count` bytes of big-endian node ids.
        members: &'a [u8] as Members,
        /// Protocol parameters after the member list (the rest of the body): empty, or for
        /// `dsp` a [`DspParams`] encoding (regions and designated receivers).
        params: &'a [u8] as Rest,
    },
    /// JOIN: a receiver asks to be admitted.
    Join = 2 {
        /// The receiver's local region (`dsp`); `None` on the wire is an empty body.
        region: Option<u16>,
    },
    /// REPORT: a receiver's progress and state.
    Report = 3 {
        /// Receiving, complete or failed.
        state: ReportState,
        /// Why it failed (a code; 0 otherwise).
        reason: u8,
        /// Application bytes received.
        bytes: u64,
        /// Messages delivered.
        messages: u64,
        /// Repairs received.
        repairs: u64,
        /// Duplicate packets received.
        duplicates: u64,
        /// Datagrams rejected (failed authentication, malformed, or from a stranger).
        rejected: u64,
    },
    /// END: the sender's goodbye with every receiver's outcome.
    End = 4 {
        /// `5 × count` bytes: node id (u32) and outcome (u8).
        outcomes: &'a [u8] as EndEntries,
    },
    /// HAVE: the partial copies of files a receiver holds from an earlier session (restart
    /// mode), so the sender sends a file only from where every receiver's copy ends.
    Have = 5 {
        /// `56 × count` bytes, at most [`MAX_HELD`] entries: each a [`Held`].
        files: &'a [u8] as HeldFiles,
    },
}

/// The most entries a HAVE carries (3,138 bytes of body).
pub const MAX_HELD: usize = 56;

/// Encode a HAVE's entries (at most [`MAX_HELD`] are taken).
pub fn encode_held(list: &[Held]) -> Vec<u8> {
    let mut v = Vec::with_capacity(56 * list.len().min(MAX_HELD));
    encode_items(list.iter().take(MAX_HELD).copied(), &mut v);
    v
}

/// Iterate a HAVE's entries (decoding already checked their layout and `held <= size`).
pub fn held(raw: &[u8]) -> impl Iterator<Item = Held> + '_ {
    decode_items(raw, 56)
}

/// Encode a member list for [`Message::Announce`].
pub fn encode_members(ids: &[u32]) -> Vec<u8> {
    ids.iter().flat_map(|i| i.to_be_bytes()).collect()
}

/// Encode an outcome list for [`Message::End`].
pub fn encode_outcomes(list: &[(u32, Outcome)]) -> Vec<u8> {
    let mut v = Vec::with_capacity(list.len() * 5);
    encode_items(
        list.iter()
            .map(|&(node, outcome)| EndEntry { node, outcome }),
        &mut v,
    );
    v
}

/// Iterate node ids of an announce member list.
pub fn members(raw: &[u8]) -> impl Iterator<Item = u32> + '_ {
    raw.chunks_exact(4).filter_map(be_u32)
}

/// Iterate `(node, outcome)` of an END list. Entries with an unknown outcome are skipped
/// (decoding already rejects them).
pub fn outcomes(raw: &[u8]) -> impl Iterator<Item = (u32, Outcome)> + '_ {
    decode_items::<EndEntry>(raw, 5).map(|e| (e.node, e.outcome))
}

fn be_u32(c: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(c.try_into().ok()?))
}

const MAX_COUNT: usize = u16::MAX as usize;

/// Lists are whole entries, at most 65,535 of them; every outcome is one [`Outcome`] defines.
fn validate(m: &Message<'_>) -> Result<(), Invalid> {
    match m {
        Message::Announce { members, .. }
            if members.len() % 4 != 0 || members.len() / 4 > MAX_COUNT =>
        {
            Err((
                "session.members",
                "must be at most 65535 four-byte node ids",
            ))
        }
        Message::Have { files } => {
            if files.len() % 56 != 0 || files.len() / 56 > MAX_HELD {
                return Err(("session.held", "must be at most 56 entries of 56 bytes"));
            }
            if held(files).any(|h| h.held > h.size) {
                return Err(("session.held", "holds more than the file's size"));
            }
            Ok(())
        }
        Message::End { outcomes } => {
            if outcomes.len() % 5 != 0 || outcomes.len() / 5 > MAX_COUNT {
                return Err((
                    "session.outcomes",
                    "must be at most 65535 five-byte entries",
                ));
            }
            if outcomes
                .chunks_exact(5)
                .any(|c| !matches!(c.get(4), Some(&o) if Outcome::from_u8(o).is_ok()))
            {
                return Err(("session.outcome", "unknown outcome"));
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

// ------------------------------------------------------------------------- tables

/// The layout the session's parameter tables share: `head` as big-endian u32s, a u16 count,
/// then `count` entries of `entry_len` bytes each written by `put`. An error for more than
/// 65,535 entries (`field` names the list).
fn encode_table<E>(
    head: &[u32],
    entries: &[E],
    entry_len: usize,
    field: &'static str,
    put: impl Fn(&mut Vec<u8>, &E),
) -> Result<Vec<u8>, EncodeError> {
    if entries.len() > MAX_COUNT {
        return Err(EncodeError::InvalidField {
            field,
            why: "at most 65535 entries",
        });
    }
    let mut v = Vec::with_capacity(4 * head.len() + 2 + entry_len * entries.len());
    for x in head {
        v.extend_from_slice(&x.to_be_bytes());
    }
    v.extend_from_slice(&(entries.len() as u16).to_be_bytes());
    for e in entries {
        put(&mut v, e);
    }
    Ok(v)
}

/// Parse [`encode_table`]'s layout with `H` head fields; an error for a truncated one, one
/// with bytes after its last entry, or an entry `get` refuses.
fn decode_table<const H: usize, E>(
    raw: &[u8],
    entry_len: usize,
    get: impl Fn(&mut Reader<'_>) -> Result<E, DecodeError>,
) -> Result<([u32; H], Vec<E>), DecodeError> {
    let mut r = Reader::new(raw);
    let mut head = [0u32; H];
    for h in &mut head {
        *h = r.u32()?;
    }
    let count = usize::from(r.u16()?);
    let body = r.bytes(count * entry_len)?;
    if r.remaining() != 0 {
        return Err(DecodeError::TrailingBytes(r.remaining()));
    }
    let entries = body
        .chunks_exact(entry_len)
        .map(|c| get(&mut Reader::new(c)))
        .collect::<Result<Vec<E>, _>>()?;
    Ok((head, entries))
}

/// A role byte: the role at that index of `roles`, or an error naming `field`.
fn role_at<R: Copy>(roles: &[R], byte: u8, field: &'static str) -> Result<R, DecodeError> {
    roles
        .get(usize::from(byte))
        .copied()
        .ok_or(DecodeError::InvalidField {
            field,
            why: "unknown role",
        })
}

// ------------------------------------------------------------------------- dsp parameters

/// A participant's role in a `dsp`, `csp` or `cp` session (the roles say which of the three
/// runs: `csp` and `cp` endpoints report to their region's local exchange).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DspRole {
    /// Reports its status to its region's designated receiver, gets local repairs from it.
    Member = 0,
    /// The region's designated receiver `E_i1`: reports to the source, re-multicasts locally.
    Designated = 1,
    /// Evicted by the sender: its designated receiver (or local exchange) stops waiting for it.
    Evicted = 2,
    /// A `csp` endpoint: reports its status to its region's local exchange.
    Consolidated = 3,
    /// A `cp` endpoint: reports to its region's local exchange and re-multicasts locally what
    /// the exchange assigns it.
    Combined = 4,
    /// The local exchange `L_i` of a `csp` or `cp` region (hosted by `rmcast relay --region`;
    /// its address is unspecified: endpoints reach it through the relay they receive from).
    Exchange = 5,
}

/// One receiver of a `dsp` session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DspEntry {
    /// The receiver's node id.
    pub node: u32,
    /// Its local region.
    pub region: u16,
    /// Member, designated receiver or evicted.
    pub role: DspRole,
    /// Its unicast address (where its members send their status).
    pub addr: std::net::SocketAddr,
}

/// The parameters of a running `dsp` session (ANNOUNCE `params`): the endpoints' timing and
/// every receiver's region, role and unicast address.
///
/// ```text
/// status_min_us (u32) | status_max_us (u32) | local_rtd_us (u32) | r_f_milli (u32)
/// | count (u16) | count × (node (u32) | region (u16) | role (u8)
///                          | address family (u8: 4 or 6) | address (16 bytes; IPv4 in the first 4,
///                            the rest zero) | port (u16))
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DspParams {
    /// Shortest interval between two statuses of an endpoint, microseconds.
    pub status_min_us: u32,
    /// Longest interval between two statuses of an endpoint, microseconds.
    pub status_max_us: u32,
    /// Round-trip delay inside a region, microseconds.
    pub local_rtd_us: u32,
    /// The retransmission timeout factor `r_f`, in thousandths.
    pub r_f_milli: u32,
    /// Every receiver.
    pub entries: Vec<DspEntry>,
}

/// Bytes of one [`DspEntry`] on the wire.
pub const DSP_ENTRY_LEN: usize = 26;

impl DspParams {
    /// The wire representation; an error for more than 65,535 receivers.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let head = [
            self.status_min_us,
            self.status_max_us,
            self.local_rtd_us,
            self.r_f_milli,
        ];
        encode_table(
            &head,
            &self.entries,
            DSP_ENTRY_LEN,
            "session.dsp.entries",
            |v, e| {
                v.extend_from_slice(&e.node.to_be_bytes());
                v.extend_from_slice(&e.region.to_be_bytes());
                v.push(e.role as u8);
                put_addr(v, e.addr);
            },
        )
    }

    /// Parse the wire representation; an error for a truncated, oversized or malformed one.
    pub fn decode(raw: &[u8]) -> Result<Self, DecodeError> {
        use DspRole::*;
        const ROLES: [DspRole; 6] = [
            Member,
            Designated,
            Evicted,
            Consolidated,
            Combined,
            Exchange,
        ];
        let ([status_min_us, status_max_us, local_rtd_us, r_f_milli], entries) =
            decode_table(raw, DSP_ENTRY_LEN, |e| {
                Ok(DspEntry {
                    node: e.u32()?,
                    region: e.u16()?,
                    role: role_at(&ROLES, e.u8()?, "session.dsp.role")?,
                    addr: get_addr(e, "session.dsp.address")?,
                })
            })?;
        Ok(DspParams {
            status_min_us,
            status_max_us,
            local_rtd_us,
            r_f_milli,
            entries,
        })
    }
}

/// A receiver's place in a multi-level `prmp` session ([`PrmpEntry`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum PrmpRole {
    /// A leaf of its region: polled by the region's relay, not by the sender.
    Child = 0,
    /// The region's relay (hosted by `rmcast relay --region`): a child of the sender, the
    /// polling parent of its region's children.
    Relay = 1,
    /// A child the sender evicted: its relay stops polling it.
    Evicted = 2,
}

/// One entry of [`PrmpParams`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrmpEntry {
    /// The node id (a receiver's, or the one the sender gives a region's relay).
    pub node: u32,
    /// Its region.
    pub region: u16,
    /// Child, relay or evicted child.
    pub role: PrmpRole,
}

/// The parameters of a running multi-level `prmp` session (ANNOUNCE `params`; empty for the
/// single-level one, where the sender polls every receiver): how the relays plan their polls
/// (the sender's own settings) and every region's relay and children. Receivers the list
/// does not name are polled by the sender.
///
/// ```text
/// epoch_ipgs (u32) | response_rate (u32, responses/s) | ipg_ns (u32) | mtr_milli (u32)
/// | min_rto_us (u32) | count (u16) | count × (node (u32) | region (u16) | role (u8))
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrmpParams {
    /// Epoch length, in inter-packet gaps (an epoch is a whole number of them).
    pub epoch_ipgs: u32,
    /// Responses per second a parent plans for.
    pub response_rate: u32,
    /// Inter-packet gap, nanoseconds.
    pub ipg_ns: u32,
    /// Multicast threshold ratio, thousandths.
    pub mtr_milli: u32,
    /// Floor of a parent's retransmission timeout, microseconds.
    pub min_rto_us: u32,
    /// The regions' relays and children.
    pub entries: Vec<PrmpEntry>,
}

/// Bytes of one [`PrmpEntry`] on the wire.
pub const PRMP_ENTRY_LEN: usize = 7;

impl PrmpParams {
    /// The wire representation; an error for more than 65,535 entries.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let head = [
            self.epoch_ipgs,
            self.response_rate,
            self.ipg_ns,
            self.mtr_milli,
            self.min_rto_us,
        ];
        encode_table(
            &head,
            &self.entries,
            PRMP_ENTRY_LEN,
            "session.prmp.entries",
            |v, e| {
                v.extend_from_slice(&e.node.to_be_bytes());
                v.extend_from_slice(&e.region.to_be_bytes());
                v.push(e.role as u8);
            },
        )
    }

    /// Parse the wire representation; an error for a truncated, oversized or malformed one.
    pub fn decode(raw: &[u8]) -> Result<Self, DecodeError> {
        const ROLES: [PrmpRole; 3] = [PrmpRole::Child, PrmpRole::Relay, PrmpRole::Evicted];
        let ([epoch_ipgs, response_rate, ipg_ns, mtr_milli, min_rto_us], entries) =
            decode_table(raw, PRMP_ENTRY_LEN, |e| {
                Ok(PrmpEntry {
                    node: e.u32()?,
                    region: e.u16()?,
                    role: role_at(&ROLES, e.u8()?, "session.prmp.role")?,
                })
            })?;
        Ok(PrmpParams {
            epoch_ipgs,
            response_rate,
            ipg_ns,
            mtr_milli,
            min_rto_us,
            entries,
        })
    }
}

/// Bytes of a unicast address on the wire: family (u8: 4 or 6) | address (16 bytes; IPv4 in
/// the first 4, the rest zero) | port (u16).
pub const ADDR_LEN: usize = 19;

fn put_addr(v: &mut Vec<u8>, addr: std::net::SocketAddr) {
    match addr.ip() {
        std::net::IpAddr::V4(ip) => {
            v.push(4);
            v.extend_from_slice(&ip.octets());
            v.extend_from_slice(&[0u8; 12]);
        }
        std::net::IpAddr::V6(ip) => {
            v.push(6);
            v.extend_from_slice(&ip.octets());
        }
    }
    v.extend_from_slice(&addr.port().to_be_bytes());
}

fn get_addr(r: &mut Reader<'_>, field: &'static str) -> Result<std::net::SocketAddr, DecodeError> {
    let fam = r.u8()?;
    let v4 = r.u32()?;
    let pad = r.bytes(12)?;
    let port = r.u16()?;
    let ip: std::net::IpAddr = match fam {
        4 if pad.iter().all(|&b| b == 0) => std::net::Ipv4Addr::from(v4).into(),
        6 => {
            let mut oct = [0u8; 16];
            for (o, b) in oct.iter_mut().zip(v4.to_be_bytes().iter().chain(pad)) {
                *o = *b;
            }
            std::net::Ipv6Addr::from(oct).into()
        }
        _ => {
            return Err(DecodeError::InvalidField {
                field,
                why: "unknown address family or non-zero padding",
            })
        }
    };
    Ok(std::net::SocketAddr::new(ip, port))
}

/// The receivers of a session that exchange protocol packets among themselves, with their
/// unicast addresses (`srm`'s ANNOUNCE `params`: a member accepts requests, repairs and
/// session messages only from these):
///
/// ```text
/// count (u16) | count × (node (u32) | address (ADDR_LEN bytes, see DspParams))
/// ```
pub fn encode_peers(peers: &[(u32, std::net::SocketAddr)]) -> Result<Vec<u8>, EncodeError> {
    encode_table(
        &[],
        peers,
        4 + ADDR_LEN,
        "session.peers",
        |v, (node, addr)| {
            v.extend_from_slice(&node.to_be_bytes());
            put_addr(v, *addr);
        },
    )
}

/// Parse [`encode_peers`]' representation; an error for a truncated, oversized or malformed
/// one.
pub fn decode_peers(raw: &[u8]) -> Result<Vec<(u32, std::net::SocketAddr)>, DecodeError> {
    let ([], peers) = decode_table::<0, _>(raw, 4 + ADDR_LEN, |e| {
        Ok((e.u32()?, get_addr(e, "session.peers.address")?))
    })?;
    Ok(peers)
}

/// One message of each kind (two of some whose layout varies), with the bytes it encodes
/// to ([`crate::samples`]).
pub fn samples() -> Vec<Sample<Message<'static>>> {
    let members = crate::samples::lasting(encode_members(&[1, 2, 0xffff_ffff]));
    let held = crate::samples::lasting(encode_held(&[Held {
        size: 1000,
        held: 600,
        name_key: 0x0102_0304_0506_0708,
        digest: [7; 32],
    }]));
    let outcomes = crate::samples::lasting(encode_outcomes(&[
        (1, Outcome::Completed),
        (9, Outcome::Failed),
    ]));
    vec![
        Sample::control(
            ENV,
            Message::Announce {
                protocol: 2,
                phase: Phase::Running,
                security: 3,
                ack_delay_us: 1000,
                window: 16,
                ack_timeout_us: 5000,
                members,
                params: &[0xaa, 0xbb],
            },
            "524d010f01000000010203040a0b0c0d0000001e \
             02010300000003e800100000138800030000000100000002ffffffffaabb",
        ),
        Sample::control(
            ENV,
            Message::Join { region: None },
            "524d010f02000000010203040a0b0c0d00000000 ",
        ),
        Sample::control(
            ENV,
            Message::Join {
                region: Some(0x0304),
            },
            "524d010f02000000010203040a0b0c0d00000002 0304",
        ),
        Sample::control(
            ENV,
            Message::Report {
                state: ReportState::Failed,
                reason: 4,
                bytes: 1,
                messages: 2,
                repairs: 3,
                duplicates: 4,
                rejected: 5,
            },
            "524d010f03000000010203040a0b0c0d0000002a \
             0204000000000000000100000000000000020000000000000003000000000000\
             00040000000000000005",
        ),
        Sample::control(
            ENV,
            Message::End { outcomes },
            "524d010f04000000010203040a0b0c0d0000000c \
             000200000001000000000902",
        ),
        Sample::control(
            ENV,
            Message::Have { files: held },
            "524d010f05000000010203040a0b0c0d0000003a \
             000100000000000003e800000000000002580102030405060708070707070707\
             0707070707070707070707070707070707070707070707070707",
        ),
    ]
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::type_complexity)]
mod tests {
    use super::*;
    use crate::tests::assert_any_body_round_trips;
    use crate::{Envelope, Message as M, Packet, HEADER_LEN};
    use proptest::prelude::*;

    fn msg_strategy() -> impl Strategy<Value = (u8, Vec<u32>, Vec<(u32, u8)>, [u64; 5], u8)> {
        (
            0u8..4,
            proptest::collection::vec(any::<u32>(), 0..300),
            proptest::collection::vec((any::<u32>(), 0u8..3), 0..300),
            any::<[u64; 5]>(),
            any::<u8>(),
        )
    }

    fn outcome(o: u8) -> Outcome {
        match o {
            0 => Outcome::Completed,
            1 => Outcome::Evicted,
            _ => Outcome::Failed,
        }
    }

    proptest! {
        #[test]
        fn session_round_trip((k, ids, outs, nums, small) in msg_strategy(), session in any::<u32>(), source in any::<u32>()) {
            let members = encode_members(&ids);
            let outs: Vec<(u32, Outcome)> = outs.into_iter().map(|(n, o)| (n, outcome(o))).collect();
            let out_raw = encode_outcomes(&outs);
            let msg = match k {
                0 => Message::Announce { protocol: small, phase: if small % 2 == 0 { Phase::Gathering } else { Phase::Running }, security: small & 3, ack_delay_us: nums[0] as u32, window: nums[1] as u16, ack_timeout_us: nums[2] as u32, members: &members, params: &out_raw },
                1 => Message::Join { region: (small % 2 == 0).then_some(nums[3] as u16) },
                2 => Message::Report { state: ReportState::Complete, reason: small, bytes: nums[0], messages: nums[1], repairs: nums[2], duplicates: nums[3], rejected: nums[4] },
                _ => Message::End { outcomes: &out_raw },
            };
            let env = Envelope { session, source, flags: 0 };
            let bytes = Packet::to_vec(env, &M::Session(msg.clone())).unwrap();
            prop_assert_eq!(bytes.len(), HEADER_LEN + msg.body_len());
            let p = Packet::decode(&bytes).unwrap();
            prop_assert_eq!(p.header.class(), crate::PacketClass::Control);
            prop_assert_eq!(&p.message, &M::Session(msg.clone()));
            if let M::Session(Message::Announce { members: m, .. }) = p.message {
                prop_assert_eq!(super::members(m).collect::<Vec<_>>(), ids);
            }
            if let M::Session(Message::End { outcomes: o }) = p.message {
                prop_assert_eq!(super::outcomes(o).collect::<Vec<_>>(), outs);
            }
            // Every shorter prefix is refused, except an announce cut inside its trailing
            // parameters (they are the rest of the body; their own decoder checks them).
            let keep = match &msg {
                Message::Announce { params, .. } => bytes.len() - params.len(),
                _ => bytes.len(),
            };
            for cut in 0..keep {
                prop_assert!(Packet::decode(&bytes[..cut]).is_err());
            }
        }
    }

    proptest! {
        /// Arbitrary bodies behind a valid session header never panic the decoder, and
        /// whatever decodes re-encodes to the same bytes.
        #[test]
        fn arbitrary_bodies_never_panic(kind in 0u8..6, body in proptest::collection::vec(any::<u8>(), 0..400)) {
            assert_any_body_round_trips(crate::Family::Session, kind, &body)?;
        }
    }

    #[test]
    fn bad_fields_are_typed_errors() {
        let env = Envelope::default();
        let mut b = Packet::to_vec(env, &M::Session(Message::End { outcomes: &[] })).unwrap();
        // claim one entry with an invalid outcome
        b[HEADER_LEN + 1] = 1;
        b.extend_from_slice(&[0, 0, 0, 1, 9]);
        let len = (b.len() - HEADER_LEN) as u32;
        b[16..20].copy_from_slice(&len.to_be_bytes());
        assert!(matches!(
            Packet::decode(&b),
            Err(DecodeError::InvalidField { .. })
        ));
        assert!(Packet::to_vec(
            env,
            &M::Session(Message::End {
                outcomes: &[0, 0, 0, 1, 9]
            })
        )
        .is_err());
    }

    proptest! {
        #[test]
        fn dsp_params_round_trip(
            nums in any::<[u32; 4]>(),
            entries in proptest::collection::vec((any::<u32>(), any::<u16>(), 0u8..6, any::<bool>(), any::<[u8; 16]>(), any::<u16>()), 0..200),
        ) {
            let entries: Vec<DspEntry> = entries.into_iter().map(|(node, region, role, v6, a, port)| {
                let ip: std::net::IpAddr = if v6 { std::net::Ipv6Addr::from(a).into() } else { std::net::Ipv4Addr::new(a[0], a[1], a[2], a[3]).into() };
                DspEntry { node, region, role: match role { 0 => DspRole::Member, 1 => DspRole::Designated, 2 => DspRole::Evicted, 3 => DspRole::Consolidated, 4 => DspRole::Combined, _ => DspRole::Exchange }, addr: std::net::SocketAddr::new(ip, port) }
            }).collect();
            let p = DspParams { status_min_us: nums[0], status_max_us: nums[1], local_rtd_us: nums[2], r_f_milli: nums[3], entries };
            let raw = p.encode().unwrap();
            prop_assert_eq!(raw.len(), 18 + DSP_ENTRY_LEN * p.entries.len());
            prop_assert_eq!(DspParams::decode(&raw).unwrap(), p);
            for cut in 0..raw.len() {
                prop_assert!(DspParams::decode(&raw[..cut]).is_err());
            }
        }

        #[test]
        fn peers_round_trip(
            entries in proptest::collection::vec((any::<u32>(), any::<bool>(), any::<[u8; 16]>(), any::<u16>()), 0..200),
        ) {
            let peers: Vec<(u32, std::net::SocketAddr)> = entries.into_iter().map(|(node, v6, a, port)| {
                let ip: std::net::IpAddr = if v6 { std::net::Ipv6Addr::from(a).into() } else { std::net::Ipv4Addr::new(a[0], a[1], a[2], a[3]).into() };
                (node, std::net::SocketAddr::new(ip, port))
            }).collect();
            let raw = encode_peers(&peers).unwrap();
            prop_assert_eq!(raw.len(), 2 + (4 + ADDR_LEN) * peers.len());
            prop_assert_eq!(decode_peers(&raw).unwrap(), peers);
            for cut in 0..raw.len() {
                prop_assert!(decode_peers(&raw[..cut]).is_err());
            }
        }

        #[test]
        fn peers_arbitrary_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(p) = decode_peers(&raw) {
                prop_assert_eq!(encode_peers(&p).unwrap(), raw);
            }
        }

        #[test]
        fn prmp_params_round_trip(
            nums in any::<[u32; 5]>(),
            entries in proptest::collection::vec((any::<u32>(), any::<u16>(), 0u8..3), 0..200),
        ) {
            let entries: Vec<PrmpEntry> = entries.into_iter().map(|(node, region, role)| PrmpEntry {
                node, region, role: match role { 0 => PrmpRole::Child, 1 => PrmpRole::Relay, _ => PrmpRole::Evicted },
            }).collect();
            let p = PrmpParams { epoch_ipgs: nums[0], response_rate: nums[1], ipg_ns: nums[2], mtr_milli: nums[3], min_rto_us: nums[4], entries };
            let raw = p.encode().unwrap();
            prop_assert_eq!(raw.len(), 22 + PRMP_ENTRY_LEN * p.entries.len());
            prop_assert_eq!(PrmpParams::decode(&raw).unwrap(), p);
            for cut in 0..raw.len() {
                prop_assert!(PrmpParams::decode(&raw[..cut]).is_err());
            }
        }

        #[test]
        fn prmp_params_arbitrary_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(p) = PrmpParams::decode(&raw) {
                prop_assert_eq!(p.encode().unwrap(), raw);
            }
        }

        #[test]
        fn dsp_params_arbitrary_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..200)) {
            if let Ok(p) = DspParams::decode(&raw) {
                prop_assert_eq!(p.encode().unwrap(), raw);
            }
        }
    }
}
