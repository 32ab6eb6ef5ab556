//! Scalable Reliable Multicast, SRM (Floyd, Jacobson, Liu, McCanne, Zhang, SIGCOMM '95), as
//! used in seed 003 §5.9 (the ns-2 model, with its adaptive timers).
//!
//! ```text
//! DATA    body: seq (u64) | payload (rest)
//! REQUEST body: sender (u32) | round (u8) | seq (u64) | dist_ns (u64)
//! REPAIR  body: sender (u32) | requester (u32) | round (u8) | seq (u64) | dist_ns (u64)
//!               | payload (rest)
//! SESSION body: ts (u64) | next_seq (u64) | n (u16)
//!               | n × [node (u32) | echo_ts (u64) | delay_us (u32)]
//! ```
//!
//! `sender` is the node whose data stream `seq` belongs to. `round` is the sender's timer
//! round for that loss (1 for the first timer; the adaptive algorithm counts duplicates of
//! round 1 only). `dist_ns` is the distance (one-way, nanoseconds) the adaptive algorithm
//! compares: in a REQUEST the requester's distance to the data's sender, in a REPAIR the
//! repairer's distance to the requester. A REPAIR carries [`crate::FLAG_RETRANSMISSION`].
//!
//! A SESSION message carries the member's clock (`ts`), the number of data packets of the
//! session's sender it knows of (`next_seq` = highest seen + 1, which lets members detect the
//! loss of the last packets) and, per member it heard, the timestamp of that member's last
//! session message and how long ago (`delay_us`, microseconds) it was received, so that member
//! can compute its distance as (now − echo_ts − delay) / 2. An entry is 16 bytes, as in ns-2's
//! SRM (four 32-bit words per member), which seed 003's simulations used: with 101 members a
//! round of session messages is then ≈ 1.33 Mb/s on every tree link rather than 1.65 Mb/s
//! with 20-byte entries (a 64-bit nanosecond delay), more than a 1.5 Mb/s link carries. A
//! microsecond is far below the distances SRM's timers scale, and 32 bits hold 71 minutes;
//! a longer delay is sent as the largest value.

use crate::field::{decode_items, encode_items, Invalid, Rest};
use crate::samples::{Sample, ENV, P, RX};

/// Length of one SESSION entry.
pub const SESSION_ENTRY_LEN: usize = 16;
/// Most entries one SESSION message may carry.
pub const MAX_SESSION_ENTRIES: usize = 3_000;

wire_struct! {
    /// One SESSION entry: what this member last heard from `node`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct SessionEntry {
        /// The member heard from.
        pub node: u32,
        /// The `ts` of its last SESSION message.
        pub echo_ts: u64,
        /// How long before this message that one was received, µs (saturating).
        pub delay_us: u32,
    }
}

/// Refused both ways: more than [`MAX_SESSION_ENTRIES`] entries (on decode, from the count
/// alone, before the entries are read).
const TOO_MANY_ENTRIES: Invalid = ("srm.entries", "more than MAX_SESSION_ENTRIES");

borrowed_list! {
    /// The entries of a SESSION message, borrowed from the datagram.
    SessionEntries, item: SESSION_ENTRY_LEN, each: SessionEntry as "entry", count: "entries",
        most: MAX_SESSION_ENTRIES => TOO_MANY_ENTRIES;
}

impl<'a> SessionEntries<'a> {
    /// Wrap raw bytes (a multiple of [`SESSION_ENTRY_LEN`], as produced by
    /// [`SessionEntries::encode`]).
    pub fn from_raw(raw: &'a [u8]) -> Option<Self> {
        raw.len()
            .is_multiple_of(SESSION_ENTRY_LEN)
            .then_some(SessionEntries { raw })
    }
    /// Append entries in the wire representation.
    pub fn encode(entries: impl IntoIterator<Item = SessionEntry>, out: &mut Vec<u8>) {
        encode_items(entries, out);
    }
    /// The entries, decoded.
    pub fn iter(&self) -> impl Iterator<Item = SessionEntry> + 'a {
        decode_items(self.raw, SESSION_ENTRY_LEN)
    }
}

messages! {
    /// Packet kinds of the `srm` family.
    Srm, data: [Data, Repair];
    /// An `srm` message body.
    Message<'a>, validate: validate;
    /// DATA: original data.
    Data = 1 { ..SeqData },
    /// REQUEST: a member's multicast request for a lost packet.
    Request = 2 {
        /// The node whose data stream `seq` belongs to.
        sender: u32,
        /// The requester's timer round for this loss (1: the first timer).
        round: u8,
        /// Sequence number of the lost packet.
        seq: u64,
        /// The requester's distance to `sender`, one-way ns.
        dist_ns: u64,
    },
    /// REPAIR: a member's multicast repair.
    Repair = 3 {
        /// The node whose data stream `seq` belongs to.
        sender: u32,
        /// The member whose request it answers.
        requester: u32,
        /// The repairer's timer round for this loss.
        round: u8,
        /// Sequence number of the packet repaired.
        seq: u64,
        /// The repairer's distance to `requester`, one-way ns.
        dist_ns: u64,
        /// The application data.
        payload: &'a [u8] as Rest,
    },
    /// SESSION: a member's periodic session message.
    Session = 4 {
        /// The member's clock.
        ts: u64,
        /// Data packets of the session's sender it knows of (highest seen + 1).
        next_seq: u64,
        /// What it last heard from each member.
        entries: SessionEntries<'a>,
    },
}

/// A SESSION carries at most [`MAX_SESSION_ENTRIES`] entries.
fn validate(m: &Message<'_>) -> Result<(), Invalid> {
    match m {
        Message::Session { entries, .. } if entries.len() > MAX_SESSION_ENTRIES => {
            Err(TOO_MANY_ENTRIES)
        }
        _ => Ok(()),
    }
}

/// One message of each kind (two of some whose layout varies), with the bytes it encodes
/// to ([`crate::samples`]).
#[allow(clippy::expect_used)]
pub fn samples() -> Vec<Sample<Message<'static>>> {
    let mut raw = Vec::new();
    SessionEntries::encode(
        [
            SessionEntry {
                node: 3,
                echo_ts: 0x1122_3344_5566_7788,
                delay_us: 9,
            },
            SessionEntry {
                node: 4,
                echo_ts: 5,
                delay_us: 6,
            },
        ],
        &mut raw,
    );
    let entries =
        SessionEntries::from_raw(crate::samples::lasting(raw)).expect("the encoder's own output");
    vec![
        Sample::data(
            ENV,
            Message::Data { seq: 5, payload: P },
            "524d010701000000010203040a0b0c0d0000000b \
             0000000000000005aabbcc",
        ),
        Sample::control(
            ENV,
            Message::Request {
                sender: 0x0102_0304,
                round: 2,
                seq: 44,
                dist_ns: 1_000_000,
            },
            "524d010702000000010203040a0b0c0d00000015 \
             0102030402000000000000002c00000000000f4240",
        ),
        Sample::data(
            RX,
            Message::Repair {
                sender: 1,
                requester: 5,
                round: 1,
                seq: 44,
                dist_ns: 7,
                payload: P,
            },
            "524d010703010000010203040a0b0c0d0000001c \
             000000010000000501000000000000002c0000000000000007aabbcc",
        ),
        Sample::control(
            ENV,
            Message::Session {
                ts: 77,
                next_seq: 12,
                entries,
            },
            "524d010704000000010203040a0b0c0d00000032 \
             000000000000004d000000000000000c00020000000311223344556677880000\
             000900000004000000000000000500000006",
        ),
    ]
}
