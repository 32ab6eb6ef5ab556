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

use crate::{DecodeError, EncodeError, Reader, Writer};

packet_kinds! {
    /// Packet kinds of the `pgm` family.
    Pgm, data: [Odata, Rdata];
    /// ODATA: original data.
    Odata = 1,
    /// RDATA: repair data.
    Rdata = 2,
    /// NAK: a receiver's request for a lost packet.
    Nak = 3,
    /// NCF: a NAK confirmation, multicast down the asking interface.
    Ncf = 4,
    /// SPM: the source's path message with its window edges.
    Spm = 5,
}

/// A `pgm` message body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    /// ODATA.
    Odata {
        /// Sequence number.
        seq: u64,
        /// The application data.
        payload: &'a [u8],
    },
    /// RDATA.
    Rdata {
        /// Sequence number of the packet repaired.
        seq: u64,
        /// The application data.
        payload: &'a [u8],
    },
    /// NAK.
    Nak {
        /// Sequence number of the lost packet.
        seq: u64,
    },
    /// NCF.
    Ncf {
        /// Sequence number of the NAK confirmed.
        seq: u64,
    },
    /// SPM.
    Spm {
        /// The SPM's own sequence number.
        spm_seq: u64,
        /// The oldest sequence number the source can still repair.
        trail: u64,
        /// ODATA packets sent so far (the next sequence number).
        lead: u64,
    },
}

impl<'a> Message<'a> {
    pub(crate) fn check(&self) -> Result<(), EncodeError> {
        match self {
            Message::Spm { trail, lead, .. } if trail > lead => Err(EncodeError::InvalidField {
                field: "pgm.trail",
                why: "trailing edge above the leading edge",
            }),
            _ => Ok(()),
        }
    }

    pub(crate) fn body_len(&self) -> usize {
        match self {
            Message::Odata { payload, .. } | Message::Rdata { payload, .. } => 8 + payload.len(),
            Message::Nak { .. } | Message::Ncf { .. } => 8,
            Message::Spm { .. } => 24,
        }
    }

    pub(crate) fn write_body(&self, w: &mut Writer<'_>) {
        match self {
            Message::Odata { seq, payload } | Message::Rdata { seq, payload } => {
                w.u64(*seq);
                w.put(payload);
            }
            Message::Nak { seq } | Message::Ncf { seq } => w.u64(*seq),
            Message::Spm {
                spm_seq,
                trail,
                lead,
            } => {
                w.u64(*spm_seq);
                w.u64(*trail);
                w.u64(*lead);
            }
        }
    }

    pub(crate) fn read_body(kind: u8, r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(match Kind::from_u8(kind)? {
            Kind::Odata => {
                let seq = r.u64()?;
                Message::Odata {
                    seq,
                    payload: r.rest(),
                }
            }
            Kind::Rdata => {
                let seq = r.u64()?;
                Message::Rdata {
                    seq,
                    payload: r.rest(),
                }
            }
            Kind::Nak => Message::Nak { seq: r.u64()? },
            Kind::Ncf => Message::Ncf { seq: r.u64()? },
            Kind::Spm => {
                let spm_seq = r.u64()?;
                let trail = r.u64()?;
                let lead = r.u64()?;
                if trail > lead {
                    return Err(DecodeError::InvalidField {
                        field: "pgm.trail",
                        why: "trailing edge above the leading edge",
                    });
                }
                Message::Spm {
                    spm_seq,
                    trail,
                    lead,
                }
            }
        })
    }
}
