//! Repair requests: the content of NORM_NACK and NORM_CMD(REPAIR_ADV) (RFC 5740 §4.3.1).
//!
//! ```text
//! |     form      |     flags     |            length             |
//! |    fec_id     |   reserved    |     object_transport_id       |   one item,
//! |                fec_payload_id  ...                            |   `length` bytes
//! ...                                                                of items in all
//! ```
//!
//! Each item carries its own fec_id, which decides its payload id's length (8-byte items for
//! fec_id 5). The form says how the items are read: ITEMS lists each symbol, RANGES lists
//! pairs (first, last) of items, ERASURES gives a block's erasure count in the symbol id.
//! The flags say what is asked: SEGMENT (symbols), BLOCK (whole blocks), INFO (the
//! object's NORM_INFO), OBJECT (whole objects). libnorm asks for parity by symbol ids past
//! the block's source symbols (a range `k .. k + missing − 1`, captured), never with
//! ERASURES.

use super::{zero, Error, PayloadId};
use crate::Reader;

/// How a request's items are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Form {
    /// NORM_NACK_ITEMS (1): each item names one symbol, block, info or object.
    Items = 1,
    /// NORM_NACK_RANGES (2): items come in pairs, the first and last of a range.
    Ranges = 2,
    /// NORM_NACK_ERASURES (3): each item's symbol id is a block's erasure count.
    Erasures = 3,
}

/// What a request asks for (its flags byte).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct RepairFlags {
    /// NORM_NACK_SEGMENT (0x01): symbols.
    pub segment: bool,
    /// NORM_NACK_BLOCK (0x02): whole blocks.
    pub block: bool,
    /// NORM_NACK_INFO (0x04): the objects' NORM_INFO.
    pub info: bool,
    /// NORM_NACK_OBJECT (0x08): whole objects.
    pub object: bool,
}

impl RepairFlags {
    /// The flags byte.
    pub fn bits(self) -> u8 {
        u8::from(self.segment)
            | (u8::from(self.block) << 1)
            | (u8::from(self.info) << 2)
            | (u8::from(self.object) << 3)
    }

    fn from_bits(b: u8) -> Result<Self, Error> {
        zero(u32::from(b & 0xf0), "repair request flag bits")?;
        Ok(RepairFlags {
            segment: b & 0x01 != 0,
            block: b & 0x02 != 0,
            info: b & 0x04 != 0,
            object: b & 0x08 != 0,
        })
    }
}

/// One item: an object and a position in it (its fec_id is the payload id's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RepairItem {
    /// The object transport id.
    pub object: u16,
    /// The block and symbol (or, in ERASURES, the erasure count as the symbol id).
    pub id: PayloadId,
}

/// One repair request.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RepairRequest {
    /// How the items are read.
    pub form: Form,
    /// What is asked for.
    pub flags: RepairFlags,
    /// The items (pairs for [`Form::Ranges`]).
    pub items: Vec<RepairItem>,
}

impl RepairRequest {
    /// The (first, last) pairs of a RANGES request; the items one by one as (item, item)
    /// for the other forms.
    pub fn ranges(&self) -> Vec<(RepairItem, RepairItem)> {
        match self.form {
            Form::Ranges => self
                .items
                .chunks_exact(2)
                .filter_map(|p| Some((*p.first()?, *p.get(1)?)))
                .collect(),
            _ => self.items.iter().map(|i| (*i, *i)).collect(),
        }
    }
}

/// Read the requests that fill `buf` exactly.
pub(super) fn read_all(buf: &[u8]) -> Result<Vec<RepairRequest>, Error> {
    let mut r = Reader::new(buf);
    let mut v = Vec::new();
    while r.remaining() > 0 {
        let form = match r.u8()? {
            1 => Form::Items,
            2 => Form::Ranges,
            3 => Form::Erasures,
            _ => return Err(Error::Malformed("repair request form")),
        };
        let flags = RepairFlags::from_bits(r.u8()?)?;
        let len = usize::from(r.u16()?);
        let items_buf = r
            .bytes(len)
            .map_err(|_| Error::Malformed("repair request length"))?;
        let mut ir = Reader::new(items_buf);
        let mut items = Vec::new();
        while ir.remaining() > 0 {
            let fec = ir.u8()?;
            zero(u32::from(ir.u8()?), "repair item field")?;
            let object = ir.u16()?;
            items.push(RepairItem {
                object,
                id: PayloadId::read(fec, &mut ir)?,
            });
        }
        if form == Form::Ranges && !items.len().is_multiple_of(2) {
            return Err(Error::Malformed(
                "a RANGES request with an odd number of items",
            ));
        }
        v.push(RepairRequest { form, flags, items });
    }
    Ok(v)
}

/// Append `requests`.
pub(super) fn write_all(requests: &[RepairRequest], out: &mut Vec<u8>) -> Result<(), Error> {
    for q in requests {
        if q.form == Form::Ranges && !q.items.len().is_multiple_of(2) {
            return Err(Error::Encode(
                "a RANGES request with an odd number of items",
            ));
        }
        let len: usize = q
            .items
            .iter()
            .map(|i| 4 + PayloadId::len_of(i.id.fec_id()).unwrap_or(0))
            .sum();
        let len = u16::try_from(len).map_err(|_| Error::Encode("a repair request too long"))?;
        out.push(q.form as u8);
        out.push(q.flags.bits());
        out.extend_from_slice(&len.to_be_bytes());
        for i in &q.items {
            out.push(i.id.fec_id());
            out.push(0);
            out.extend_from_slice(&i.object.to_be_bytes());
            i.id.write(out)?;
        }
    }
    Ok(())
}
