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

use crate::{DecodeError, EncodeError, Reader, Writer};

packet_kinds! {
    /// Packet kinds of the `bap` family.
    Bap, data: [Data];
    /// DATA: a message.
    Data = 1,
    /// ACK: feedback to the sender.
    Ack = 2,
}

/// A `bap` message body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    /// DATA.
    Data {
        /// Sequence number, modulo `2n`.
        seq: u16,
        /// The oldest message still in the sender's window.
        first: u16,
        /// The application data.
        payload: &'a [u8],
    },
    /// ACK.
    Ack {
        /// The last message received in sequence.
        seq: u16,
    },
}

impl<'a> Message<'a> {
    pub(crate) fn check(&self) -> Result<(), EncodeError> {
        Ok(())
    }

    pub(crate) fn body_len(&self) -> usize {
        match self {
            Message::Data { payload, .. } => 4 + payload.len(),
            Message::Ack { .. } => 2,
        }
    }

    pub(crate) fn write_body(&self, w: &mut Writer<'_>) {
        match self {
            Message::Data {
                seq,
                first,
                payload,
            } => {
                w.u16(*seq);
                w.u16(*first);
                w.put(payload);
            }
            Message::Ack { seq } => w.u16(*seq),
        }
    }

    pub(crate) fn read_body(kind: u8, r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        match Kind::from_u8(kind)? {
            Kind::Data => {
                let seq = r.u16()?;
                let first = r.u16()?;
                Ok(Message::Data {
                    seq,
                    first,
                    payload: r.rest(),
                })
            }
            Kind::Ack => Ok(Message::Ack { seq: r.u16()? }),
        }
    }
}
