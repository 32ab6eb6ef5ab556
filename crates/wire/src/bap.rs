//! Multicast block acknowledgment protocol, MBAP (seed 000, Segovia 1996, §2.6).
//!
//! Sequence numbers run modulo `2n` for a window of `n` messages; the wire carries them as
//! `u16`, so windows up to 32,767 are representable. Whether a number is inside `[0, 2n)` is
//! checked by the agent, which knows `n`; the codec only carries it.
//!
//! DATA also carries `first`, the sequence number of the oldest message still in the sender's
//! window. The thesis's header has only `seq`; rmcast adds `first` so a receiver that is still
//! waiting for a message the sender gave up on (retransmission limit reached) can skip to the
//! window instead of discarding everything after it forever (see `rmcast_proto::bap`).
//!
//! ```text
//! DATA body: seq (u16) | first (u16) | payload (rest of the datagram)
//! ACK  body: seq (u16)          -- last message received in sequence
//! ```
//!
//! A retransmitted DATA sets [`crate::FLAG_RETRANSMISSION`] in the header.

use crate::field::{no_rules, Rest};
use crate::samples::{Sample, ENV, P};

messages! {
    /// Packet kinds of the `bap` family.
    Bap, data: [Data];
    /// A `bap` message body.
    Message<'a>, validate: no_rules;
    /// DATA: a message.
    Data = 1 {
        /// Sequence number, modulo `2n`.
        seq: u16,
        /// The oldest message still in the sender's window.
        first: u16,
        /// The application data.
        payload: &'a [u8] as Rest,
    },
    /// ACK: feedback to the sender.
    Ack = 2 {
        /// The last message received in sequence.
        seq: u16,
    },
}

/// One message of each kind (two of some whose layout varies), with the bytes it encodes
/// to ([`crate::samples`]).
pub fn samples() -> Vec<Sample<Message<'static>>> {
    vec![
        Sample::data(
            ENV,
            Message::Data {
                seq: 0x1234,
                first: 0xfedc,
                payload: P,
            },
            "524d010201000000010203040a0b0c0d00000007 1234fedcaabbcc",
        ),
        Sample::control(
            ENV,
            Message::Ack { seq: 0xabcd },
            "524d010202000000010203040a0b0c0d00000002 abcd",
        ),
    ]
}
