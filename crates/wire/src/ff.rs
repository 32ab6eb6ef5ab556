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
