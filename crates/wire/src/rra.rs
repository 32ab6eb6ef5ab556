//! Round-robin acknowledgment, RRA (seed 000, Segovia 1996, Ch. 5: proposed, never built).
//!
//! Each DATA names the one receiver that must acknowledge it (`acker`, a node id, or
//! [`NO_ACKER`] for a repair that solicits nobody). The named receiver answers with an ACK
//! reporting everything it holds: all messages below `cum`, and for `cum + 1 ..= upto` one bit
//! each in `bitmap` (bit `i` of byte `i / 8`, least significant first, stands for
//! `cum + 1 + i`). POLL asks one receiver (unicast) for the same report when no DATA is left to
//! carry the request. `low` in DATA and POLL is the oldest message the sender still holds:
//! a receiver missing something older skips it (the sender gave up on it).
//!
//! ```text
//! DATA body: seq (u64) | low (u64) | acker (u32) | payload (rest of the datagram)
//! ACK  body: cum (u64) | upto (u64) | bitmap length (u16) | bitmap
//! POLL body: upto (u64) | low (u64)
//! ```
//!
//! Checked on decode and encode: `low <= seq` (DATA), `low <= upto + 1` (POLL),
//! `cum <= upto + 1` (ACK), and the bitmap holds no more bytes than the range needs.

use crate::field::{Invalid, LenPrefixed, Rest};
use crate::samples::{Sample, ENV, P};

/// `acker` value naming no receiver.
pub const NO_ACKER: u32 = u32::MAX;

messages! {
    /// Packet kinds of the `rra` family.
    Rra, data: [Data];
    /// A `rra` message body.
    Message<'a>, validate: validate;
    /// DATA: a message naming its acker.
    Data = 1 {
        /// Sequence number.
        seq: u64,
        /// The oldest message the sender still holds.
        low: u64,
        /// The receiver that must acknowledge it, or [`NO_ACKER`].
        acker: u32,
        /// The application data.
        payload: &'a [u8] as Rest,
    },
    /// ACK: a receiver's report.
    Ack = 2 {
        /// Every message below it is held.
        cum: u64,
        /// The last message the bitmap covers.
        upto: u64,
        /// One bit per message `cum + 1 ..= upto`, least significant first.
        bitmap: &'a [u8] as LenPrefixed,
    },
    /// POLL: a request for a report.
    Poll = 3 {
        /// The last message the report should cover.
        upto: u64,
        /// The oldest message the sender still holds.
        low: u64,
    },
}

/// Bytes a bitmap for `cum + 1 ..= upto` needs (0 when the range is empty).
pub fn bitmap_bytes(cum: u64, upto: u64) -> u64 {
    upto.saturating_sub(cum).div_ceil(8)
}

fn validate(m: &Message<'_>) -> Result<(), Invalid> {
    match m {
        Message::Data { seq, low, .. } if low > seq => {
            Err(("rra.low", "the oldest held message is after this one"))
        }
        Message::Poll { upto, low } if *low > upto.saturating_add(1) => {
            Err(("rra.low", "the oldest held message is after the poll range"))
        }
        Message::Ack { cum, upto, bitmap } => {
            if *cum > upto.saturating_add(1) {
                Err(("rra.cum", "cumulative point beyond the reported range"))
            } else if bitmap.len() as u64 > bitmap_bytes(*cum, *upto) {
                Err(("rra.bitmap", "longer than the reported range needs"))
            } else if bitmap.len() > usize::from(u16::MAX) {
                Err(("rra.bitmap", "longer than 65,535 bytes"))
            } else {
                Ok(())
            }
        }
        _ => Ok(()),
    }
}

/// One message of each kind (two of some whose layout varies), with the bytes it encodes
/// to ([`crate::samples`]).
pub fn samples() -> Vec<Sample<Message<'static>>> {
    vec![
        Sample::data(
            ENV,
            Message::Data {
                seq: 0x0102_0304_0506_0708,
                low: 3,
                acker: NO_ACKER,
                payload: P,
            },
            "524d010301000000010203040a0b0c0d00000017 \
             01020304050607080000000000000003ffffffffaabbcc",
        ),
        Sample::control(
            ENV,
            rra_ack(57, &[0x5a, 0x01, 0x01]),
            "524d010302000000010203040a0b0c0d00000015 \
             0000000000000028000000000000003900035a0101",
        ),
        Sample::control(
            ENV,
            rra_ack(39, &[]),
            "524d010302000000010203040a0b0c0d00000012 \
             000000000000002800000000000000270000",
        ),
        Sample::control(
            ENV,
            Message::Poll { upto: 9, low: 2 },
            "524d010303000000010203040a0b0c0d00000010 \
             00000000000000090000000000000002",
        ),
    ]
}

/// An RRA ACK of a receiver holding everything below 40, reporting up to `upto`.
fn rra_ack(upto: u64, bitmap: &'static [u8]) -> Message<'static> {
    Message::Ack {
        cum: 40,
        upto,
        bitmap,
    }
}
