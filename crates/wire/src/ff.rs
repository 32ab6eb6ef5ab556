//! Full-feedback baseline, FF (seed 004 §4, after Towsley & Mithal 1987 and Pingali et al.
//! 1994): a selective-repeat sliding-window sender whose receivers acknowledge every data
//! packet they receive.
//!
//! It has its own family (10) rather than reusing `prmp`'s packets because its acknowledgment
//! is a plain per-packet ACK — one sequence number — not PRMP's window report: a RESP would
//! hand the baseline cumulative and selective information the paper's FF does not have (a
//! lost FF ACK is only made good by the timeout and a global retransmission). CUMACK is the
//! variant beyond the paper: the same ACK plus the receiver's cumulative point, so that a
//! lost ACK is made good by the next one.
//!
//! ```text
//! DATA   body: seq (u64) | ts (u64) | payload (rest of the datagram)
//! ACK    body: seq (u64) | ts (u64)
//! CUMACK body: seq (u64) | ts (u64) | cum (u64)
//! ```
//!
//! `ts` is the sender's transmission time of that copy (nanoseconds of its clock); the ACK
//! echoes it so the sender measures the round trip per receiver. A retransmission sets
//! [`crate::FLAG_RETRANSMISSION`] in the header.

use crate::field::{no_rules, Rest};
use crate::samples::{Sample, ENV, P};

messages! {
    /// Packet kinds of the `ff` family.
    Ff, data: [Data];
    /// An `ff` message body.
    Message<'a>, validate: no_rules;
    /// DATA: a message.
    Data = 1 {
        /// Sequence number.
        seq: u64,
        /// The sender's transmission time of this copy, ns of its clock.
        ts: u64,
        /// The application data.
        payload: &'a [u8] as Rest,
    },
    /// ACK: feedback to the sender.
    Ack = 2 {
        /// The sequence number of the packet acknowledged.
        seq: u64,
        /// `ts` of the copy acknowledged, echoed.
        ts: u64,
    },
    /// CUMACK: an ACK that also acknowledges every packet below `cum`.
    CumAck = 3 {
        /// The sequence number of the packet acknowledged.
        seq: u64,
        /// `ts` of the copy acknowledged, echoed.
        ts: u64,
        /// The receiver's next in-order sequence number: every packet below it was received.
        cum: u64,
    },
}

/// One message of each kind (two of some whose layout varies), with the bytes it encodes
/// to ([`crate::samples`]).
pub fn samples() -> Vec<Sample<Message<'static>>> {
    vec![
        Sample::data(
            ENV,
            Message::Data {
                seq: 1,
                ts: 2,
                payload: P,
            },
            "524d010a01000000010203040a0b0c0d00000013 \
             00000000000000010000000000000002aabbcc",
        ),
        Sample::control(
            ENV,
            Message::Ack { seq: 12, ts: 34 },
            "524d010a02000000010203040a0b0c0d00000010 \
             000000000000000c0000000000000022",
        ),
        Sample::control(
            ENV,
            Message::CumAck {
                seq: 12,
                ts: 34,
                cum: 9,
            },
            "524d010a03000000010203040a0b0c0d00000018 \
             000000000000000c00000000000000220000000000000009",
        ),
    ]
}
