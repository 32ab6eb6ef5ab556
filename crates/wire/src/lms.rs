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

use crate::field::{Invalid, Rest};
use crate::samples::{Sample, ENV, P, RX};

/// `tp` value of a repair that is not bound for a turning point.
pub const NO_TP: u32 = u32::MAX;

messages! {
    /// Packet kinds of the `lms` family.
    Lms, data: [Data, Repair];
    /// An `lms` message body.
    Message<'a>, validate: validate;
    /// DATA: original data from the source.
    Data = 1 { ..SeqData },
    /// REQUEST: a receiver's request for a lost packet, toward the source.
    Request = 2 {
        /// Sequence number of the lost packet.
        seq: u64,
        /// The receiver's request number for this packet (0: the first).
        attempt: u16,
    },
    /// DREQ: a request turned at a turning point, down the replier link.
    Dreq = 3 {
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
    /// REPAIR: a replier's (or the source's) repair.
    Repair = 4 {
        /// Sequence number of the packet repaired.
        seq: u64,
        /// The turning point to subcast at, or [`NO_TP`] for a repair multicast to the group.
        tp: u32,
        /// The interface the turning point subcasts it down.
        tp_iface: u32,
        /// The application data.
        payload: &'a [u8] as Rest,
    },
    /// HEARTBEAT: the source's `lead`.
    Heartbeat = 5 {
        /// Data packets sent so far (the next sequence number).
        lead: u64,
    },
    /// REFRESH: a receiver's replier cost (adaptive repliers).
    Refresh = 6 {
        /// Losses the receiver detected in its last sampling interval.
        cost: u32,
    },
}

/// A DREQ names its turning point.
fn validate(m: &Message<'_>) -> Result<(), Invalid> {
    match m {
        Message::Dreq { tp, .. } if *tp == NO_TP => {
            Err(("lms.tp", "a DREQ must name its turning point"))
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
            Message::Data { seq: 1, payload: P },
            "524d010901000000010203040a0b0c0d0000000b \
             0000000000000001aabbcc",
        ),
        Sample::control(
            ENV,
            Message::Request {
                seq: 8,
                attempt: 0x0102,
            },
            "524d010902000000010203040a0b0c0d0000000a \
             00000000000000080102",
        ),
        Sample::control(
            ENV,
            Message::Dreq {
                seq: 8,
                requester: 4,
                tp: 2,
                tp_iface: 1,
                attempt: 3,
            },
            "524d010903000000010203040a0b0c0d00000016 \
             00000000000000080000000400000002000000010003",
        ),
        Sample::data(
            RX,
            Message::Repair {
                seq: 8,
                tp: NO_TP,
                tp_iface: 1,
                payload: P,
            },
            "524d010904010000010203040a0b0c0d00000013 \
             0000000000000008ffffffff00000001aabbcc",
        ),
        Sample::control(
            ENV,
            Message::Heartbeat { lead: 99 },
            "524d010905000000010203040a0b0c0d00000008 0000000000000063",
        ),
        Sample::control(
            ENV,
            Message::Refresh { cost: 0x0a0b },
            "524d010906000000010203040a0b0c0d00000004 00000a0b",
        ),
    ]
}
