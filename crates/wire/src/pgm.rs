//! PGM essentials after RFC 3208, as seed 003 §5.10 simulated them: ODATA, RDATA, NAK, NCF,
//! SPM.
//!
//! ```text
//! ODATA body: seq (u64) | payload (rest)
//! RDATA body: seq (u64) | payload (rest)           (header flag FLAG_RETRANSMISSION)
//! NAK   body: seq (u64)
//! NCF   body: seq (u64)
//! SPM   body: spm_seq (u64) | trail (u64) | lead (u64)
//! PARITY body: block (u64) | index (u16) | k (u16) | symbol (rest)   (FLAG_RETRANSMISSION)
//! BNAK  body: block (u64) | total (u16)
//! BNCF  body: block (u64) | total (u16)
//! CCS   body: round (u32) | rate (u64) | suppress (u64) | clr (u32) | r_max_us (u32)
//!           | echo_node (u32) | echo_ts_us (u64) | echo_delay_us (u32) | flags (u8)
//! CCFB  body: round (u32) | ts_us (u64) | rtt_us (u32) | rate (u64) | recv_rate (u64)
//!           | loss_ppm (u32) | flags (u8)
//! NAKL  body: count (u16) | seq (u64) × count      (2 to 63, strictly increasing)
//! NCFL  body: count (u16) | seq (u64) × count      (2 to 63, strictly increasing)
//! ```
//!
//! `lead` in an SPM is the number of ODATA packets sent so far (the next sequence number), so
//! receivers detect lost packets at the tail; `trail` is the oldest sequence number the
//! source can still repair. RFC 3208 carries the NAK's source and group addresses and the
//! path NLA; here the NAK travels as a unicast datagram to the source and network elements on
//! the way see it, so the header's source node is the NAK's originator.
//!
//! FEC repair (kinds 6–8, after RFC 3208 §11's transmission groups and on-demand parity):
//! block `b` is ODATA `b·k .. (b+1)·k`. PARITY carries parity symbol `index` of block `block`
//! of `k` source packets (`rmcast_proto::fec`: its length is the block's symbol length, the
//! longest packet plus a two-byte length prefix). A receiver's BNAK asks for the block's
//! parity up to `total` symbols in all (indices `0 .. total`): the parity it already knows was
//! sent plus the symbols it still needs; BNCF confirms it with the total the source will have
//! sent. New kinds, not new fields: version 1's five kinds keep their bytes.
//!
//! Congestion control (kinds 9–10, TFMCC after RFC 4654, `rmcast_proto::tfmcc`): the source
//! multicasts a CCS (congestion status) when a feedback round starts and after each feedback
//! it takes: its rate and the lowest rate reported this round (`suppress`, bytes/s;
//! `u64::MAX` none), the current limiting receiver (`clr`, 0 none), the largest round-trip
//! time it knows and one receiver's echoed timestamp (`echo_node` 0: none) with how long the
//! source held it. A receiver's CCFB reports the rate it can take (bytes/s) and what it is
//! computed from. Timestamps are each sender's own clock in microseconds; only the one that
//! wrote them reads them back. Flags: CCS bit 0 slow start; CCFB bit 0 the receiver has seen
//! loss, bit 1 its `rtt_us` is measured (not the initial value).
//!
//! NAK lists (kinds 11–12, after RFC 3208 §9.12's OPT_NAK_LIST: a NAK for up to 62 more
//! sequence numbers than its own): a receiver that finds several losses at once (a burst
//! dropped in front of a slow link) asks for them in one NAKL instead of a NAK each, and the
//! source (or a network element) confirms them in one NCFL. A list names 2 to
//! [`MAX_NAK_LIST`] sequence numbers in increasing order; one loss is still a NAK.

use crate::field::Invalid;
use crate::samples::{Sample, ENV, P, RX};

/// Most sequence numbers one NAKL or NCFL names: RFC 3208's NAK with a full OPT_NAK_LIST
/// (its own sequence number and 62 more).
pub const MAX_NAK_LIST: usize = 63;

borrowed_list! {
    /// The sequence numbers a NAKL or NCFL names, as raw big-endian `u64`s borrowed from the
    /// datagram (decoding allocates nothing): 2 to [`MAX_NAK_LIST`], strictly increasing.
    SeqList, item: 8, each: u64 as "seq", count: "seqs",
        most: MAX_NAK_LIST => ("pgm.seqs", "more than 63 sequence numbers"),
        checked: SeqList::checked;
}

impl<'a> SeqList<'a> {
    /// The list over `raw` if it names 2 to [`MAX_NAK_LIST`] strictly increasing numbers.
    fn checked(raw: &'a [u8]) -> Result<Self, crate::DecodeError> {
        let l = SeqList { raw };
        l.rule().map_err(crate::field::decode_error)?;
        Ok(l)
    }

    /// The list's rule: 2 to [`MAX_NAK_LIST`] sequence numbers, strictly increasing.
    fn rule(&self) -> Result<(), Invalid> {
        if !self.raw.len().is_multiple_of(8) {
            return Err(("pgm.seqs", "not a whole number of sequence numbers"));
        }
        if !(2..=MAX_NAK_LIST).contains(&self.len()) {
            return Err(("pgm.seqs", "a list of fewer than 2 or more than 63"));
        }
        let mut it = self.iter();
        let mut prev = it.next();
        for s in it {
            if prev.is_some_and(|p| p >= s) {
                return Err(("pgm.seqs", "sequence numbers not strictly increasing"));
            }
            prev = Some(s);
        }
        Ok(())
    }

    /// Append `seqs` to `out` in the wire representation (wrap the bytes with
    /// [`SeqList::from_raw`]).
    pub fn encode_seqs(seqs: impl IntoIterator<Item = u64>, out: &mut Vec<u8>) {
        for s in seqs {
            out.extend_from_slice(&s.to_be_bytes());
        }
    }

    /// Wrap raw bytes if they are 2 to [`MAX_NAK_LIST`] strictly increasing sequence
    /// numbers.
    pub fn from_raw(raw: &'a [u8]) -> Option<Self> {
        let l = SeqList { raw };
        l.rule().is_ok().then_some(l)
    }

    /// The sequence numbers, in wire order.
    pub fn iter(&self) -> impl Iterator<Item = u64> + 'a {
        self.raw.chunks_exact(8).map(|c| {
            let mut a = [0u8; 8];
            a.copy_from_slice(c);
            u64::from_be_bytes(a)
        })
    }
}

messages! {
    /// Packet kinds of the `pgm` family.
    Pgm, data: [Odata, Rdata, Parity];
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
    /// PARITY: a parity symbol of a block (FEC repair).
    Parity = 6 {
        /// The block (transmission group): ODATA `block·k .. (block+1)·k`.
        block: u64,
        /// Parity index within the block (0 first).
        index: u16,
        /// Source packets in the block.
        k: u16,
        /// The parity symbol.
        payload: &'a [u8] as crate::field::Rest,
    },
    /// BNAK: a receiver's request for parity of a block.
    BlockNak = 7 {
        /// The block.
        block: u64,
        /// Parity symbols the source should have sent in all (indices `0 .. total`).
        total: u16,
    },
    /// BNCF: a block NAK's confirmation.
    BlockNcf = 8 {
        /// The block.
        block: u64,
        /// Parity symbols the source will have sent in all.
        total: u16,
    },
    /// CCS: the source's congestion-control status (TFMCC).
    Status = 9 {
        /// The feedback round.
        round: u32,
        /// The source's sending rate, bytes per second.
        rate: u64,
        /// The lowest rate reported in this round, bytes per second (`u64::MAX`: none).
        suppress: u64,
        /// The current limiting receiver (0: none).
        clr: u32,
        /// The largest round-trip time the source knows, microseconds.
        r_max_us: u32,
        /// The receiver whose timestamp is echoed (0: none).
        echo_node: u32,
        /// The echoed timestamp (that receiver's clock), microseconds.
        echo_ts_us: u64,
        /// How long the source held the timestamp before this packet, microseconds.
        echo_delay_us: u32,
        /// Bit 0: slow start. Other bits zero.
        flags: u8,
    },
    /// CCFB: a receiver's congestion-control feedback (TFMCC).
    Feedback = 10 {
        /// The feedback round it answers.
        round: u32,
        /// The receiver's timestamp (its clock), microseconds.
        ts_us: u64,
        /// Its round-trip time to the source, microseconds.
        rtt_us: u32,
        /// The rate it can take, bytes per second.
        rate: u64,
        /// The rate it received at, bytes per second.
        recv_rate: u64,
        /// Its loss event rate, parts per million.
        loss_ppm: u32,
        /// Bit 0: it has seen loss; bit 1: `rtt_us` is measured. Other bits zero.
        flags: u8,
    },
    /// NAKL: a receiver's request for several lost packets at once.
    NakList = 11 {
        /// The lost packets' sequence numbers.
        seqs: SeqList<'a>,
    },
    /// NCFL: the confirmation of a NAKL's sequence numbers (those not held off).
    NcfList = 12 {
        /// The sequence numbers confirmed.
        seqs: SeqList<'a>,
    },
}

/// An SPM's window edges are in order; a block has source packets.
fn validate(m: &Message<'_>) -> Result<(), Invalid> {
    match m {
        Message::Spm { trail, lead, .. } if trail > lead => {
            Err(("pgm.trail", "trailing edge above the leading edge"))
        }
        Message::Parity { k: 0, .. } => Err(("pgm.k", "a block of no source packets")),
        Message::Status { flags, .. } if flags & !1 != 0 => {
            Err(("pgm.flags", "unknown congestion status flags"))
        }
        Message::Feedback { flags, .. } if flags & !3 != 0 => {
            Err(("pgm.flags", "unknown congestion feedback flags"))
        }
        Message::Feedback { loss_ppm, .. } if *loss_ppm > 1_000_000 => {
            Err(("pgm.loss_ppm", "a loss event rate above one"))
        }
        Message::NakList { seqs } | Message::NcfList { seqs } => seqs.rule(),
        _ => Ok(()),
    }
}

/// One message of each kind (two of some whose layout varies), with the bytes it encodes
/// to ([`crate::samples`]).
#[allow(clippy::expect_used)]
pub fn samples() -> Vec<Sample<Message<'static>>> {
    vec![
        Sample::data(
            ENV,
            Message::Odata { seq: 5, payload: P },
            "524d010801000000010203040a0b0c0d0000000b \
             0000000000000005aabbcc",
        ),
        Sample::data(
            RX,
            Message::Rdata { seq: 5, payload: P },
            "524d010802010000010203040a0b0c0d0000000b \
             0000000000000005aabbcc",
        ),
        Sample::control(
            ENV,
            Message::Nak { seq: 9 },
            "524d010803000000010203040a0b0c0d00000008 0000000000000009",
        ),
        Sample::control(
            ENV,
            Message::Ncf { seq: 10 },
            "524d010804000000010203040a0b0c0d00000008 000000000000000a",
        ),
        Sample::control(
            ENV,
            Message::Spm {
                spm_seq: 3,
                trail: 10,
                lead: 20,
            },
            "524d010805000000010203040a0b0c0d00000018 \
             0000000000000003000000000000000a0000000000000014",
        ),
        Sample::data(
            RX,
            Message::Parity {
                block: 7,
                index: 2,
                k: 16,
                payload: P,
            },
            "524d010806010000010203040a0b0c0d0000000f \
             000000000000000700020010aabbcc",
        ),
        Sample::control(
            ENV,
            Message::BlockNak { block: 7, total: 3 },
            "524d010807000000010203040a0b0c0d0000000a \
             00000000000000070003",
        ),
        Sample::control(
            ENV,
            Message::BlockNcf { block: 7, total: 4 },
            "524d010808000000010203040a0b0c0d0000000a \
             00000000000000070004",
        ),
        Sample::control(
            ENV,
            Message::Status {
                round: 3,
                rate: 12_500_000,
                suppress: u64::MAX,
                clr: 0x0a0b_0c0e,
                r_max_us: 2_000,
                echo_node: 0x0a0b_0c0e,
                echo_ts_us: 1_000_000,
                echo_delay_us: 50,
                flags: 1,
            },
            "524d010809000000010203040a0b0c0d0000002d \
             000000030000000000bebc20ffffffffffffffff0a0b0c0e000007d00a0b0c0e\
             00000000000f42400000003201",
        ),
        Sample::control(
            ENV,
            Message::Feedback {
                round: 3,
                ts_us: 1_000_000,
                rtt_us: 1_500,
                rate: 11_000_000,
                recv_rate: 12_000_000,
                loss_ppm: 10_000,
                flags: 3,
            },
            "524d01080a000000010203040a0b0c0d00000025 \
             0000000300000000000f4240000005dc0000000000a7d8c00000000000b71b00\
             0000271003",
        ),
        Sample::control(
            ENV,
            Message::NakList {
                seqs: seq_list(&[9, 12, 40]),
            },
            "524d01080b000000010203040a0b0c0d0000001a \
             00030000000000000009000000000000000c0000000000000028",
        ),
        Sample::control(
            ENV,
            Message::NcfList {
                seqs: seq_list(&[9, 40]),
            },
            "524d01080c000000010203040a0b0c0d00000012 \
             000200000000000000090000000000000028",
        ),
    ]
}

/// A NAK list of `seqs` (increasing) that lives as long as the samples.
#[allow(clippy::expect_used)]
fn seq_list(seqs: &[u64]) -> SeqList<'static> {
    let mut raw = Vec::new();
    SeqList::encode_seqs(seqs.iter().copied(), &mut raw);
    SeqList::from_raw(crate::samples::lasting(raw)).expect("the encoder's own output")
}
