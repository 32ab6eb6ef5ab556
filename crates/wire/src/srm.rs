//! Scalable Reliable Multicast, SRM (Floyd, Jacobson, Liu, McCanne, Zhang, SIGCOMM '95), as
//! used in seed 003 §5.9 (the ns-2 model, with its adaptive timers).
//!
//! ```text
//! DATA    body: seq (u64) | payload (rest)
//! REQUEST body: sender (u32) | round (u8) | seq (u64) | dist_ns (u64)
//! REPAIR  body: sender (u32) | requester (u32) | round (u8) | seq (u64) | dist_ns (u64) | payload (rest)
//! SESSION body: ts (u64) | next_seq (u64) | n (u16) | n × [node (u32) | echo_ts (u64) | delay_ns (u64)]
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
//! session message and how long ago (`delay_ns`) it was received, so that member can compute
//! its distance as (now − echo_ts − delay) / 2.

use crate::{DecodeError, EncodeError, Reader, Writer};

/// Length of one SESSION entry.
pub const SESSION_ENTRY_LEN: usize = 20;
/// Most entries one SESSION message may carry.
pub const MAX_SESSION_ENTRIES: usize = 3_000;

packet_kinds! {
    /// Packet kinds of the `srm` family.
    Srm, data: [Data, Repair];
    /// DATA: original data.
    Data = 1,
    /// REQUEST: a member's multicast request for a lost packet.
    Request = 2,
    /// REPAIR: a member's multicast repair.
    Repair = 3,
    /// SESSION: a member's periodic session message.
    Session = 4,
}

/// One SESSION entry: what this member last heard from `node`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionEntry {
    /// The member heard from.
    pub node: u32,
    /// The `ts` of its last SESSION message.
    pub echo_ts: u64,
    /// How long before this message that one was received, ns.
    pub delay_ns: u64,
}

/// The entries of a SESSION message, borrowed from the datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionEntries<'a> {
    raw: &'a [u8],
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
        for e in entries {
            out.extend_from_slice(&e.node.to_be_bytes());
            out.extend_from_slice(&e.echo_ts.to_be_bytes());
            out.extend_from_slice(&e.delay_ns.to_be_bytes());
        }
    }
    /// The entries in the wire representation.
    pub fn raw(&self) -> &'a [u8] {
        self.raw
    }
    /// Number of entries.
    pub fn len(&self) -> usize {
        self.raw.len() / SESSION_ENTRY_LEN
    }
    /// Whether there is no entry.
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }
    /// The entries, decoded.
    pub fn iter(&self) -> impl Iterator<Item = SessionEntry> + 'a {
        self.raw.chunks_exact(SESSION_ENTRY_LEN).map(|c| {
            let mut r = Reader::new(c);
            SessionEntry {
                node: r.u32().unwrap_or(0),
                echo_ts: r.u64().unwrap_or(0),
                delay_ns: r.u64().unwrap_or(0),
            }
        })
    }
}

/// An `srm` message body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    /// DATA.
    Data {
        /// Sequence number.
        seq: u64,
        /// The application data.
        payload: &'a [u8],
    },
    /// REQUEST.
    Request {
        /// The node whose data stream `seq` belongs to.
        sender: u32,
        /// The requester's timer round for this loss (1: the first timer).
        round: u8,
        /// Sequence number of the lost packet.
        seq: u64,
        /// The requester's distance to `sender`, one-way ns.
        dist_ns: u64,
    },
    /// REPAIR.
    Repair {
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
        payload: &'a [u8],
    },
    /// SESSION.
    Session {
        /// The member's clock.
        ts: u64,
        /// Data packets of the session's sender it knows of (highest seen + 1).
        next_seq: u64,
        /// What it last heard from each member.
        entries: SessionEntries<'a>,
    },
}

impl<'a> Message<'a> {
    pub(crate) fn check(&self) -> Result<(), EncodeError> {
        match self {
            Message::Session { entries, .. } if entries.len() > MAX_SESSION_ENTRIES => {
                Err(EncodeError::InvalidField {
                    field: "srm.entries",
                    why: "more than MAX_SESSION_ENTRIES",
                })
            }
            _ => Ok(()),
        }
    }

    pub(crate) fn body_len(&self) -> usize {
        match self {
            Message::Data { payload, .. } => 8 + payload.len(),
            Message::Request { .. } => 21,
            Message::Repair { payload, .. } => 25 + payload.len(),
            Message::Session { entries, .. } => 18 + entries.raw.len(),
        }
    }

    pub(crate) fn write_body(&self, w: &mut Writer<'_>) {
        match self {
            Message::Data { seq, payload } => {
                w.u64(*seq);
                w.put(payload);
            }
            Message::Request {
                sender,
                round,
                seq,
                dist_ns,
            } => {
                w.u32(*sender);
                w.u8(*round);
                w.u64(*seq);
                w.u64(*dist_ns);
            }
            Message::Repair {
                sender,
                requester,
                round,
                seq,
                dist_ns,
                payload,
            } => {
                w.u32(*sender);
                w.u32(*requester);
                w.u8(*round);
                w.u64(*seq);
                w.u64(*dist_ns);
                w.put(payload);
            }
            Message::Session {
                ts,
                next_seq,
                entries,
            } => {
                w.u64(*ts);
                w.u64(*next_seq);
                w.u16(entries.len() as u16);
                w.put(entries.raw);
            }
        }
    }

    pub(crate) fn read_body(kind: u8, r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(match Kind::from_u8(kind)? {
            Kind::Data => {
                let seq = r.u64()?;
                Message::Data {
                    seq,
                    payload: r.rest(),
                }
            }
            Kind::Request => Message::Request {
                sender: r.u32()?,
                round: r.u8()?,
                seq: r.u64()?,
                dist_ns: r.u64()?,
            },
            Kind::Repair => Message::Repair {
                sender: r.u32()?,
                requester: r.u32()?,
                round: r.u8()?,
                seq: r.u64()?,
                dist_ns: r.u64()?,
                payload: r.rest(),
            },
            Kind::Session => {
                let ts = r.u64()?;
                let next_seq = r.u64()?;
                let n = usize::from(r.u16()?);
                if n > MAX_SESSION_ENTRIES {
                    return Err(DecodeError::InvalidField {
                        field: "srm.entries",
                        why: "more than MAX_SESSION_ENTRIES",
                    });
                }
                let raw = r.bytes(n * SESSION_ENTRY_LEN)?;
                Message::Session {
                    ts,
                    next_seq,
                    entries: SessionEntries { raw },
                }
            }
        })
    }
}
