//! Option extensions (RFC 3208 §9).
//!
//! When the header's OPT_PRESENT bit is set, the options follow the type-specific body (and
//! precede an ODATA/RDATA's data). The first is always OPT_LENGTH, 4 bytes with no OPX byte,
//! giving the total length of all options including itself:
//!
//! ```text
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! | Option Type 0 | Length 4      |  Total length of all options  |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! Every other option starts with its type (bit 7: OPT_END, set on the last option), its
//! length in bytes including these two, and a byte of reserved, F, OPX and U bits; then its
//! value:
//!
//! ```text
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |E| Option Type | Option Length |Reserved |F|OPX|U|Option Value |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! ```
//!
//! The options read here, with OpenPGM's sizes (`struct pgm_opt_header` + the option's
//! struct):
//!
//! * OPT_FRAGMENT (0x01, 16 bytes): a reserved byte, then the APDU's first sequence
//!   number, this fragment's offset in the APDU and the APDU's length (32 bits each);
//! * OPT_NAK_LIST (0x02, 4 + 4·n bytes, 1 ≤ n ≤ 62): a reserved byte, then n further
//!   requested sequence numbers (the NAK's own is in its body);
//! * OPT_PARITY_PRM (0x08, 8 bytes, in SPMs): a byte with the pro-active (0x01) and
//!   on-demand (0x02) parity bits as OpenPGM sets them, then the transmission group size;
//! * OPT_PARITY_GRP (0x09, 8 bytes, in parity packets): a reserved byte, then the parity
//!   group number.
//!
//! Any other option (OPT_JOIN, OPT_SYN, OPT_FIN, OPT_RST, OPT_CURR_TGSIZE, PGMCC's, ...) is
//! kept as [`Opt::Other`] with its bytes, skipped by its length field as §9 asks, so that
//! whoever acts on it can look at its OPX bits. The walk stops at the option with OPT_END,
//! which must end exactly at OPT_LENGTH's total; an option that runs past the total, a
//! total past the packet, a second OPT_LENGTH or a missing OPT_END is [`Error::Options`].

use super::{Error, Rd};

/// Option type numbers (RFC 3208 §9; OpenPGM's `pgm/packet.h`).
pub mod id {
    /// OPT_LENGTH: the options' total length (always first).
    pub const LENGTH: u8 = 0x00;
    /// OPT_FRAGMENT: this TPDU is a fragment of a larger APDU.
    pub const FRAGMENT: u8 = 0x01;
    /// OPT_NAK_LIST: more sequence numbers a NAK or NCF names.
    pub const NAK_LIST: u8 = 0x02;
    /// OPT_JOIN: late-join minimum sequence number.
    pub const JOIN: u8 = 0x03;
    /// OPT_PARITY_PRM: the source's FEC parameters (in SPMs).
    pub const PARITY_PRM: u8 = 0x08;
    /// OPT_PARITY_GRP: the parity group (transmission group) of a parity packet.
    pub const PARITY_GRP: u8 = 0x09;
    /// OPT_CURR_TGSIZE: the actual size of a short transmission group.
    pub const CURR_TGSIZE: u8 = 0x0a;
    /// OPT_SYN: the first packet of a session.
    pub const SYN: u8 = 0x0d;
    /// OPT_FIN: the session ends.
    pub const FIN: u8 = 0x0e;
    /// OPT_RST: the session is reset.
    pub const RST: u8 = 0x0f;
}

/// OPT_END: set on the type byte of the last option.
pub const OPT_END: u8 = 0x80;

/// Most sequence numbers one OPT_NAK_LIST carries (its length byte allows 4 + 4·62).
pub const MAX_NAK_LIST: usize = 62;

/// OPT_PARITY_PRM's pro-active parity bit (OpenPGM's `PGM_PARITY_PRM_PRO`).
pub const PARITY_PRM_PRO: u8 = 0x01;
/// OPT_PARITY_PRM's on-demand parity bit (OpenPGM's `PGM_PARITY_PRM_OND`).
pub const PARITY_PRM_OND: u8 = 0x02;

/// One option extension (OPT_LENGTH is implicit: the encoder writes it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Opt<'a> {
    /// OPT_FRAGMENT: this TPDU carries bytes `offset ..` of an APDU of `apdu_len` bytes whose
    /// first fragment has sequence number `first_sqn`.
    Fragment {
        /// Sequence number of the APDU's first fragment.
        first_sqn: u32,
        /// This fragment's offset in the APDU.
        offset: u32,
        /// The APDU's length.
        apdu_len: u32,
    },
    /// OPT_NAK_LIST: 1 to [`MAX_NAK_LIST`] more sequence numbers, in wire order.
    NakList(Vec<u32>),
    /// OPT_PARITY_PRM: the source's FEC parameters.
    ParityPrm {
        /// The source sends parity pro-actively.
        proactive: bool,
        /// The source sends parity on demand (receivers may NAK for parity).
        on_demand: bool,
        /// Transmission group size (k); OpenPGM accepts 2 to 128.
        tg_size: u32,
    },
    /// OPT_PARITY_GRP: the parity group (transmission group) number of a parity packet.
    ParityGrp {
        /// The group number.
        group: u32,
    },
    /// Any other option, kept whole: its type (without OPT_END) and the bytes after its type
    /// and length bytes (the first is its reserved/F/OPX/U byte).
    Other {
        /// The option type, 0x01 to 0x7f, not one of the types above.
        id: u8,
        /// The bytes after the type and length bytes (1 to 253).
        value: &'a [u8],
    },
}

impl Opt<'_> {
    /// The option's type number.
    pub fn id(&self) -> u8 {
        match self {
            Opt::Fragment { .. } => id::FRAGMENT,
            Opt::NakList(_) => id::NAK_LIST,
            Opt::ParityPrm { .. } => id::PARITY_PRM,
            Opt::ParityGrp { .. } => id::PARITY_GRP,
            Opt::Other { id, .. } => *id,
        }
    }

    /// The option's length on the wire, including its type and length bytes.
    pub fn wire_len(&self) -> usize {
        match self {
            Opt::Fragment { .. } => 16,
            Opt::NakList(l) => 4 + 4 * l.len(),
            Opt::ParityPrm { .. } | Opt::ParityGrp { .. } => 8,
            Opt::Other { value, .. } => 2 + value.len(),
        }
    }

    /// Append the option; `last` sets OPT_END.
    fn encode(&self, last: bool, out: &mut Vec<u8>) -> Result<(), Error> {
        let len =
            u8::try_from(self.wire_len()).map_err(|_| Error::Encode("an option over 255 bytes"))?;
        let end = if last { OPT_END } else { 0 };
        out.push(self.id() | end);
        out.push(len);
        match self {
            Opt::Fragment {
                first_sqn,
                offset,
                apdu_len,
            } => {
                out.extend_from_slice(&[0, 0]);
                for v in [first_sqn, offset, apdu_len] {
                    out.extend_from_slice(&v.to_be_bytes());
                }
            }
            Opt::NakList(l) => {
                out.extend_from_slice(&[0, 0]);
                for s in l {
                    out.extend_from_slice(&s.to_be_bytes());
                }
            }
            Opt::ParityPrm {
                proactive,
                on_demand,
                tg_size,
            } => {
                let pro = if *proactive { PARITY_PRM_PRO } else { 0 };
                let ond = if *on_demand { PARITY_PRM_OND } else { 0 };
                out.extend_from_slice(&[0, pro | ond]);
                out.extend_from_slice(&tg_size.to_be_bytes());
            }
            Opt::ParityGrp { group } => {
                out.extend_from_slice(&[0, 0]);
                out.extend_from_slice(&group.to_be_bytes());
            }
            Opt::Other { value, .. } => out.extend_from_slice(value),
        }
        Ok(())
    }

    /// Whether the encoder can write the option so that the decoder reads it back.
    fn check(&self) -> Result<(), Error> {
        match self {
            Opt::NakList(l) if l.is_empty() || l.len() > MAX_NAK_LIST => {
                Err(Error::Encode("an OPT_NAK_LIST of 0 or more than 62"))
            }
            Opt::Other { id, value } => {
                if *id == 0 || *id >= OPT_END || is_modelled(*id) {
                    return Err(Error::Encode("an Other option with a modelled or bad id"));
                }
                if value.is_empty() || value.len() > 253 {
                    return Err(Error::Encode("an Other option of 0 or over 253 bytes"));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// Whether `id` is read into its own variant rather than [`Opt::Other`].
pub(super) fn is_modelled(id: u8) -> bool {
    matches!(
        id,
        id::LENGTH | id::FRAGMENT | id::NAK_LIST | id::PARITY_PRM | id::PARITY_GRP
    )
}

/// Append OPT_LENGTH and `opts` (nothing if `opts` is empty).
pub(super) fn encode(opts: &[Opt<'_>], out: &mut Vec<u8>) -> Result<(), Error> {
    if opts.is_empty() {
        return Ok(());
    }
    for o in opts {
        o.check()?;
    }
    let total = 4 + opts.iter().map(Opt::wire_len).sum::<usize>();
    let total =
        u16::try_from(total).map_err(|_| Error::Encode("options longer than 65535 bytes"))?;
    out.extend_from_slice(&[id::LENGTH, 4]);
    out.extend_from_slice(&total.to_be_bytes());
    for (i, o) in opts.iter().enumerate() {
        o.encode(i + 1 == opts.len(), out)?;
    }
    Ok(())
}

/// Read OPT_LENGTH and the options it covers from `r`.
pub(super) fn decode<'a>(r: &mut Rd<'a>) -> Result<Vec<Opt<'a>>, Error> {
    let ty = r.u8("OPT_LENGTH")?;
    let len = r.u8("OPT_LENGTH")?;
    if ty != id::LENGTH || len != 4 {
        return Err(Error::Options(
            "the first option is not a 4-byte OPT_LENGTH",
        ));
    }
    let total = usize::from(r.u16("OPT_LENGTH")?);
    let area = total
        .checked_sub(4)
        .ok_or(Error::Options("a total length under 4"))?;
    let mut area = Rd::new(r.take(area, "options")?);
    let mut opts = Vec::new();
    loop {
        let ty = area
            .u8("option type")
            .map_err(|_| Error::Options("no OPT_END within the total length"))?;
        let len = usize::from(area.u8("option length")?);
        let value = len
            .checked_sub(2)
            .filter(|v| *v >= 1)
            .ok_or(Error::Options("an option shorter than 3 bytes"))?;
        let value = area
            .take(value, "option")
            .map_err(|_| Error::Options("an option past the total length"))?;
        opts.push(read_one(ty & !OPT_END, value)?);
        if ty & OPT_END != 0 {
            if !area.rest().is_empty() {
                return Err(Error::Options(
                    "bytes after OPT_END within the total length",
                ));
            }
            return Ok(opts);
        }
    }
}

/// One option from its type (without OPT_END) and the bytes after its type and length.
fn read_one(ty: u8, value: &[u8]) -> Result<Opt<'_>, Error> {
    let mut v = Rd::new(value);
    let opt = match ty {
        id::LENGTH => return Err(Error::Options("a second OPT_LENGTH")),
        id::FRAGMENT => {
            v.take(2, "OPT_FRAGMENT")?;
            Opt::Fragment {
                first_sqn: v.u32("OPT_FRAGMENT")?,
                offset: v.u32("OPT_FRAGMENT")?,
                apdu_len: v.u32("OPT_FRAGMENT")?,
            }
        }
        id::NAK_LIST => {
            v.take(2, "OPT_NAK_LIST")?;
            let raw = v.rest();
            if raw.is_empty() || !raw.len().is_multiple_of(4) || raw.len() / 4 > MAX_NAK_LIST {
                return Err(Error::Options("an OPT_NAK_LIST not of 1 to 62 numbers"));
            }
            let mut l = Vec::with_capacity(raw.len() / 4);
            while !v.rest().is_empty() {
                l.push(v.u32("OPT_NAK_LIST")?);
            }
            Opt::NakList(l)
        }
        id::PARITY_PRM => {
            v.take(1, "OPT_PARITY_PRM")?;
            let po = v.u8("OPT_PARITY_PRM")?;
            Opt::ParityPrm {
                proactive: po & PARITY_PRM_PRO != 0,
                on_demand: po & PARITY_PRM_OND != 0,
                tg_size: v.u32("OPT_PARITY_PRM")?,
            }
        }
        id::PARITY_GRP => {
            v.take(2, "OPT_PARITY_GRP")?;
            Opt::ParityGrp {
                group: v.u32("OPT_PARITY_GRP")?,
            }
        }
        id => return Ok(Opt::Other { id, value }),
    };
    if !v.rest().is_empty() {
        return Err(Error::Options("an option longer than its type allows"));
    }
    Ok(opt)
}
