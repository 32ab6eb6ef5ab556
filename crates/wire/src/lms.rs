//! Light-weight Multicast Services, LMS (Papadopoulos, Parulkar, Varghese; seed 003 Ch. 4–5):
//! router-chosen repliers and directed subcast.
//!
//! ```text
//! DATA      body: seq (u64) | payload (rest)
//! REQUEST   body: seq (u64) | attempt (u16)                   receiver → source (unicast)
//! DREQ      body: seq (u64) | requester (u32) | tp (u32) | tp_iface (u32) | attempt (u16)
//! REPAIR    body: seq (u64) | tp (u32) | tp_iface (u32) | payload (rest)
//! HEARTBEAT body: lead (u64)
//! REFRESH   body: cost (u32)                                  receiver → source (unicast)
//! ```
//!
//! A REQUEST climbs toward the source; the first router at which it did not arrive on that
//! router's replier link is the *turning point* `tp`: it turns the request into a DREQ naming
//! itself and the interface the request came in on (`tp_iface`) and sends it down its replier
//! link. The replier unicasts a REPAIR to `tp`, which subcasts it down `tp_iface`. A REPAIR
//! with `tp` = [`NO_TP`] is a repair the source multicasts to the whole group (a request that
//! reached the source). REPAIR carries [`crate::FLAG_RETRANSMISSION`]. HEARTBEAT (from the
//! source) announces `lead`, the number of data packets sent, so receivers detect tail loss.
//! `attempt` counts a receiver's requests for one packet (0 = the first, sent on detecting
//! the gap; the DREQ copies it), so a replier can tell a first request from a repeat.
//! REFRESH (adaptive repliers only) carries a receiver's replier *cost*, the losses it
//! detected in its last sampling interval; routers on the way to the source read it to
//! keep their replier link on the cheapest interface.

use crate::{DecodeError, EncodeError, Reader, Writer};

/// `tp` value of a repair that is not bound for a turning point.
pub const NO_TP: u32 = u32::MAX;

packet_kinds! {
    /// Packet kinds of the `lms` family.
    Lms, data: [Data, Repair];
    /// DATA: original data from the source.
    Data = 1,
    /// REQUEST: a receiver's request for a lost packet, toward the source.
    Request = 2,
    /// DREQ: a request turned at a turning point, down the replier link.
    Dreq = 3,
    /// REPAIR: a replier's (or the source's) repair.
    Repair = 4,
    /// HEARTBEAT: the source's `lead`.
    Heartbeat = 5,
    /// REFRESH: a receiver's replier cost (adaptive repliers).
    Refresh = 6,
}

/// An `lms` message body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message<'a> {
    /// DATA.
    Data {
        /// Sequence number.
        seq: u64,
        /// The application data.
        payload: &'a [u8],
    },
    /// REQUEST.
    Request {
        /// Sequence number of the lost packet.
        seq: u64,
        /// The receiver's request number for this packet (0: the first).
        attempt: u16,
    },
    /// DREQ.
    Dreq {
        /// Sequence number of the lost packet.
        seq: u64,
        /// Node id of the receiver that asked.
        requester: u32,
        /// The turning point (a router's node id).
        tp: u32,
        /// The turning point's interface the request came in on.
        tp_iface: u32,
        /// Copied from the REQUEST.
        attempt: u16,
    },
    /// REPAIR.
    Repair {
        /// Sequence number of the packet repaired.
        seq: u64,
        /// The turning point to subcast at, or [`NO_TP`] for a repair multicast to the group.
        tp: u32,
        /// The interface the turning point subcasts it down.
        tp_iface: u32,
        /// The application data.
        payload: &'a [u8],
    },
    /// HEARTBEAT.
    Heartbeat {
        /// Data packets sent so far (the next sequence number).
        lead: u64,
    },
    /// REFRESH.
    Refresh {
        /// Losses the receiver detected in its last sampling interval.
        cost: u32,
    },
}

impl<'a> Message<'a> {
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
            Message::Heartbeat { .. } => 8,
            Message::Request { .. } => 10,
            Message::Dreq { .. } => 22,
            Message::Refresh { .. } => 4,
            Message::Repair { payload, .. } => 16 + payload.len(),
        }
    }

    pub(crate) fn write_body(&self, w: &mut Writer<'_>) {
        match self {
            Message::Data { seq, payload } => {
                w.u64(*seq);
                w.put(payload);
            }
            Message::Request { seq, attempt } => {
                w.u64(*seq);
                w.u16(*attempt);
            }
            Message::Heartbeat { lead } => w.u64(*lead),
            Message::Refresh { cost } => w.u32(*cost),
            Message::Dreq {
                seq,
                requester,
                tp,
                tp_iface,
                attempt,
            } => {
                w.u64(*seq);
                w.u32(*requester);
                w.u32(*tp);
                w.u32(*tp_iface);
                w.u16(*attempt);
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
            Kind::Request => Message::Request {
                seq: r.u64()?,
                attempt: r.u16()?,
            },
            Kind::Heartbeat => Message::Heartbeat { lead: r.u64()? },
            Kind::Refresh => Message::Refresh { cost: r.u32()? },
            Kind::Dreq => {
                let seq = r.u64()?;
                let requester = r.u32()?;
                let tp = r.u32()?;
                let tp_iface = r.u32()?;
                let attempt = r.u16()?;
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
                    attempt,
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
