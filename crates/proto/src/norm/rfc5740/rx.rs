//! Receiving one object from NRL's libnorm with a `norm` [`crate::norm::Receiver`]: the
//! FEC shim of open mode (`rmcast recv --protocol norm --open`, issue 62 item 4), pure (no
//! clock, no socket).
//!
//! libnorm repairs with its own Reed–Solomon parity ([`Rs8`], `docs/norm-rfc5740.md`
//! points 5–8), which the agent's decoder ([`crate::fec`]) cannot read. So the agent never
//! sees a parity segment: the shim keeps each block's source and parity segments, and once
//! it holds as many as the block's length (RFC 5052's partition of EXT_FTI's object), it
//! rebuilds the missing sources with [`Rs8`] (the object's *maximum* block length as k) and
//! hands them to the agent as source DATA, cut to their true length. The agent stays as the
//! simulator runs it.
//!
//! Going out, the agent's NACKs are rewritten per block to what libnorm's own receivers
//! ask (point 8): parity ESIs from the block's length plus the parity already received, as
//! many as the block still misses; or, once that would pass EXT_FTI's parity count, the
//! missing source segments by id. libnorm's object id is mapped to the agent's object 0
//! and back (the first object seen is the one received; others are counted and dropped).

use super::{block_len_of, Translator};
use rmcast_wire::norm as agent;
use rmcast_wire::rfc5740::rs8::Rs8;
use rmcast_wire::rfc5740::{
    AckPayload, Body, Cmd, Ext, Form, Fti, Message, PayloadId, RepairFlags, RepairItem,
    RepairRequest,
};
use std::collections::{BTreeMap, BTreeSet};

/// One block's segments until its sources are complete.
#[derive(Debug, Default)]
struct Block {
    sources: BTreeMap<u16, Vec<u8>>,
    /// Parity segments by parity index (ESI − block length).
    parity: BTreeMap<u16, Vec<u8>>,
}

/// The receive side of open mode: the [`Translator`] and the RS8 shim.
pub struct LibnormRx {
    /// The translation of the agent's messages.
    pub tr: Translator,
    /// libnorm's id of the object received (the agent's object 0).
    object: Option<u16>,
    fti: Option<Fti>,
    code: Option<Rs8>,
    blocks: BTreeMap<u32, Block>,
    /// Blocks whose sources are all held or rebuilt.
    complete: BTreeSet<u32>,
    /// Source segments rebuilt from parity.
    pub recovered: u64,
    /// Parity segments received.
    pub parity_received: u64,
    /// Messages about another object than the one received (dropped).
    pub other_objects: u64,
}

impl LibnormRx {
    /// A shim around `tr` (its session is the agent's).
    pub fn new(tr: Translator) -> Self {
        LibnormRx {
            tr,
            object: None,
            fti: None,
            code: None,
            blocks: BTreeMap::new(),
            complete: BTreeSet::new(),
            recovered: 0,
            parity_received: 0,
            other_objects: 0,
        }
    }

    /// The object's EXT_FTI, once a NORM_DATA or NORM_INFO named it.
    pub fn fti(&self) -> Option<Fti> {
        self.fti
    }

    /// Whether `object` is the one received (the first seen becomes it).
    fn ours(&mut self, object: u16) -> bool {
        let o = *self.object.get_or_insert(object);
        if o != object {
            self.other_objects += 1;
        }
        o == object
    }

    /// The agent's datagrams for a libnorm message: none, one, or a source DATA and the
    /// sources a parity segment completed.
    pub fn incoming(&mut self, m: &Message<'_>) -> Vec<Vec<u8>> {
        let mut m = m.clone();
        match &mut m.body {
            Body::Data { obj, id, .. } => {
                if !self.ours(obj.object) {
                    return Vec::new();
                }
                obj.object = 0;
                let (sbn, esi) = (id.sbn(), id.esi());
                if self.fti.is_none() {
                    self.fti = fti_of(&m);
                    self.code = self
                        .fti
                        .and_then(|f| Rs8::new(f.max_block_len.into(), f.num_parity.into()).ok());
                }
                return self.data(&m, sbn, esi);
            }
            Body::Info { obj, .. } => {
                if !self.ours(obj.object) {
                    return Vec::new();
                }
                obj.object = 0;
            }
            Body::Cmd {
                cmd: Cmd::Flush { object, .. } | Cmd::Squelch { object, .. },
                ..
            } => {
                if !self.ours(*object) {
                    return Vec::new();
                }
                *object = 0;
            }
            _ => {}
        }
        self.tr.incoming(&m).into_iter().collect()
    }

    /// A NORM_DATA of the object (already mapped to object 0).
    fn data(&mut self, m: &Message<'_>, sbn: u32, esi: u16) -> Vec<Vec<u8>> {
        let Body::Data { payload, .. } = &m.body else {
            return Vec::new();
        };
        let Some(k) = self.fti.as_ref().and_then(|f| block_len_of(f, sbn)) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        if esi < k {
            out.extend(self.tr.incoming(m));
        } else {
            self.parity_received += 1;
        }
        if self.complete.contains(&sbn) {
            return out;
        }
        let b = self.blocks.entry(sbn).or_default();
        if esi < k {
            b.sources.insert(esi, payload.to_vec());
        } else {
            b.parity.insert(esi - k, payload.to_vec());
        }
        out.extend(self.try_decode(m, sbn, k));
        out
    }

    /// Rebuild block `sbn`'s missing sources once it holds `k` segments.
    fn try_decode(&mut self, m: &Message<'_>, sbn: u32, k: u16) -> Vec<Vec<u8>> {
        let Some(b) = self.blocks.get(&sbn) else {
            return Vec::new();
        };
        if b.sources.len() >= usize::from(k) {
            self.blocks.remove(&sbn);
            self.complete.insert(sbn);
            return Vec::new();
        }
        if b.sources.len() + b.parity.len() < usize::from(k) {
            return Vec::new();
        }
        let (Some(code), Some(fti)) = (self.code.as_ref(), self.fti) else {
            return Vec::new();
        };
        let symbols: Vec<(usize, &[u8])> = b
            .sources
            .iter()
            .map(|(&e, s)| (usize::from(e), s.as_slice()))
            .chain(
                b.parity
                    .iter()
                    .map(|(&j, p)| (usize::from(k + j), p.as_slice())),
            )
            .take(usize::from(k))
            .collect();
        let Ok(all) = code.recover(usize::from(k), &symbols) else {
            // Inconsistent segments (another object's, or corrupt): wait for more.
            if let Some(b) = self.blocks.get_mut(&sbn) {
                b.parity.clear();
            }
            return Vec::new();
        };
        let missing: Vec<u16> = (0..k).filter(|e| !b.sources.contains_key(e)).collect();
        self.blocks.remove(&sbn);
        self.complete.insert(sbn);
        let mut out = Vec::new();
        for esi in missing {
            let Some(src) = all.get(usize::from(esi)) else {
                continue;
            };
            let len = segment_len(&fti, sbn, esi).min(src.len());
            let mut d = m.clone();
            if let Body::Data { id, payload, .. } = &mut d.body {
                *id = PayloadId::Rs8 {
                    sbn,
                    esi: esi as u8,
                };
                *payload = src.get(..len).unwrap_or_default();
            }
            if let Some(dg) = self.tr.incoming(&d) {
                self.recovered += 1;
                out.push(dg);
            }
        }
        out
    }

    /// The agent's datagram as libnorm bytes: its NACK rewritten to libnorm's requests, its
    /// object id mapped back (`None`: not translatable, or nothing left to ask).
    pub fn outgoing(&mut self, datagram: &[u8]) -> Option<Vec<u8>> {
        let (env, am) = self.tr.agent_message(datagram)?;
        let agent_blocks: Vec<u32> = match &am {
            agent::Message::Nack { requests, .. } => requests.iter().map(|r| r.block).collect(),
            _ => Vec::new(),
        };
        let mut m = self.tr.message_of(env, am)?;
        let object = self.object.unwrap_or(0);
        match &mut m.body {
            Body::Nack { requests, .. } => {
                let blocks: BTreeSet<u32> = agent_blocks.into_iter().collect();
                *requests = blocks
                    .into_iter()
                    .flat_map(|b| self.requests_for(object, b))
                    .collect();
                if requests.is_empty() {
                    return None;
                }
            }
            Body::Ack {
                payload: AckPayload::Flush { object: o, .. },
                ..
            } => *o = object,
            _ => {}
        }
        m.to_vec().ok()
    }

    /// What block `sbn` of `object` still needs, as libnorm's receivers ask it.
    fn requests_for(&self, object: u16, sbn: u32) -> Vec<RepairRequest> {
        let Some(fti) = self.fti else {
            return Vec::new();
        };
        let Some(k) = block_len_of(&fti, sbn) else {
            return Vec::new();
        };
        if self.complete.contains(&sbn) {
            return Vec::new();
        }
        let empty = Block::default();
        let b = self.blocks.get(&sbn).unwrap_or(&empty);
        let held = b.sources.len() + b.parity.len();
        let need = usize::from(k).saturating_sub(held) as u16;
        if need == 0 {
            return Vec::new();
        }
        let next = b.parity.keys().next_back().map_or(0, |j| j + 1);
        let item = |esi: u16| -> Option<RepairItem> {
            Some(RepairItem {
                object,
                id: PayloadId::Rs8 {
                    sbn,
                    esi: u8::try_from(esi).ok()?,
                },
            })
        };
        let mut runs = Vec::new();
        if next + need <= u16::from(fti.num_parity) {
            runs.push((k + next, k + next + need - 1));
        } else {
            for e in (0..k).filter(|e| !b.sources.contains_key(e)) {
                match runs.last_mut() {
                    Some((_, last)) if *last + 1 == e => *last = e,
                    _ => runs.push((e, e)),
                }
            }
        }
        let flags = RepairFlags {
            segment: true,
            ..RepairFlags::default()
        };
        runs.into_iter()
            .filter_map(|(a, z)| {
                let (form, items) = if a == z {
                    (Form::Items, vec![item(a)?])
                } else {
                    (Form::Ranges, vec![item(a)?, item(z)?])
                };
                Some(RepairRequest { form, flags, items })
            })
            .collect()
    }
}

/// A message's EXT_FTI.
fn fti_of(m: &Message<'_>) -> Option<Fti> {
    m.ext.iter().find_map(|e| match e {
        Ext::Fti(f) => Some(*f),
        _ => None,
    })
}

/// The true length of segment `esi` of block `sbn`: the segment size, but the object's last
/// segment ends with the object.
pub fn segment_len(f: &Fti, sbn: u32, esi: u16) -> usize {
    let seg = u64::from(f.segment_size);
    let before: u64 = (0..sbn)
        .map(|b| u64::from(block_len_of(f, b).unwrap_or(0)))
        .sum();
    let start = (before + u64::from(esi)) * seg;
    f.object_size.saturating_sub(start).min(seg) as usize
}

#[cfg(test)]
#[path = "rx_tests.rs"]
mod tests;
