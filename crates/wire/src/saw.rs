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
