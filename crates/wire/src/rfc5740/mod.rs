//! NORM messages as RFC 5740 puts them on the wire, as NRL's libnorm 1.5.9 sends them (issue
//! 62): the codec only, self-contained.
//!
//! rmcast's `norm` protocol has its own family in rmcast's 20-byte header; this module reads
//! and writes the standard's bytes, so that libnorm and Wireshark's NORM dissector can read
//! them. `docs/norm-rfc5740.md` says what libnorm does that the RFC leaves open, and how the
//! agent's messages map onto these.
//!
//! ## Common header (RFC 5740 §4.1, 8 bytes, network byte order)
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |version| type  |    hdr_len    |          sequence             |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                           source_id                           |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! `hdr_len` counts 32-bit words: the message's fixed header and its header extensions
//! ([`Ext`]), which lie between the fixed header and the content (payload, node list, repair
//! requests). The fixed part's length follows from the type, the command flavor and the FEC
//! encoding id ([`PayloadId`]); the extensions fill exactly the rest of `hdr_len`.
//!
//! ## Decoding
//!
//! [`Message::decode`] never panics and allocates only for lists no longer than the bytes
//! they came from. It is strict: the version is 1, reserved fields are 0, lists fill their
//! content exactly, and a FEC encoding id other than 2, 5 and 129 is [`Error::FecId`] (the
//! payload id's length depends on it). Encoding what was decoded gives the same bytes.

pub mod ext;
pub mod quant;
pub mod repair;
pub mod rs8;

#[cfg(test)]
mod tests;

pub use ext::{Ext, Fti};
pub use repair::{Form, RepairFlags, RepairItem, RepairRequest};

use crate::{DecodeError, Reader};

/// The protocol version libnorm and RFC 5740 speak.
pub const VERSION: u8 = 1;
/// Length of the common header.
pub const COMMON_LEN: usize = 8;

/// Message types (RFC 5740 §4.1).
pub mod msg_type {
    /// NORM_INFO: an object's out-of-band information.
    pub const INFO: u8 = 1;
    /// NORM_DATA: a source or parity segment.
    pub const DATA: u8 = 2;
    /// NORM_CMD: a sender's command.
    pub const CMD: u8 = 3;
    /// NORM_NACK: a receiver's repair request.
    pub const NACK: u8 = 4;
    /// NORM_ACK: a receiver's acknowledgement.
    pub const ACK: u8 = 5;
    /// NORM_REPORT: optional statistics (no format defined).
    pub const REPORT: u8 = 6;
}

/// NORM_CMD flavors (RFC 5740 §4.2.3).
pub mod flavor {
    /// NORM_CMD(FLUSH).
    pub const FLUSH: u8 = 1;
    /// NORM_CMD(EOT).
    pub const EOT: u8 = 2;
    /// NORM_CMD(SQUELCH).
    pub const SQUELCH: u8 = 3;
    /// NORM_CMD(CC).
    pub const CC: u8 = 4;
    /// NORM_CMD(REPAIR_ADV).
    pub const REPAIR_ADV: u8 = 5;
    /// NORM_CMD(ACK_REQ).
    pub const ACK_REQ: u8 = 6;
    /// NORM_CMD(APPLICATION).
    pub const APPLICATION: u8 = 7;
}

/// Flags of NORM_DATA and NORM_INFO (RFC 5740 §4.2.1).
pub mod obj_flag {
    /// NORM_FLAG_REPAIR: the message is a repair transmission.
    pub const REPAIR: u8 = 0x01;
    /// NORM_FLAG_EXPLICIT: a repair sent explicitly (not libnorm's).
    pub const EXPLICIT: u8 = 0x02;
    /// NORM_FLAG_INFO: the object has NORM_INFO.
    pub const INFO: u8 = 0x04;
    /// NORM_FLAG_UNRELIABLE: the sender will not repair the object.
    pub const UNRELIABLE: u8 = 0x08;
    /// NORM_FLAG_FILE: the object is a file.
    pub const FILE: u8 = 0x10;
    /// NORM_FLAG_STREAM: the object is a stream (its payloads carry a stream header).
    pub const STREAM: u8 = 0x20;
    /// libnorm's NORM_FLAG_SYN (0x40): the sender asks receivers to resync (not in the RFC).
    pub const SYN: u8 = 0x40;
}

/// NORM_ACK types (RFC 5740 §4.3.2; libnorm's `NormAck::Type`).
pub mod ack_type {
    /// NORM_ACK(CC): an answer to a NORM_CMD(CC) probe.
    pub const CC: u8 = 1;
    /// NORM_ACK(FLUSH): a watermark acknowledgement.
    pub const FLUSH: u8 = 2;
    /// The first application-defined type.
    pub const APP_BASE: u8 = 16;
}

/// FEC encoding ids (RFC 5052 registry) whose payload id this codec reads.
pub mod fec_id {
    /// RFC 5510 Reed–Solomon over GF(2^m); libnorm sends it only with m = 16 (blocks of more
    /// than 255 symbols): 16-bit source block number, 16-bit symbol id.
    pub const RS: u8 = 2;
    /// RFC 5510 Reed–Solomon over GF(2^8), what libnorm sends for blocks up to 255: 24-bit
    /// source block number, 8-bit encoding symbol id.
    pub const RS8: u8 = 5;
    /// RFC 5445 small block systematic: 32-bit block number, 16-bit block length, 16-bit
    /// symbol id.
    pub const SMALL_BLOCK: u8 = 129;
}

/// Why a datagram is not a NORM message this codec reads, or a message cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The datagram ends inside a field.
    #[error("truncated: needs {needed} bytes, {got} there")]
    Truncated {
        /// Bytes the read needed (from the start of the part being read).
        needed: usize,
        /// Bytes there were.
        got: usize,
    },
    /// A version other than 1.
    #[error("NORM version {0}, not 1")]
    Version(u8),
    /// A message type RFC 5740 does not define.
    #[error("unknown NORM message type {0}")]
    Type(u8),
    /// A NORM_CMD flavor RFC 5740 does not define.
    #[error("unknown NORM_CMD flavor {0}")]
    Flavor(u8),
    /// A FEC encoding id whose payload id this codec cannot read.
    #[error("unsupported FEC encoding id {0}")]
    FecId(u8),
    /// `hdr_len` shorter than the fixed header or longer than the datagram.
    #[error("hdr_len {hdr_len} bytes, fixed header {base}, datagram {len}")]
    HeaderLength {
        /// `hdr_len` in bytes.
        hdr_len: usize,
        /// The fixed header's length.
        base: usize,
        /// The datagram's length.
        len: usize,
    },
    /// A reserved field or flag bit that is not 0.
    #[error("reserved {0} not 0")]
    Reserved(&'static str),
    /// Malformed content: an extension, a list or a repair request.
    #[error("malformed {0}")]
    Malformed(&'static str),
    /// The message cannot be written.
    #[error("cannot encode: {0}")]
    Encode(&'static str),
}

impl From<DecodeError> for Error {
    fn from(e: DecodeError) -> Self {
        match e {
            DecodeError::Truncated { needed, got } => Error::Truncated { needed, got },
            _ => Error::Malformed("field"),
        }
    }
}

/// A time as libnorm writes it: seconds and microseconds of `gettimeofday`, 32 bits each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Timestamp {
    /// Seconds.
    pub sec: u32,
    /// Microseconds.
    pub usec: u32,
}

/// A FEC payload id: which symbol of which source block (RFC 5510 §2.1/§4.1, RFC 5445).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PayloadId {
    /// fec_id 5: 24-bit source block number, 8-bit encoding symbol id (source symbols are
    /// `0..k`, parity `k..k+parity`).
    Rs8 {
        /// Source block number (24 bits).
        sbn: u32,
        /// Encoding symbol id.
        esi: u8,
    },
    /// fec_id 2 with m = 16: 16-bit source block number, 16-bit symbol id.
    Rs16 {
        /// Source block number.
        sbn: u16,
        /// Encoding symbol id.
        esi: u16,
    },
    /// fec_id 129: 32-bit block number, the block's source length, 16-bit symbol id.
    SmallBlock {
        /// Source block number.
        sbn: u32,
        /// Source block length (k of this block).
        block_len: u16,
        /// Encoding symbol id.
        esi: u16,
    },
}

impl PayloadId {
    /// The FEC encoding id this payload id belongs to.
    pub fn fec_id(&self) -> u8 {
        match self {
            PayloadId::Rs8 { .. } => fec_id::RS8,
            PayloadId::Rs16 { .. } => fec_id::RS,
            PayloadId::SmallBlock { .. } => fec_id::SMALL_BLOCK,
        }
    }

    /// The length on the wire of a payload id of `fec_id`, or [`Error::FecId`].
    pub fn len_of(fec: u8) -> Result<usize, Error> {
        match fec {
            fec_id::RS | fec_id::RS8 => Ok(4),
            fec_id::SMALL_BLOCK => Ok(8),
            other => Err(Error::FecId(other)),
        }
    }

    /// The source block number.
    pub fn sbn(&self) -> u32 {
        match *self {
            PayloadId::Rs8 { sbn, .. } | PayloadId::SmallBlock { sbn, .. } => sbn,
            PayloadId::Rs16 { sbn, .. } => u32::from(sbn),
        }
    }

    /// The encoding symbol id.
    pub fn esi(&self) -> u16 {
        match *self {
            PayloadId::Rs8 { esi, .. } => u16::from(esi),
            PayloadId::Rs16 { esi, .. } | PayloadId::SmallBlock { esi, .. } => esi,
        }
    }

    pub(crate) fn read(fec: u8, r: &mut Reader<'_>) -> Result<Self, Error> {
        Ok(match fec {
            fec_id::RS8 => {
                let v = r.u32()?;
                PayloadId::Rs8 {
                    sbn: v >> 8,
                    esi: (v & 0xff) as u8,
                }
            }
            fec_id::RS => PayloadId::Rs16 {
                sbn: r.u16()?,
                esi: r.u16()?,
            },
            fec_id::SMALL_BLOCK => PayloadId::SmallBlock {
                sbn: r.u32()?,
                block_len: r.u16()?,
                esi: r.u16()?,
            },
            other => return Err(Error::FecId(other)),
        })
    }

    pub(crate) fn write(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        match *self {
            PayloadId::Rs8 { sbn, esi } => {
                if sbn > 0x00ff_ffff {
                    return Err(Error::Encode("a fec_id 5 source block number over 24 bits"));
                }
                out.extend_from_slice(&((sbn << 8) | u32::from(esi)).to_be_bytes());
            }
            PayloadId::Rs16 { sbn, esi } => {
                out.extend_from_slice(&sbn.to_be_bytes());
                out.extend_from_slice(&esi.to_be_bytes());
            }
            PayloadId::SmallBlock {
                sbn,
                block_len,
                esi,
            } => {
                out.extend_from_slice(&sbn.to_be_bytes());
                out.extend_from_slice(&block_len.to_be_bytes());
                out.extend_from_slice(&esi.to_be_bytes());
            }
        }
        Ok(())
    }
}

/// The sender fields every NORM_DATA, NORM_INFO and NORM_CMD carries after the common
/// header: `instance_id`, `grtt`, `backoff`, `gsize` (RFC 5740 §4.2.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SenderFields {
    /// The sender's instance id (changes when it restarts).
    pub instance_id: u16,
    /// The quantized group round-trip time ([`quant::unquantize_rtt`]).
    pub grtt: u8,
    /// The back-off factor K (4 bits).
    pub backoff: u8,
    /// The quantized group size (4 bits, [`quant::unquantize_gsize`]).
    pub gsize: u8,
}

impl SenderFields {
    fn read(r: &mut Reader<'_>) -> Result<Self, Error> {
        let instance_id = r.u16()?;
        let grtt = r.u8()?;
        let bg = r.u8()?;
        Ok(SenderFields {
            instance_id,
            grtt,
            backoff: bg >> 4,
            gsize: bg & 0x0f,
        })
    }

    fn write(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        if self.backoff > 0x0f || self.gsize > 0x0f {
            return Err(Error::Encode("backoff or gsize over 4 bits"));
        }
        out.extend_from_slice(&self.instance_id.to_be_bytes());
        out.push(self.grtt);
        out.push((self.backoff << 4) | self.gsize);
        Ok(())
    }
}

/// The object fields of NORM_DATA and NORM_INFO after the [`SenderFields`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct ObjectFields {
    /// NORM_FLAG_* bits ([`obj_flag`]).
    pub flags: u8,
    /// The FEC encoding id (a NORM_DATA's payload id must agree).
    pub fec_id: u8,
    /// The object transport id.
    pub object: u16,
}

/// A NORM_CMD(CC) entry: a receiver the sender lists with its feedback (RFC 5740 §4.2.3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CcNode {
    /// The receiver's node id.
    pub node_id: u32,
    /// NORM_CC_FLAG_* bits (CLR 0x01, PLR 0x02, RTT 0x04, START 0x08, LEAVE 0x10; libnorm's
    /// LIMIT 0x20).
    pub flags: u8,
    /// The receiver's quantized RTT.
    pub rtt: u8,
    /// The receiver's quantized rate ([`quant::unquantize_rate`]).
    pub rate: u16,
}

/// The flavor-specific part of a NORM_CMD.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Cmd<'a> {
    /// FLUSH: the sender's position; receivers in the list ACK it (a watermark).
    Flush {
        /// The object.
        object: u16,
        /// The position (block and symbol).
        id: PayloadId,
        /// Node ids asked to ACK.
        acking_nodes: Vec<u32>,
    },
    /// EOT: the sender ends its transmission.
    Eot,
    /// SQUELCH: the sender cannot repair before this position.
    Squelch {
        /// The oldest repairable object.
        object: u16,
        /// The oldest repairable position in it.
        id: PayloadId,
        /// Further objects it cannot repair.
        invalid_objects: Vec<u16>,
    },
    /// CC: the congestion-control probe.
    Cc {
        /// libnorm's SYN bit (0x01 of the reserved byte).
        syn: bool,
        /// The probe's sequence number.
        cc_sequence: u16,
        /// When the sender sent it.
        send_time: Timestamp,
        /// The receivers it reports on.
        nodes: Vec<CcNode>,
    },
    /// REPAIR_ADV: the sender's pending repairs (NORM_REPAIR_ADV_FLAG_LIMIT = 0x01).
    RepairAdv {
        /// Flags.
        flags: u8,
        /// The repairs.
        requests: Vec<RepairRequest>,
    },
    /// ACK_REQ: the sender asks the listed receivers to ACK.
    AckReq {
        /// The ACK type asked for ([`ack_type`]).
        ack_type: u8,
        /// The request's id.
        ack_id: u8,
        /// Node ids asked.
        acking_nodes: Vec<u32>,
    },
    /// APPLICATION: application-defined content.
    Application {
        /// The content.
        content: &'a [u8],
    },
}

impl Cmd<'_> {
    /// The flavor number on the wire.
    pub fn flavor(&self) -> u8 {
        match self {
            Cmd::Flush { .. } => flavor::FLUSH,
            Cmd::Eot => flavor::EOT,
            Cmd::Squelch { .. } => flavor::SQUELCH,
            Cmd::Cc { .. } => flavor::CC,
            Cmd::RepairAdv { .. } => flavor::REPAIR_ADV,
            Cmd::AckReq { .. } => flavor::ACK_REQ,
            Cmd::Application { .. } => flavor::APPLICATION,
        }
    }
}

/// A NORM_ACK's content after its header and extensions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AckPayload<'a> {
    /// NORM_ACK(FLUSH)'s: the watermark acknowledged.
    Flush {
        /// The object.
        object: u16,
        /// The position.
        id: PayloadId,
    },
    /// Any other type's bytes (NORM_ACK(CC) has none).
    Raw(&'a [u8]),
}

/// The type-specific part of a message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body<'a> {
    /// NORM_INFO.
    Info {
        /// instance, grtt, backoff, gsize.
        sender: SenderFields,
        /// flags, fec_id, object.
        obj: ObjectFields,
        /// The object's info content.
        info: &'a [u8],
    },
    /// NORM_DATA.
    Data {
        /// instance, grtt, backoff, gsize.
        sender: SenderFields,
        /// flags, fec_id, object.
        obj: ObjectFields,
        /// The segment's block and symbol (its fec_id is `obj.fec_id`).
        id: PayloadId,
        /// The segment: source data (a stream's starts with [`StreamHeader`]) or parity.
        payload: &'a [u8],
    },
    /// NORM_CMD.
    Cmd {
        /// instance, grtt, backoff, gsize.
        sender: SenderFields,
        /// The flavor and its fields.
        cmd: Cmd<'a>,
    },
    /// NORM_NACK.
    Nack {
        /// The sender the NACK addresses.
        server_id: u32,
        /// That sender's instance id.
        instance_id: u16,
        /// The receiver's echo of the sender's last probe time, adjusted by its hold time.
        grtt_response: Timestamp,
        /// The repair requests.
        requests: Vec<RepairRequest>,
    },
    /// NORM_ACK.
    Ack {
        /// The sender the ACK addresses.
        server_id: u32,
        /// That sender's instance id.
        instance_id: u16,
        /// The ACK type ([`ack_type`]).
        ack_type: u8,
        /// The id of the request it answers.
        ack_id: u8,
        /// As in NORM_NACK.
        grtt_response: Timestamp,
        /// The content.
        payload: AckPayload<'a>,
    },
    /// NORM_REPORT: no format is defined; its bytes after the common header.
    Report(&'a [u8]),
}

/// One NORM message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message<'a> {
    /// The sender's message sequence number (libnorm numbers each sender message; receivers
    /// send 0).
    pub sequence: u16,
    /// The node id of the message's source.
    pub source_id: u32,
    /// The type-specific fields.
    pub body: Body<'a>,
    /// Header extensions, in wire order.
    pub ext: Vec<Ext<'a>>,
}

/// The stream header at the start of a NORM_OBJECT_STREAM segment's payload (RFC 5740
/// §4.2.1): `payload_len`, `payload_msg_start`, `payload_offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamHeader {
    /// Bytes of stream data in the segment.
    pub len: u16,
    /// 1 + the offset of the first message start in the segment's data, 0 for none.
    pub msg_start: u16,
    /// The segment's offset in the stream.
    pub offset: u32,
}

impl StreamHeader {
    /// Length of the stream header.
    pub const LEN: usize = 8;

    /// Split a stream segment's payload into its header and data.
    pub fn split(payload: &[u8]) -> Result<(StreamHeader, &[u8]), Error> {
        let mut r = Reader::new(payload);
        let h = StreamHeader {
            len: r.u16()?,
            msg_start: r.u16()?,
            offset: r.u32()?,
        };
        Ok((h, r.rest()))
    }
}

/// The fixed header's length (with the common header) of a message of `ty`, read from the
/// fixed bytes at `buf` (the flavor and fec_id decide it for some).
fn base_len(ty: u8, buf: &[u8]) -> Result<usize, Error> {
    let at = |i: usize| {
        buf.get(i).copied().ok_or(Error::Truncated {
            needed: i + 1,
            got: buf.len(),
        })
    };
    Ok(match ty {
        msg_type::INFO => 16,
        msg_type::DATA => 16 + PayloadId::len_of(at(13)?)?,
        msg_type::CMD => match at(12)? {
            flavor::FLUSH | flavor::SQUELCH => 16 + PayloadId::len_of(at(13)?)?,
            flavor::EOT | flavor::REPAIR_ADV | flavor::ACK_REQ | flavor::APPLICATION => 16,
            flavor::CC => 24,
            other => return Err(Error::Flavor(other)),
        },
        msg_type::NACK | msg_type::ACK => 24,
        msg_type::REPORT => COMMON_LEN,
        other => return Err(Error::Type(other)),
    })
}

fn zero(v: u32, what: &'static str) -> Result<(), Error> {
    if v == 0 {
        Ok(())
    } else {
        Err(Error::Reserved(what))
    }
}

fn read_u32s(buf: &[u8], what: &'static str) -> Result<Vec<u32>, Error> {
    if !buf.len().is_multiple_of(4) {
        return Err(Error::Malformed(what));
    }
    Ok(buf
        .chunks_exact(4)
        .map(|c| u32::from_be_bytes(<[u8; 4]>::try_from(c).unwrap_or_default()))
        .collect())
}

fn read_timestamp(r: &mut Reader<'_>) -> Result<Timestamp, Error> {
    Ok(Timestamp {
        sec: r.u32()?,
        usec: r.u32()?,
    })
}

fn put_timestamp(out: &mut Vec<u8>, t: Timestamp) {
    out.extend_from_slice(&t.sec.to_be_bytes());
    out.extend_from_slice(&t.usec.to_be_bytes());
}

mod body;

impl<'a> Message<'a> {
    /// Read one NORM message (a whole UDP payload). Never panics.
    pub fn decode(buf: &'a [u8]) -> Result<Self, Error> {
        let mut r = Reader::new(buf);
        let vt = r.u8()?;
        let hdr_words = r.u8()?;
        let sequence = r.u16()?;
        let source_id = r.u32()?;
        if vt >> 4 != VERSION {
            return Err(Error::Version(vt >> 4));
        }
        let ty = vt & 0x0f;
        let base = base_len(ty, buf)?;
        let hdr_len = usize::from(hdr_words) * 4;
        if hdr_len < base || hdr_len > buf.len() {
            return Err(Error::HeaderLength {
                hdr_len,
                base,
                len: buf.len(),
            });
        }
        let fixed = buf.get(COMMON_LEN..base).unwrap_or_default();
        let exts = buf.get(base..hdr_len).unwrap_or_default();
        let content = buf.get(hdr_len..).unwrap_or_default();
        let body = body::read(ty, fixed, content)?;
        Ok(Message {
            sequence,
            source_id,
            body,
            ext: ext::read_all(exts)?,
        })
    }

    /// The type number on the wire.
    pub fn msg_type(&self) -> u8 {
        match self.body {
            Body::Info { .. } => msg_type::INFO,
            Body::Data { .. } => msg_type::DATA,
            Body::Cmd { .. } => msg_type::CMD,
            Body::Nack { .. } => msg_type::NACK,
            Body::Ack { .. } => msg_type::ACK,
            Body::Report(_) => msg_type::REPORT,
        }
    }

    /// Append the message to `out`; returns its length. On an error `out` is left as it
    /// was.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<usize, Error> {
        let start = out.len();
        let r = self.encode_inner(out);
        if r.is_err() {
            out.truncate(start);
        }
        r.map(|()| out.len() - start)
    }

    fn encode_inner(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        let start = out.len();
        out.push((VERSION << 4) | self.msg_type());
        out.push(0); // hdr_len, set below
        out.extend_from_slice(&self.sequence.to_be_bytes());
        out.extend_from_slice(&self.source_id.to_be_bytes());
        body::write_fixed(&self.body, out)?;
        for e in &self.ext {
            e.write(out)?;
        }
        let hdr_len = out.len() - start;
        let words = u8::try_from(hdr_len / 4)
            .map_err(|_| Error::Encode("a header longer than 1020 bytes"))?;
        if !hdr_len.is_multiple_of(4) {
            return Err(Error::Encode("a header not a multiple of 4 bytes"));
        }
        if let Some(b) = out.get_mut(start + 1) {
            *b = words;
        }
        body::write_content(&self.body, out)?;
        if out.len() - start > usize::from(u16::MAX) {
            return Err(Error::Encode("a message longer than 65535 bytes"));
        }
        Ok(())
    }

    /// The message's bytes.
    pub fn to_vec(&self) -> Result<Vec<u8>, Error> {
        let mut v = Vec::new();
        self.encode(&mut v)?;
        Ok(v)
    }
}
