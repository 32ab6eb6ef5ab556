//! Multicast stop-and-wait (seed 000, Segovia 1996, §2.5).
//!
//! Two packet kinds. DATA carries a 1-bit sequence number (0 or 1, as in the thesis) and the
//! application payload; ACK names the sequence number it acknowledges and is unicast to the
//! sender. A retransmitted DATA sets [`crate::FLAG_RETRANSMISSION`] in the header.
//!
//! ```text
//! DATA body: seq (u8, 0 or 1) | payload (rest of the datagram)
//! ACK  body: seq (u8, 0 or 1)
//! ```

use crate::field::{Invalid, Rest};
use crate::samples::{Sample, ENV, P, RX};

messages! {
    /// Packet kinds of the `saw` family.
    Saw, data: [Data];
    /// A `saw` message body.
    Message<'a>, validate: validate;
    /// DATA: a message.
    Data = 1 {
        /// The 1-bit sequence number (0 or 1).
        seq: u8,
        /// The application data.
        payload: &'a [u8] as Rest,
    },
    /// ACK: feedback to the sender.
    Ack = 2 {
        /// The sequence number acknowledged (0 or 1).
        seq: u8,
    },
}

/// The sequence number is one bit.
fn validate(m: &Message<'_>) -> Result<(), Invalid> {
    match m {
        Message::Data { seq, .. } | Message::Ack { seq } if *seq > 1 => Err((
            "saw.seq",
            "a stop-and-wait sequence number is one bit (0 or 1)",
        )),
        _ => Ok(()),
    }
}

/// One message of each kind (two of some whose layout varies), with the bytes it encodes
/// to ([`crate::samples`]).
pub fn samples() -> Vec<Sample<Message<'static>>> {
    vec![
        Sample::data(
            ENV,
            Message::Data { seq: 1, payload: P },
            "524d010101000000010203040a0b0c0d00000004 01aabbcc",
        ),
        Sample::data(
            RX,
            Message::Data {
                seq: 0,
                payload: &[],
            },
            "524d010101010000010203040a0b0c0d00000001 00",
        ),
        Sample::control(
            ENV,
            Message::Ack { seq: 1 },
            "524d010102000000010203040a0b0c0d00000001 01",
        ),
    ]
}
