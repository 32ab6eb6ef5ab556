//! PGM essentials after RFC 3208, as seed 003 §5.10 simulated them: ODATA, RDATA, NAK, NCF,
//! SPM.
//!
//! ```text
//! ODATA body: seq (u64) | payload (rest)
//! RDATA body: seq (u64) | payload (rest)           (header flag FLAG_RETRANSMISSION)
//! NAK   body: seq (u64)
//! NCF   body: seq (u64)
//! SPM   body: spm_seq (u64) | trail (u64) | lead (u64)
//! ```
//!
//! `lead` in an SPM is the number of ODATA packets sent so far (the next sequence number), so
//! receivers detect lost packets at the tail; `trail` is the oldest sequence number the
//! source can still repair. RFC 3208 carries the NAK's source and group addresses and the
//! path NLA; here the NAK travels as a unicast datagram to the source and network elements on
//! the way see it, so the header's source node is the NAK's originator.

use crate::field::Invalid;

messages! {
    /// Packet kinds of the `pgm` family.
    Pgm, data: [Odata, Rdata];
    /// A `pgm` message body.
    Message<'a>, validate: validate;
    /// ODATA: original data.
    Odata = 1 { ..SeqData },
    /// RDATA: repair data.
    Rdata = 2 { ..SeqData },
    /// NAK: a receiver's request for a lost packet.
    Nak = 3 {
        /// Sequence number of the lost packet.
        seq: u64,
    },
    /// NCF: a NAK confirmation, multicast down the asking interface.
    Ncf = 4 {
        /// Sequence number of the NAK confirmed.
        seq: u64,
    },
    /// SPM: the source's path message with its window edges.
    Spm = 5 {
        /// The SPM's own sequence number.
        spm_seq: u64,
        /// The oldest sequence number the source can still repair.
        trail: u64,
        /// ODATA packets sent so far (the next sequence number).
        lead: u64,
    },
}

/// An SPM's window edges are in order.
fn validate(m: &Message<'_>) -> Result<(), Invalid> {
    match m {
        Message::Spm { trail, lead, .. } if trail > lead => {
            Err(("pgm.trail", "trailing edge above the leading edge"))
        }
        _ => Ok(()),
    }
}
