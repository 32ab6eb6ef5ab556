//! Light-weight Multicast Services, LMS (Papadopoulos, Parulkar, Varghese; seed 003 Ch. 4–5):
//! router-chosen repliers and directed subcast.
//!
//! ```text
//! DATA      body: seq (u64) | payload (rest)
//! REQUEST   body: seq (u64)                                   receiver → source (unicast)
//! DREQ      body: seq (u64) | requester (u32) | tp (u32) | tp_iface (u32)
//! REPAIR    body: seq (u64) | tp (u32) | tp_iface (u32) | payload (rest)
//! HEARTBEAT body: lead (u64)
//! ```
//!
//! A REQUEST climbs toward the source; the first router at which it did not arrive on that
//! router's replier link is the *turning point* `tp`: it turns the request into a DREQ naming
//! itself and the interface the request came in on (`tp_iface`) and sends it down its replier
//! link. The replier unicasts a REPAIR to `tp`, which subcasts it down `tp_iface`. A REPAIR
//! with `tp` = [`NO_TP`] is a repair the source multicasts to the whole group (a request that
//! reached the source). REPAIR carries [`crate::FLAG_RETRANSMISSION`]. HEARTBEAT (from the
//! source) announces `lead`, the number of data packets sent, so receivers detect tail loss.

use crate::{DecodeError, EncodeError, Reader, Writer};

/// `tp` value of a repair that is not bound for a turning point.
pub const NO_TP: u32 = u32::MAX;

/// Packet kinds of the `lms` family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Kind {
    Data = 1,
    Request = 2,
    Dreq = 3,
    Repair = 4,
    Heartbeat = 5,
}

impl Kind {
    pub fn from_u8(v: u8) -> Result<Self, DecodeError> {
        match v {
            1 => Ok(Kind::Data),
            2 => Ok(Kind::Request),
            3 => Ok(Kind::Dreq),
            4 => Ok(Kind::Repair),
            5 => Ok(Kind::Heartbeat),
            kind => Err(DecodeError::UnknownKind {
                family: crate::Family::Lms,
                kind,
            }),
        }
    }
    /// True for kinds that carry application data.
    pub fn is_data(self) -> bool {
        matches!(self, Kind::Data | Kind::Repair)
    }
}

/// An `lms` message body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    Data {
        seq: u64,
        payload: &'a [u8],
    },
    Request {
        seq: u64,
    },
    Dreq {
        seq: u64,
        requester: u32,
        tp: u32,
        tp_iface: u32,
    },
    Repair {
        seq: u64,
        tp: u32,
        tp_iface: u32,
        payload: &'a [u8],
    },
    Heartbeat {
        lead: u64,
    },
}

impl<'a> Message<'a> {
    pub fn kind(&self) -> Kind {
        match self {
            Message::Data { .. } => Kind::Data,
            Message::Request { .. } => Kind::Request,
            Message::Dreq { .. } => Kind::Dreq,
            Message::Repair { .. } => Kind::Repair,
            Message::Heartbeat { .. } => Kind::Heartbeat,
        }
    }

    pub(crate) fn check(&self) -> Result<(), EncodeError> {
        match self {
            Message::Dreq { tp, .. } if *tp == NO_TP => Err(EncodeError::InvalidField {
                field: "lms.tp",
                why: "a DREQ must name its turning point",
            }),
            _ => Ok(()),
        }
    }

    pub(crate) fn body_len(&self) -> usize {
        match self {
            Message::Data { payload, .. } => 8 + payload.len(),
            Message::Request { .. } | Message::Heartbeat { .. } => 8,
            Message::Dreq { .. } => 20,
            Message::Repair { payload, .. } => 16 + payload.len(),
        }
    }

    pub(crate) fn write_body(&self, w: &mut Writer<'_>) {
        match self {
            Message::Data { seq, payload } => {
                w.u64(*seq);
                w.put(payload);
            }
            Message::Request { seq } => w.u64(*seq),
            Message::Heartbeat { lead } => w.u64(*lead),
            Message::Dreq {
                seq,
                requester,
                tp,
                tp_iface,
            } => {
                w.u64(*seq);
                w.u32(*requester);
                w.u32(*tp);
                w.u32(*tp_iface);
            }
            Message::Repair {
                seq,
                tp,
                tp_iface,
                payload,
            } => {
                w.u64(*seq);
                w.u32(*tp);
                w.u32(*tp_iface);
                w.put(payload);
            }
        }
    }

    pub(crate) fn read_body(kind: u8, r: &mut Reader<'a>) -> Result<Self, DecodeError> {
        Ok(match Kind::from_u8(kind)? {
            Kind::Data => {
                let seq = r.u64()?;
                Message::Data {
                    seq,
                    payload: r.rest(),
                }
            }
            Kind::Request => Message::Request { seq: r.u64()? },
            Kind::Heartbeat => Message::Heartbeat { lead: r.u64()? },
            Kind::Dreq => {
                let seq = r.u64()?;
                let requester = r.u32()?;
                let tp = r.u32()?;
                let tp_iface = r.u32()?;
                if tp == NO_TP {
                    return Err(DecodeError::InvalidField {
                        field: "lms.tp",
                        why: "a DREQ must name its turning point",
                    });
                }
                Message::Dreq {
                    seq,
                    requester,
                    tp,
                    tp_iface,
                }
            }
            Kind::Repair => {
                let seq = r.u64()?;
                let tp = r.u32()?;
                let tp_iface = r.u32()?;
                Message::Repair {
                    seq,
                    tp,
                    tp_iface,
                    payload: r.rest(),
                }
            }
        })
    }
}
