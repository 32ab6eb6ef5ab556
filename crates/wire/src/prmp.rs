//! Polling-based reliable multicast, PRMP / "PF" (seed 004, Barcellos & Ezhilchelvan, §2).
//!
//! Four packet kinds, as §2 names them:
//!
//! * DATA — a data packet (`seq`, payload); a retransmission sets
//!   [`crate::FLAG_RETRANSMISSION`] in the header;
//! * POLL — a polling request without data: `POLL.TS` (the parent's send time, nanoseconds of
//!   its clock), `POLL.SEQ` (the parent's `HS`, the highest sequence number sent so far) and
//!   `POLL.CLD` (the node ids of the children that must respond);
//! * DATAPOLL — a DATA packet carrying a polling request. `POLL.SEQ` is the parent's `HS` (the
//!   paper: "the seq of the data packet that was sent just before or with this poll (that is,
//!   POLL.SEQ will be HS)"); it equals `seq` for a first transmission and exceeds it when the
//!   poll rides on a retransmission, so it is a field of its own (`poll_seq >= seq`);
//! * RESP — a child's response: `RESP.TS` and `RESP.SEQ` echo the poll's, `RESP.W` is the
//!   child's receiving window: `le` (`LE_i`), `hr` (`HR_i`) and one bit per sequence number in
//!   `le ..= hr` (bit `k` of byte `k / 8`, least significant first, stands for `le + k`; set =
//!   received). A child that has received nothing yet sends `le = 0` and `hr = NO_HR`; its
//!   bitmap is empty.
//!
//! ```text
//! DATA     body: seq (u64) | payload (rest of the datagram)
//! POLL     body: ts (u64) | seq (u64) | count (u16) | count × child node id (u32)
//! DATAPOLL body: seq (u64) | ts (u64) | poll_seq (u64) | count (u16) | count × id (u32) | payload
//! RESP     body: ts (u64) | seq (u64) | le (u64) | hr (u64) | bitmap length (u16) | bitmap
//! ```
//!
//! Checked on decode and encode: a poll names at least one child; DATAPOLL has
//! `poll_seq >= seq`; RESP has `le <= hr + 1`
//! (or `hr = NO_HR`), and its bitmap is exactly as long as `le ..= hr` needs.

use crate::field::{Invalid, LenPrefixed, Rest};
use crate::samples::{Sample, ENV, P};

/// `hr` value of a child that has received nothing (the paper's `HR = -1`).
pub const NO_HR: u64 = u64::MAX;

borrowed_list! {
    /// The children a poll names (`POLL.CLD`), as raw big-endian `u32` node ids borrowed from
    /// the datagram (decoding allocates nothing).
    ChildList, item: 4, each: u32 as "child", count: "count";
}

impl<'a> ChildList<'a> {
    /// Wrap raw bytes (a multiple of 4, as produced by [`ChildList::encode_ids`]).
    pub fn from_raw(raw: &'a [u8]) -> Option<Self> {
        raw.len().is_multiple_of(4).then_some(ChildList { raw })
    }
    /// Encode node ids into `out` (appending) in the wire representation.
    pub fn encode_ids(ids: impl IntoIterator<Item = u32>, out: &mut Vec<u8>) {
        for id in ids {
            out.extend_from_slice(&id.to_be_bytes());
        }
    }
    /// The node ids, in wire order.
    pub fn iter(&self) -> impl Iterator<Item = u32> + 'a {
        self.raw.chunks_exact(4).map(|c| {
            let mut a = [0u8; 4];
            a.copy_from_slice(c);
            u32::from_be_bytes(a)
        })
    }
    /// Whether `id` is named.
    pub fn contains(&self, id: u32) -> bool {
        self.iter().any(|x| x == id)
    }
}

/// Largest number of children one poll may name.
pub const MAX_CLD: usize = u16::MAX as usize;

messages! {
    /// Packet kinds of the `prmp` family.
    Prmp, data: [Data, DataPoll];
    /// A `prmp` message body.
    Message<'a>, validate: validate;
    /// DATA: a data packet.
    Data = 1 { ..SeqData },
    /// POLL: a polling request without data.
    Poll = 2 {
        /// `POLL.TS`: the parent's send time, ns of its clock.
        ts: u64,
        /// `POLL.SEQ`: the parent's `HS`, the highest sequence number sent so far.
        seq: u64,
        /// `POLL.CLD`: the children that must respond.
        cld: ChildList<'a>,
    },
    /// DATAPOLL: a data packet carrying a polling request.
    DataPoll = 3 {
        /// Sequence number of the data.
        seq: u64,
        /// `POLL.TS`.
        ts: u64,
        /// `POLL.SEQ`: the parent's `HS` (`>= seq`).
        poll_seq: u64,
        /// `POLL.CLD`.
        cld: ChildList<'a>,
        /// The application data.
        payload: &'a [u8] as Rest,
    },
    /// RESP: a child's response.
    Resp = 4 {
        /// `RESP.TS`: the poll's `ts`, echoed.
        ts: u64,
        /// `RESP.SEQ`: the poll's `seq`, echoed.
        seq: u64,
        /// `LE_i`: the child's left edge.
        le: u64,
        /// `HR_i`: the highest sequence number received, or [`NO_HR`].
        hr: u64,
        /// One bit per sequence number in `le ..= hr`, set = received.
        bitmap: &'a [u8] as LenPrefixed,
    },
}

/// Bytes the RESP bitmap for `le ..= hr` needs (0 when `hr` is [`NO_HR`] or below `le`).
pub fn resp_bitmap_bytes(le: u64, hr: u64) -> u64 {
    if hr == NO_HR || hr < le {
        0
    } else {
        (hr - le + 1).div_ceil(8)
    }
}

fn validate(m: &Message<'_>) -> Result<(), Invalid> {
    match m {
        Message::DataPoll { seq, poll_seq, .. } if poll_seq < seq => Err((
            "prmp.poll_seq",
            "the poll's HS is below the data it rides on",
        )),
        Message::Poll { cld, .. } | Message::DataPoll { cld, .. } => {
            if cld.is_empty() {
                Err(("prmp.cld", "a poll must name at least one child"))
            } else if cld.len() > MAX_CLD {
                Err(("prmp.cld", "more than 65,535 children"))
            } else {
                Ok(())
            }
        }
        Message::Resp { le, hr, bitmap, .. } => {
            if *hr != NO_HR && *le > hr.saturating_add(1) {
                Err(("prmp.le", "left edge beyond the highest received + 1"))
            } else if bitmap.len() as u64 != resp_bitmap_bytes(*le, *hr) {
                Err(("prmp.bitmap", "length does not match le..=hr"))
            } else if bitmap.len() > usize::from(u16::MAX) {
                Err(("prmp.bitmap", "longer than 65,535 bytes"))
            } else {
                Ok(())
            }
        }
        Message::Data { .. } => Ok(()),
    }
}

/// One message of each kind (two of some whose layout varies), with the bytes it encodes
/// to ([`crate::samples`]).
#[allow(clippy::expect_used)]
pub fn samples() -> Vec<Sample<Message<'static>>> {
    let mut raw = Vec::new();
    ChildList::encode_ids([1u32, 0xdead_beef, 7], &mut raw);
    let cld = ChildList::from_raw(crate::samples::lasting(raw)).expect("the encoder's own output");
    vec![
        Sample::data(
            ENV,
            Message::Data {
                seq: 77,
                payload: P,
            },
            "524d010501000000010203040a0b0c0d0000000b \
             000000000000004daabbcc",
        ),
        Sample::control(
            ENV,
            Message::Poll { ts: 9, seq: 3, cld },
            "524d010502000000010203040a0b0c0d0000001e \
             00000000000000090000000000000003000300000001deadbeef00000007",
        ),
        Sample::data(
            ENV,
            Message::DataPoll {
                seq: 77,
                ts: 123_456_789,
                poll_seq: 79,
                cld,
                payload: P,
            },
            "524d010503000000010203040a0b0c0d00000029 \
             000000000000004d00000000075bcd15000000000000004f000300000001dead\
             beef00000007aabbcc",
        ),
        Sample::control(
            ENV,
            prmp_resp((70, 90), &[0xf0, 0x0f, 0x01]),
            "524d010504000000010203040a0b0c0d00000025 \
             000000000000138800000000000000500000000000000046000000000000005a\
             0003f00f01",
        ),
        Sample::control(
            ENV,
            prmp_resp((0, NO_HR), &[]),
            "524d010504000000010203040a0b0c0d00000022 \
             000000000000138800000000000000500000000000000000ffffffffffffffff\
             0000",
        ),
    ]
}

/// A PRMP RESP to the poll sent at 5,000 ns with `HS` 80, reporting the window `le ..= hr`.
fn prmp_resp((le, hr): (u64, u64), bitmap: &'static [u8]) -> Message<'static> {
    Message::Resp {
        ts: 5_000,
        seq: 80,
        le,
        hr,
        bitmap,
    }
}
