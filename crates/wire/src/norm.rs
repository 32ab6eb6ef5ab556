//! NACK-Oriented Reliable Multicast, NORM (RFC 5740, with the RFC 5401 building blocks and the
//! Reed–Solomon FEC payload ID of RFC 5510/5445), in rmcast's header: one kind per RFC 5740
//! message the agent (`rmcast_proto::norm`) uses, each field one of the RFC's, so a codec of
//! RFC 5740's own bytes can map them one to one.
//!
//! ```text
//! DATA    body: object (u16) | block (u32) | symbol (u16) | block_len (u16) | payload (rest)
//! FLUSH   body: object (u16) | block (u32) | symbol (u16) | grtt (u8)
//! SQUELCH body: object (u16) | block (u32) | symbol (u16)
//! ACK REQ body: object (u16) | block (u32) | symbol (u16) | n (u16) | n × node (u32)
//! CC      body: cc_sequence (u16) | send_ts_us (u64) | grtt (u8)
//! NACK    body: server (u32) | grtt_response_us (u64) | n (u16)
//!               | n × [object (u16) | block (u32) | first (u16) | count (u16)]
//! ACK     body: server (u32) | grtt_response_us (u64) | ack_type (u8) | cc_sequence (u16)
//!               | object (u16) | block (u32) | symbol (u16)
//! CC RATE body: cc_sequence (u16) | send_ts_us (u64) | grtt (u8) | rate (u16)
//!               | n (u16) | n × [node (u32) | flags (u8) | rtt (u8) | rate (u16)]
//! CC ACK  body: server (u32) | grtt_response_us (u64) | cc_sequence (u16) | cc_flags (u8)
//!               | cc_rtt (u8) | cc_loss (u16) | cc_loss_ex (u16) | cc_rate (u16)
//! ```
//!
//! * DATA is NORM_DATA: `object` the object transport id, `block` and `symbol` the FEC payload
//!   ID's source block number and encoding symbol id, `block_len` its source block length
//!   (RFC 5510's FEC encoding 129 carries it; symbols `0 .. block_len` are source segments,
//!   `block_len ..` parity). A repair (a parity symbol, or a source segment sent again) sets
//!   [`crate::FLAG_RETRANSMISSION`], RFC 5740's NORM_FLAG_REPAIR.
//! * FLUSH is NORM_CMD(FLUSH): the sender's position (the last symbol it sent) and its GRTT,
//!   quantized as RFC 5740 §4.1 quantizes `grtt` in every sender message.
//! * SQUELCH is NORM_CMD(SQUELCH): the oldest point the sender can still repair.
//! * ACK REQ is NORM_CMD(FLUSH) with an acking node list, the watermark request of RFC 5740
//!   §5.5.3: the watermark, and the nodes asked to acknowledge it.
//! * CC is NORM_CMD(CC) as GRTT probe (RFC 5740 §5.5.2): its sequence, the send time in the
//!   sender's clock (µs) and its GRTT; no CC node list (no NORM-CC rate here).
//! * NACK is NORM_NACK: the sender (`server`) it is for, `grtt_response_us` (the last probe's
//!   send time plus how long the receiver held it, 0: none) and repair requests, each a range
//!   of `count` encoding symbol ids from `first` in one block (RFC 5740's RANGES form with
//!   NORM_NACK_SEGMENT; ids from `block_len` name parity).
//! * ACK is NORM_ACK: `ack_type` 1 (NORM_ACK_CC: a probe's answer) or 2 (NORM_ACK_FLUSH: the
//!   watermark held), the probe's sequence it answers and the watermark.
//! * CC RATE is NORM_CMD(CC) of NORM-CC (RFC 5740 §5.5.2, sent only with congestion control
//!   on): the probe's fields, EXT_RATE's quantized sending rate and the CC node list, each
//!   entry a receiver with its NORM_CC_FLAG_* bits ([`cc_flag`]), quantized RTT and rate.
//! * CC ACK is NORM_ACK(CC) with EXT_CC: the probe answered, the receiver's flags, the RTT
//!   it used, its loss event rate (`cc_loss` and libnorm's low half `cc_loss_ex`) and the
//!   rate it computed, quantized as RFC 5740 §4.2.3.4 quantizes them.

use crate::field::{decode_items, encode_items, no_rules, Rest};
use crate::samples::{Sample, ENV, P, RX};

/// Length of one repair request.
pub const REQUEST_LEN: usize = 10;
/// Most repair requests one NACK carries.
pub const MAX_REQUESTS: usize = 512;
/// Most nodes one ACK REQ names.
pub const MAX_ACKING: usize = 256;
/// Length of one CC node list entry.
pub const CC_NODE_LEN: usize = 8;
/// Most entries of one CC node list.
pub const MAX_CC_NODES: usize = 64;

/// The NORM_CC_FLAG_* bits of a CC node entry and of EXT_CC (RFC 5740 §4.2.3.4).
pub mod cc_flag {
    /// The current limiting receiver.
    pub const CLR: u8 = 0x01;
    /// A potential limiting receiver.
    pub const PLR: u8 = 0x02;
    /// The RTT is measured (not the GRTT).
    pub const RTT: u8 = 0x04;
    /// Slow start: the receiver has seen no loss; its rate is twice what it received at.
    pub const START: u8 = 0x08;
    /// The receiver leaves the group.
    pub const LEAVE: u8 = 0x10;
}

wire_struct! {
    /// One repair request of a NACK: `count` symbols from `first` of `block` of `object`.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Request {
        /// The object transport id.
        pub object: u16,
        /// The source block number.
        pub block: u32,
        /// The first encoding symbol id asked for.
        pub first: u16,
        /// How many consecutive ids.
        pub count: u16,
    }
}

borrowed_list! {
    /// The repair requests of a NACK, borrowed from the datagram.
    Requests, item: REQUEST_LEN, each: Request as "request", count: "requests",
        most: MAX_REQUESTS => ("norm.requests", "more than MAX_REQUESTS");
}

impl<'a> Requests<'a> {
    /// Wrap raw bytes (a multiple of [`REQUEST_LEN`], as [`Requests::encode`] writes them).
    pub fn from_raw(raw: &'a [u8]) -> Option<Self> {
        raw.len()
            .is_multiple_of(REQUEST_LEN)
            .then_some(Requests { raw })
    }
    /// Append requests in the wire representation.
    pub fn encode(items: impl IntoIterator<Item = Request>, out: &mut Vec<u8>) {
        encode_items(items, out);
    }
    /// The requests, decoded.
    pub fn iter(&self) -> impl Iterator<Item = Request> + 'a {
        decode_items(self.raw, REQUEST_LEN)
    }
}

borrowed_list! {
    /// The acking node list of an ACK REQ, borrowed from the datagram.
    Nodes, item: 4, each: u32 as "node", count: "nodes",
        most: MAX_ACKING => ("norm.nodes", "more than MAX_ACKING");
}

impl<'a> Nodes<'a> {
    /// Wrap raw bytes (a multiple of 4, as [`Nodes::encode`] writes them).
    pub fn from_raw(raw: &'a [u8]) -> Option<Self> {
        raw.len().is_multiple_of(4).then_some(Nodes { raw })
    }
    /// Append node ids in the wire representation.
    pub fn encode(items: impl IntoIterator<Item = u32>, out: &mut Vec<u8>) {
        encode_items(items, out);
    }
    /// The node ids, decoded.
    pub fn iter(&self) -> impl Iterator<Item = u32> + 'a {
        decode_items(self.raw, 4)
    }
}

wire_struct! {
    /// One entry of a NORM_CMD(CC)'s node list.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub struct CcNode {
        /// The receiver's node id.
        pub node: u32,
        /// Its NORM_CC_FLAG_* bits ([`cc_flag`]).
        pub flags: u8,
        /// Its RTT as the sender measured it, quantized (RFC 5740 §4.1).
        pub rtt: u8,
        /// Its rate, quantized (RFC 5740 §4.2.3.4).
        pub rate: u16,
    }
}

borrowed_list! {
    /// The CC node list of a CC RATE, borrowed from the datagram.
    CcNodes, item: CC_NODE_LEN, each: CcNode as "cc_node", count: "cc_nodes",
        most: MAX_CC_NODES => ("norm.cc_nodes", "more than MAX_CC_NODES");
}

impl<'a> CcNodes<'a> {
    /// Wrap raw bytes (a multiple of [`CC_NODE_LEN`], as [`CcNodes::encode`] writes them).
    pub fn from_raw(raw: &'a [u8]) -> Option<Self> {
        raw.len()
            .is_multiple_of(CC_NODE_LEN)
            .then_some(CcNodes { raw })
    }
    /// Append entries in the wire representation.
    pub fn encode(items: impl IntoIterator<Item = CcNode>, out: &mut Vec<u8>) {
        encode_items(items, out);
    }
    /// The entries, decoded.
    pub fn iter(&self) -> impl Iterator<Item = CcNode> + 'a {
        decode_items(self.raw, CC_NODE_LEN)
    }
}

wire_enum! {
    /// What a NORM_ACK acknowledges (RFC 5740 §4.2.3's `ack_type`).
    AckType, "norm.ack_type", "unknown ack type";
    /// NORM_ACK_CC: the answer to a probe (CMD(CC)).
    Cc = 1,
    /// NORM_ACK_FLUSH: the watermark of an ACK REQ is held.
    Flush = 2,
}

messages! {
    /// Packet kinds of the `norm` family.
    Norm, data: [Data];
    /// A `norm` message body.
    Message<'a>, validate: no_rules;
    /// DATA: NORM_DATA, a source segment or a parity symbol of a block.
    Data = 1 {
        /// The object transport id.
        object: u16,
        /// The source block number.
        block: u32,
        /// The encoding symbol id (from `block_len`: parity).
        symbol: u16,
        /// Source symbols in the block.
        block_len: u16,
        /// The segment or parity symbol.
        payload: &'a [u8] as Rest,
    },
    /// FLUSH: NORM_CMD(FLUSH), the sender's position.
    Flush = 2 {
        /// The object transport id.
        object: u16,
        /// The source block number of the last symbol sent.
        block: u32,
        /// The last symbol's encoding symbol id.
        symbol: u16,
        /// The sender's GRTT, quantized (RFC 5740 §4.1).
        grtt: u8,
    },
    /// SQUELCH: NORM_CMD(SQUELCH), the oldest repairable point.
    Squelch = 3 {
        /// The object transport id.
        object: u16,
        /// The source block number.
        block: u32,
        /// The encoding symbol id.
        symbol: u16,
    },
    /// ACK REQ: NORM_CMD(FLUSH) with an acking node list (the watermark request).
    AckReq = 4 {
        /// The watermark's object transport id.
        object: u16,
        /// The watermark's source block number.
        block: u32,
        /// The watermark's encoding symbol id.
        symbol: u16,
        /// The nodes asked to acknowledge.
        nodes: Nodes<'a>,
    },
    /// CC: NORM_CMD(CC), a GRTT probe.
    Cc = 5 {
        /// The probe's sequence number.
        cc_sequence: u16,
        /// When it was sent, the sender's clock in µs.
        send_ts_us: u64,
        /// The sender's GRTT, quantized (RFC 5740 §4.1).
        grtt: u8,
    },
    /// NACK: NORM_NACK, a receiver's repair requests (multicast).
    Nack = 6 {
        /// The sender the NACK is for.
        server: u32,
        /// The last probe's send time plus the receiver's hold time, µs (0: none).
        grtt_response_us: u64,
        /// The repair requests.
        requests: Requests<'a>,
    },
    /// ACK: NORM_ACK, a probe's answer or the watermark held.
    Ack = 7 {
        /// The sender the ACK is for.
        server: u32,
        /// The last probe's send time plus the receiver's hold time, µs (0: none).
        grtt_response_us: u64,
        /// What it acknowledges.
        ack_type: AckType,
        /// The probe answered (NORM_ACK_CC).
        cc_sequence: u16,
        /// The watermark's object transport id.
        object: u16,
        /// The watermark's source block number.
        block: u32,
        /// The watermark's encoding symbol id.
        symbol: u16,
    },
    /// CC RATE: NORM_CMD(CC) of NORM-CC, a probe with the sending rate and the CC node list.
    CcRate = 8 {
        /// The probe's sequence number.
        cc_sequence: u16,
        /// When it was sent, the sender's clock in µs.
        send_ts_us: u64,
        /// The sender's GRTT, quantized (RFC 5740 §4.1).
        grtt: u8,
        /// EXT_RATE: the sending rate, quantized (RFC 5740 §4.2.3.4).
        rate: u16,
        /// The receivers listed: the CLR, the PLR and those whose RTT was measured.
        nodes: CcNodes<'a>,
    },
    /// CC ACK: NORM_ACK(CC) with EXT_CC, a receiver's NORM-CC feedback.
    CcAck = 9 {
        /// The sender the feedback is for.
        server: u32,
        /// The probe's send time plus the receiver's hold time, µs (0: none).
        grtt_response_us: u64,
        /// The probe answered.
        cc_sequence: u16,
        /// NORM_CC_FLAG_* bits ([`cc_flag`]).
        cc_flags: u8,
        /// The RTT the receiver used, quantized (RFC 5740 §4.1).
        cc_rtt: u8,
        /// The loss event rate, quantized (the high half of libnorm's 32 bits).
        cc_loss: u16,
        /// The low half of libnorm's 32-bit loss event rate (the RFC's reserved field).
        cc_loss_ex: u16,
        /// The rate the receiver computed, quantized (RFC 5740 §4.2.3.4).
        cc_rate: u16,
    },
}

/// One message of each kind, with the bytes it encodes to ([`crate::samples`]).
#[allow(clippy::expect_used)]
pub fn samples() -> Vec<Sample<Message<'static>>> {
    let mut v = plain_samples();
    v.extend(cc_samples());
    v
}

/// NORM-CC's kinds, CC RATE and CC ACK, with their bytes.
#[allow(clippy::expect_used)]
fn cc_samples() -> Vec<Sample<Message<'static>>> {
    let mut raw = Vec::new();
    CcNodes::encode(
        [CcNode {
            node: 3,
            flags: cc_flag::CLR | cc_flag::RTT | cc_flag::START,
            rtt: 0x3b,
            rate: 0x8983,
        }],
        &mut raw,
    );
    let cc_nodes =
        CcNodes::from_raw(crate::samples::lasting(raw)).expect("the encoder's own output");
    vec![
        Sample::control(
            ENV,
            Message::CcRate {
                cc_sequence: 7,
                send_ts_us: 0x1122_3344_5566_7788,
                grtt: 0x80,
                rate: 0x1234,
                nodes: cc_nodes,
            },
            "524d010b08000000010203040a0b0c0d00000017 \
             000711223344556677888012340001000000030d3b8983",
        ),
        Sample::control(
            ENV,
            Message::CcAck {
                server: 0x0a0b_0c0d,
                grtt_response_us: 1_000,
                cc_sequence: 7,
                cc_flags: cc_flag::RTT | cc_flag::START,
                cc_rtt: 0x3b,
                cc_loss: 0x0102,
                cc_loss_ex: 0x0304,
                cc_rate: 0x8983,
            },
            "524d010b09000000010203040a0b0c0d00000016 \
             0a0b0c0d00000000000003e800070c3b010203048983",
        ),
    ]
}

/// The kinds without NORM-CC, with their bytes.
#[allow(clippy::expect_used)]
fn plain_samples() -> Vec<Sample<Message<'static>>> {
    let mut raw = Vec::new();
    Requests::encode(
        [
            Request {
                object: 0,
                block: 3,
                first: 64,
                count: 2,
            },
            Request {
                object: 0,
                block: 5,
                first: 7,
                count: 1,
            },
        ],
        &mut raw,
    );
    let requests =
        Requests::from_raw(crate::samples::lasting(raw)).expect("the encoder's own output");
    let mut raw = Vec::new();
    Nodes::encode([1, 0x0102_0304], &mut raw);
    let nodes = Nodes::from_raw(crate::samples::lasting(raw)).expect("the encoder's own output");
    vec![
        Sample::data(
            ENV,
            Message::Data {
                object: 0,
                block: 2,
                symbol: 5,
                block_len: 64,
                payload: P,
            },
            "524d010b01000000010203040a0b0c0d0000000d \
             00000000000200050040aabbcc",
        ),
        Sample::data(
            RX,
            Message::Data {
                object: 0,
                block: 2,
                symbol: 64,
                block_len: 64,
                payload: P,
            },
            "524d010b01010000010203040a0b0c0d0000000d \
             00000000000200400040aabbcc",
        ),
        Sample::control(
            ENV,
            Message::Flush {
                object: 0,
                block: 9,
                symbol: 63,
                grtt: 0xa0,
            },
            "524d010b02000000010203040a0b0c0d00000009 000000000009003fa0",
        ),
        Sample::control(
            ENV,
            Message::Squelch {
                object: 1,
                block: 0,
                symbol: 0,
            },
            "524d010b03000000010203040a0b0c0d00000008 0001000000000000",
        ),
        Sample::control(
            ENV,
            Message::AckReq {
                object: 0,
                block: 9,
                symbol: 63,
                nodes,
            },
            "524d010b04000000010203040a0b0c0d00000012 \
             000000000009003f00020000000101020304",
        ),
        Sample::control(
            ENV,
            Message::Cc {
                cc_sequence: 7,
                send_ts_us: 0x1122_3344_5566_7788,
                grtt: 0x80,
            },
            "524d010b05000000010203040a0b0c0d0000000b 0007112233445566778880",
        ),
        Sample::control(
            ENV,
            Message::Nack {
                server: 0x0a0b_0c0d,
                grtt_response_us: 1_000,
                requests,
            },
            "524d010b06000000010203040a0b0c0d00000022 \
             0a0b0c0d00000000000003e80002\
             0000000000030040000200000000000500070001",
        ),
        Sample::control(
            ENV,
            Message::Ack {
                server: 0x0a0b_0c0d,
                grtt_response_us: 0,
                ack_type: AckType::Flush,
                cc_sequence: 0,
                object: 0,
                block: 9,
                symbol: 63,
            },
            "524d010b07000000010203040a0b0c0d00000017 \
             0a0b0c0d0000000000000000020000000000000009003f",
        ),
    ]
}
