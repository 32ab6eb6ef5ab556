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

use crate::{DecodeError, EncodeError, Reader, Writer};

packet_kinds! {
    /// Packet kinds of the `saw` family.
    Saw, data: [Data];
    /// DATA: a message.
    Data = 1,
    /// ACK: feedback to the sender.
    Ack = 2,
}

/// A `saw` message body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    /// DATA.
    Data {
        /// The 1-bit sequence number (0 or 1).
        seq: u8,
        /// The application data.
        payload: &'a [u8],
    },
    /// ACK.
    Ack {
        /// The sequence number acknowledged (0 or 1).
        seq: u8,
    },
}

fn read_seq(r: &mut Reader<'_>) -> Result<u8, DecodeError> {
    let seq = r.u8()?;
    if seq > 1 {
        return Err(DecodeError::InvalidField {
            field: "saw.seq",
            why: "a stop-and-wait sequence number is one bit (0 or 1)",
        });
    }
    Ok(seq)
}

impl<'a> Message<'a> {
    pub(crate) fn check(&self) -> Result<(), EncodeError> {
        let seq = match self {
            Message::Data { seq, .. } | Message::Ack { seq } => *seq,
        };
        if seq > 1 {
            return Err(EncodeError::InvalidField {
                field: "saw.seq",
                why: "a stop-and-wait sequence number is one bit (0 or 1)",
            });
        }
        Ok(())
    }

    pub(crate) fn body_len(&self) -> usize {
        match self {
            Message::Data { payload, .. } => 1 + payload.len(),
            Message::Ack { .. } => 1,
        }
    }

    pub(crate) fn write_body(&self, w: &mut Writer<'_>) {
        match self {
            Message::Data { seq, payload } => {
                w.u8(*seq);
                w.put(payload);
            }
            Message::Ack { seq } => w.u8(*seq),
        }
    }

    pub(crate) fn read_body(kind: u8, r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        match Kind::from_u8(kind)? {
            Kind::Data => {
                let seq = read_seq(r)?;
                Ok(Message::Data {
                    seq,
                    payload: r.rest(),
                })
            }
            Kind::Ack => Ok(Message::Ack { seq: read_seq(r)? }),
        }
    }
}
