//! Header extensions (RFC 5740 §4.1, RFC 5052 §4.1): between a message's fixed header and
//! its content, inside `hdr_len`.
//!
//! An extension type (HET) below 128 is followed by its length (HEL, in 32-bit words,
//! counting the HET and HEL bytes); one of 128 or more is 4 bytes long with no HEL:
//!
//! ```text
//! |   HET (<128)  |      HEL      |   content ...                 |
//! |   HET (>=128) |   content (3 bytes)                           |
//! ```
//!
//! Read here:
//!
//! * EXT_FTI (HET 64) in the form of fec_id 5 (RFC 5510 §5.2.3; HEL 3): the object's
//!   transfer length (48 bits), the encoding symbol length (16), the maximum source block
//!   length (8) and the maximum number of encoding symbols (8). **libnorm writes its number
//!   of parity symbols in that last byte, not k + parity** (`NormFtiExtension5`; captured:
//!   `0x10` for 64 + 16), and reads it back the same way.
//! * EXT_CC (HET 3, HEL 3) on NACK and ACK: cc_sequence, cc_flags, cc_rtt, cc_loss,
//!   cc_rate, and the reserved 16 bits, where libnorm puts the low half of a 32-bit loss
//!   estimate (`CC_LOSS_EX_OFFSET`, "non-RFC5740 compliant, but compatible").
//! * EXT_RATE (HET 128) on NORM_CMD(CC): a reserved byte and the sender's quantized rate.
//!
//! Any other extension (libnorm's APP_ACK, HET 65; an FTI of another form) is
//! [`Ext::Other`], kept whole. A HEL of 0, or an extension running past `hdr_len`, is
//! [`Error::Malformed`].

use super::Error;
use crate::Reader;

/// Extension type numbers.
pub mod het {
    /// EXT_CC: a receiver's congestion-control feedback.
    pub const CC: u8 = 3;
    /// EXT_FTI: FEC object transmission information.
    pub const FTI: u8 = 64;
    /// libnorm's application-defined ACK content (NormSetWatermarkEx).
    pub const APP_ACK: u8 = 65;
    /// EXT_RATE: the sender's current rate.
    pub const RATE: u8 = 128;
}

/// EXT_FTI for fec_id 5 as libnorm writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Fti {
    /// The object's size in bytes (48 bits).
    pub object_size: u64,
    /// The segment (encoding symbol) size in bytes.
    pub segment_size: u16,
    /// The largest source block (k).
    pub max_block_len: u8,
    /// libnorm: the number of parity symbols per block (RFC 5510: maximum number of encoding
    /// symbols).
    pub num_parity: u8,
}

/// One header extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ext<'a> {
    /// EXT_FTI, fec_id 5's form (HEL 3).
    Fti(Fti),
    /// EXT_CC (HEL 3).
    Cc {
        /// The sequence number of the NORM_CMD(CC) answered.
        cc_sequence: u16,
        /// NORM_CC_FLAG_* bits.
        flags: u8,
        /// The receiver's quantized RTT.
        rtt: u8,
        /// The quantized loss fraction (the high 16 bits of libnorm's 32-bit one).
        loss: u16,
        /// The quantized rate the receiver computed.
        rate: u16,
        /// The RFC's reserved field; libnorm's low 16 bits of the loss estimate.
        loss_ex: u16,
    },
    /// EXT_RATE.
    Rate {
        /// The sender's quantized rate ([`super::quant::unquantize_rate`]).
        send_rate: u16,
    },
    /// Any other extension: its type and the bytes after HET (and HEL, below 128).
    Other {
        /// The extension type.
        het: u8,
        /// Its content.
        content: &'a [u8],
    },
}

/// Read every extension of `buf` (the bytes between the fixed header and `hdr_len`).
pub(super) fn read_all(buf: &[u8]) -> Result<Vec<Ext<'_>>, Error> {
    let mut r = Reader::new(buf);
    let mut v = Vec::new();
    while r.remaining() > 0 {
        let het = r.u8()?;
        if het >= 128 {
            let content = r.bytes(3)?;
            let mut c = Reader::new(content);
            v.push(if het == het::RATE && c.u8()? == 0 {
                Ext::Rate {
                    send_rate: c.u16()?,
                }
            } else {
                Ext::Other { het, content }
            });
            continue;
        }
        let hel = usize::from(r.u8()?);
        if hel == 0 {
            return Err(Error::Malformed("header extension of length 0"));
        }
        let content = r
            .bytes(hel * 4 - 2)
            .map_err(|_| Error::Malformed("header extension past hdr_len"))?;
        let mut c = Reader::new(content);
        v.push(match (het, hel) {
            (het::FTI, 3) => {
                let hi = u64::from(c.u16()?);
                let lo = u64::from(c.u32()?);
                Ext::Fti(Fti {
                    object_size: (hi << 32) | lo,
                    segment_size: c.u16()?,
                    max_block_len: c.u8()?,
                    num_parity: c.u8()?,
                })
            }
            (het::CC, 3) => Ext::Cc {
                cc_sequence: c.u16()?,
                flags: c.u8()?,
                rtt: c.u8()?,
                loss: c.u16()?,
                rate: c.u16()?,
                loss_ex: c.u16()?,
            },
            _ => Ext::Other { het, content },
        });
    }
    Ok(v)
}

impl Ext<'_> {
    /// Append the extension.
    pub(super) fn write(&self, out: &mut Vec<u8>) -> Result<(), Error> {
        match *self {
            Ext::Fti(f) => {
                if f.object_size >> 48 != 0 {
                    return Err(Error::Encode("an object size over 48 bits"));
                }
                out.extend_from_slice(&[het::FTI, 3]);
                out.extend_from_slice(&((f.object_size >> 32) as u16).to_be_bytes());
                out.extend_from_slice(&(f.object_size as u32).to_be_bytes());
                out.extend_from_slice(&f.segment_size.to_be_bytes());
                out.extend_from_slice(&[f.max_block_len, f.num_parity]);
            }
            Ext::Cc {
                cc_sequence,
                flags,
                rtt,
                loss,
                rate,
                loss_ex,
            } => {
                out.extend_from_slice(&[het::CC, 3]);
                out.extend_from_slice(&cc_sequence.to_be_bytes());
                out.extend_from_slice(&[flags, rtt]);
                out.extend_from_slice(&loss.to_be_bytes());
                out.extend_from_slice(&rate.to_be_bytes());
                out.extend_from_slice(&loss_ex.to_be_bytes());
            }
            Ext::Rate { send_rate } => {
                out.extend_from_slice(&[het::RATE, 0]);
                out.extend_from_slice(&send_rate.to_be_bytes());
            }
            Ext::Other { het, content } => {
                if het >= 128 {
                    if content.len() != 3 {
                        return Err(Error::Encode("an extension of HET >= 128 has 3 bytes"));
                    }
                    out.push(het);
                } else {
                    let len = content.len() + 2;
                    if !len.is_multiple_of(4) || len > 255 * 4 {
                        return Err(Error::Encode("an extension not a whole number of words"));
                    }
                    out.extend_from_slice(&[het, (len / 4) as u8]);
                }
                out.extend_from_slice(content);
            }
        }
        Ok(())
    }
}
