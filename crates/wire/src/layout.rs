//! Every kind's body layout as data: the fields in wire order, each with its name, its doc
//! line and how it sits on the wire ([`Wire`]). The declarations that generate the codec
//! (`messages!`, `wire_struct!`, `wire_enum!`, `borrowed_list!` in `field.rs`) also emit this
//! (each `Field` codec (`field.rs`) has its `WIRE`), so a layout is written once; `tree`
//! and `xtp`, whose codecs are hand-written, write theirs beside the codec. The Wireshark
//! dissector's fields and decoding are generated from it ([`crate::dissector`]), and
//! [`read_fields`] reads a body by it alone, as the dissector does.

use crate::Reader;

/// How one field sits on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wire {
    /// A big-endian unsigned integer of this many bytes (1, 2, 4 or 8).
    Uint(usize),
    /// A byte that must be zero.
    Zero,
    /// One byte, one of `values` (number, variant name); another is refused (`why`).
    Enum {
        /// The values the byte may take.
        values: &'static [(u8, &'static str)],
        /// Why another value is refused.
        why: &'static str,
    },
    /// A big-endian integer of `width` bytes made of the flag bits `bits` (mask, name); a
    /// bit outside them is refused.
    Flags {
        /// Bytes of the integer.
        width: usize,
        /// The flags: mask and name.
        bits: &'static [(u16, &'static str)],
    },
    /// This many raw bytes.
    Bytes(usize),
    /// The rest of the datagram (the last field).
    Rest,
    /// A `u16` that is there or not (the last field: the body ends before it or after it).
    OptionalU16,
    /// A `u16` byte count (named `<field>_len`), then that many raw bytes.
    LenBytes,
    /// A `u16` item count (named `count`), then that many items, each `item` and named
    /// `each` (a struct item's fields are `each.<field>`); a count above `most` is refused
    /// before the items are read.
    List {
        /// The count's name.
        count: &'static str,
        /// An item's name.
        each: &'static str,
        /// One item.
        item: &'static Wire,
        /// The largest count accepted, if bounded.
        most: Option<usize>,
    },
    /// A bitmap of `⌈n/8⌉` bytes, `n` the value of the earlier field named `bits`.
    Bitmap {
        /// The field holding the number of bits.
        bits: &'static str,
    },
    /// Fields in order: as a field of a message, shown as the message's own fields; as a list
    /// item, named `<item>.<field>`.
    Struct(&'static [Slot]),
}

/// One field of a layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Slot {
    /// The field's name (the dissector shows it as `rmcast.<family>.<name>`).
    pub name: &'static str,
    /// Its doc comment, line by line (the dissector's label is its first sentence).
    pub doc: &'static [&'static str],
    /// How it sits on the wire.
    pub wire: Wire,
}

impl Slot {
    /// The field's label: the first sentence of its doc comment without Markdown (its name
    /// when it has none).
    pub fn label(&self) -> String {
        let text = self
            .doc
            .iter()
            .map(|l| l.trim())
            .collect::<Vec<_>>()
            .join(" ");
        let text: String = text
            .chars()
            .filter(|c| !matches!(c, '`' | '[' | ']'))
            .collect();
        let first = match text.find(". ") {
            Some(i) => &text[..i],
            None => text.trim_end_matches('.'),
        };
        let first = first.trim().trim_end_matches(':');
        if first.is_empty() {
            return self.name.to_string();
        }
        let mut c = first.chars();
        c.next()
            .map(|h| h.to_uppercase().chain(c).collect())
            .unwrap_or_default()
    }
}

/// A layout field written by hand (the layouts of `tree` and `xtp`).
pub(crate) const fn slot(name: &'static str, doc: &'static [&'static str], wire: Wire) -> Slot {
    Slot { name, doc, wire }
}

/// Bytes a field of this wire occupies when that does not depend on the message; `None` for
/// a length that does.
pub fn fixed_len(w: &Wire) -> Option<usize> {
    match w {
        Wire::Uint(n) | Wire::Bytes(n) => Some(*n),
        Wire::Zero | Wire::Enum { .. } => Some(1),
        Wire::Flags { width, .. } => Some(*width),
        Wire::Struct(slots) => slots.iter().map(|s| fixed_len(&s.wire)).sum(),
        _ => None,
    }
}

/// The fields a body of `layout` holds, read by the layout alone, as a dissector shows them:
/// name (`seq`, `entry.node`, `bitmap_len`, `options.eom`) and value (integers in decimal,
/// flags in hex with their width's digits and each flag 1 or 0, bytes in lower-case hex; an
/// empty byte string is not shown).
/// An error (what is wrong) for a body the layout does not cover exactly or whose fields
/// break a rule the layout states (a zero byte, an enum's values, flag bits, a list's most).
pub fn read_fields(layout: &[Slot], body: &[u8]) -> Result<Vec<(String, String)>, String> {
    let mut r = Reader::new(body);
    let mut out = Vec::new();
    read_slots(layout, "", &mut r, &mut out)?;
    if r.remaining() != 0 {
        return Err(format!("{} trailing bytes after the body", r.remaining()));
    }
    Ok(out)
}

fn read_slots(
    slots: &[Slot],
    prefix: &str,
    r: &mut Reader<'_>,
    out: &mut Vec<(String, String)>,
) -> Result<(), String> {
    for s in slots {
        read_wire(&s.wire, prefix, s.name, r, out)?;
    }
    Ok(())
}

fn uint(r: &mut Reader<'_>, n: usize, name: &str) -> Result<u64, String> {
    let b = r
        .bytes(n)
        .map_err(|_| format!("truncated: {name} needs {n} bytes"))?;
    Ok(b.iter().fold(0u64, |v, x| v << 8 | u64::from(*x)))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn bytes(
    r: &mut Reader<'_>,
    n: usize,
    name: &str,
    out: &mut Vec<(String, String)>,
) -> Result<(), String> {
    let b = r
        .bytes(n)
        .map_err(|_| format!("truncated: {name} needs {n} bytes"))?;
    if !b.is_empty() {
        out.push((name.to_string(), hex(b)));
    }
    Ok(())
}

fn read_wire(
    w: &Wire,
    prefix: &str,
    name: &str,
    r: &mut Reader<'_>,
    out: &mut Vec<(String, String)>,
) -> Result<(), String> {
    let name = &format!("{prefix}{name}");
    let mut push = |v: String| out.push((name.to_string(), v));
    match *w {
        Wire::Uint(n) => push(uint(r, n, name)?.to_string()),
        Wire::Zero => {
            let v = uint(r, 1, name)?;
            if v != 0 {
                return Err(format!("reserved bits set: {name}"));
            }
            push(v.to_string());
        }
        Wire::Enum { values, why } => {
            let v = uint(r, 1, name)?;
            if !values.iter().any(|(n, _)| u64::from(*n) == v) {
                return Err(format!("{name}: {why}"));
            }
            push(v.to_string());
        }
        Wire::Flags { width, bits } => {
            let v = uint(r, width, name)?;
            let known = bits.iter().fold(0u64, |m, (b, _)| m | u64::from(*b));
            if v & !known != 0 {
                return Err(format!("reserved bits set: {name}"));
            }
            push(format!("0x{v:0w$x}", w = 2 * width));
            for (mask, flag) in bits {
                let set = u8::from(v & u64::from(*mask) != 0);
                out.push((format!("{name}.{flag}"), set.to_string()));
            }
        }
        Wire::Bytes(n) => bytes(r, n, name, out)?,
        Wire::Rest => bytes(r, r.remaining(), name, out)?,
        Wire::OptionalU16 => {
            if r.remaining() > 0 {
                push(uint(r, 2, name)?.to_string());
            }
        }
        Wire::LenBytes => {
            let n = uint(r, 2, name)?;
            out.push((format!("{name}_len"), n.to_string()));
            bytes(r, n as usize, name, out)?;
        }
        Wire::List {
            count,
            each,
            item,
            most,
        } => {
            let n = uint(r, 2, name)?;
            out.push((format!("{prefix}{count}"), n.to_string()));
            if let Some(m) = most.filter(|m| n as usize > *m) {
                return Err(format!("{name}: more than {m} items"));
            }
            for _ in 0..n {
                match item {
                    Wire::Struct(slots) => read_slots(slots, &format!("{prefix}{each}."), r, out)?,
                    w => read_wire(w, prefix, each, r, out)?,
                }
            }
        }
        Wire::Bitmap { bits } => {
            let l = out
                .iter()
                .rev()
                .find(|(n, _)| n == bits)
                .and_then(|(_, v)| v.parse::<u64>().ok())
                .ok_or_else(|| format!("{name}: no field {bits} before it"))?;
            bytes(r, l.div_ceil(8) as usize, name, out)?;
        }
        Wire::Struct(slots) => read_slots(slots, prefix, r, out)?,
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;
    use crate::{Family, Packet, HEADER_LEN};

    /// Every list's items in `slots` have a fixed length.
    fn lists_have_fixed_items(slots: &[Slot]) {
        for s in slots {
            match s.wire {
                Wire::List { item, .. } => assert!(fixed_len(item).is_some(), "{}", s.name),
                Wire::Struct(inner) => lists_have_fixed_items(inner),
                _ => {}
            }
        }
    }

    /// The layout reads every sample's body exactly, and every one-byte change of it the
    /// decoder accepts (the layout's rules are some of the decoder's).
    #[test]
    fn layouts_cover_every_sample_and_accept_what_the_decoder_accepts() {
        let mut covered = Vec::new();
        for (env, m) in crate::samples::every_kind() {
            let bytes = Packet::to_vec(env, &m).unwrap();
            let (family, kind) = (m.family(), bytes[4]);
            let layout = family.layout(kind).unwrap();
            lists_have_fixed_items(layout);
            let fields = read_fields(layout, &bytes[HEADER_LEN..])
                .unwrap_or_else(|e| panic!("{} {}: {e}", family.name(), m.kind_name()));
            assert!(!fields.is_empty() || bytes.len() == HEADER_LEN);
            covered.push((family, kind));
            for at in HEADER_LEN..bytes.len() {
                for v in [0u8, 1, 2, 0x7f, 0x80, 0xff] {
                    let mut b = bytes.clone();
                    b[at] = v;
                    if Packet::decode(&b).is_ok() {
                        assert!(
                            read_fields(layout, &b[HEADER_LEN..]).is_ok(),
                            "{} {} with byte {at} = {v}",
                            family.name(),
                            m.kind_name()
                        );
                    }
                }
            }
        }
        for f in Family::ALL {
            for (n, _) in f.kinds() {
                assert!(covered.contains(&(*f, n)), "{} kind {n}", f.name());
            }
        }
        assert_eq!(Family::Saw.layout(9), None);
    }

    #[test]
    fn a_label_is_the_first_sentence_of_the_doc_without_markdown() {
        let s = |doc| Slot {
            name: "x",
            doc,
            wire: Wire::Zero,
        };
        assert_eq!(
            s(&[" The [`NO_TP`] value. More."]).label(),
            "The NO_TP value"
        );
        assert_eq!(
            s(&[" `ts` of the copy,", " echoed."]).label(),
            "Ts of the copy, echoed"
        );
        assert_eq!(s(&[]).label(), "x");
    }
}
