//! Full-feedback baseline, FF (seed 004 §4, after Towsley & Mithal 1987 and Pingali et al.
//! 1994): a selective-repeat sliding-window sender whose receivers acknowledge every data
//! packet they receive.
//!
//! It has its own family (10) rather than reusing `prmp`'s packets because its acknowledgment
//! is a plain per-packet ACK — one sequence number — not PRMP's window report: a RESP would
//! hand the baseline cumulative and selective information the paper's FF does not have (a
//! lost FF ACK is only made good by the timeout and a global retransmission).
//!
//! ```text
//! DATA body: seq (u64) | ts (u64) | payload (rest of the datagram)
//! ACK  body: seq (u64) | ts (u64)
//! ```
//!
//! `ts` is the sender's transmission time of that copy (nanoseconds of its clock); the ACK
//! echoes it so the sender measures the round trip per receiver. A retransmission sets
//! [`crate::FLAG_RETRANSMISSION`] in the header.

use crate::{DecodeError, EncodeError, Reader, Writer};

packet_kinds! {
    /// Packet kinds of the `ff` family.
    Ff, data: [Data];
    /// DATA: a message.
    Data = 1,
    /// ACK: feedback to the sender.
    Ack = 2,
}

/// An `ff` message body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    /// DATA.
    Data {
        /// Sequence number.
        seq: u64,
        /// The sender's transmission time of this copy, ns of its clock.
        ts: u64,
        /// The application data.
        payload: &'a [u8],
    },
    /// ACK.
    Ack {
        /// The sequence number of the packet acknowledged.
        seq: u64,
        /// `ts` of the copy acknowledged, echoed.
        ts: u64,
    },
}

impl<'a> Message<'a> {
    pub(crate) fn check(&self) -> Result<(), EncodeError> {
        Ok(())
    }

    pub(crate) fn body_len(&self) -> usize {
        match self {
            Message::Data { payload, .. } => 16 + payload.len(),
            Message::Ack { .. } => 16,
        }
    }

    pub(crate) fn write_body(&self, w: &mut Writer<'_>) {
        match self {
            Message::Data { seq, ts, payload } => {
                w.u64(*seq);
                w.u64(*ts);
                w.put(payload);
            }
            Message::Ack { seq, ts } => {
                w.u64(*seq);
                w.u64(*ts);
            }
        }
    }

    pub(crate) fn read_body(kind: u8, r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(match Kind::from_u8(kind)? {
            Kind::Data => {
                let seq = r.u64()?;
                let ts = r.u64()?;
                Message::Data {
                    seq,
                    ts,
                    payload: r.rest(),
                }
            }
            Kind::Ack => {
                let seq = r.u64()?;
                let ts = r.u64()?;
                Message::Ack { seq, ts }
            }
        })
    }
}
