//! Sending one file to NRL's libnorm receivers with a `norm` [`crate::norm::Sender`]: the
//! shim of open mode (`rmcast send --protocol norm --open`, issue 62 item 4), pure.
//!
//! libnorm's receivers place a segment by RFC 5052's partition of EXT_FTI's object
//! (`docs/norm-rfc5740.md` point 4) and decode parity of its RS8 code with the object's
//! maximum block length as k (points 5–7). The agent cuts its blocks at a fixed `k`. So the
//! agent runs with `k` = the partition's longest block, and the driver gives it one filler
//! segment after each shorter block ([`LibnormTx::filler_after`]): the agent's blocks are then
//! the partition's, and the shim never sends a filler. Each block's sources are kept; the
//! agent's parity segment `j` of a block goes out as libnorm's parity `j`
//! ([`Rs8::parity`], ESI block length + j), its own bytes ([`crate::fec`]'s) dropped.
//!
//! Going in, a NACK's parity ESIs (from the block's length) become the agent's (from its
//! `k`), and its BLOCK requests (blocks a late joiner never heard of, which libnorm asks for
//! whole) requests for every source segment of those blocks; a watermark ACK of the
//! object's last segment becomes the agent's last position (the filler's, where the last
//! block is short). Every NORM_DATA carries a FILE object's EXT_FTI as libnorm's do: the
//! real object size, the segment size, the maximum block length and the parity count.

use super::{block_len_of, Translator};
use rmcast_wire::norm as agent;
use rmcast_wire::rfc5740::rs8::Rs8;
use rmcast_wire::rfc5740::{
    ack_type, quant, AckPayload, Body, Cmd, Ext, Form, Fti, Message, PayloadId, RepairFlags,
    RepairItem, RepairRequest,
};
use std::collections::BTreeMap;

/// One block's sources, and its parity once asked.
#[derive(Debug, Default)]
struct Block {
    sources: BTreeMap<u16, Vec<u8>>,
    parity: Vec<Vec<u8>>,
}

/// The send side of open mode: the [`Translator`] and the partition and RS8 shim.
pub struct LibnormTx {
    /// The translation of the agent's messages.
    pub tr: Translator,
    fti: Fti,
    code: Option<Rs8>,
    /// The agent's `k`: the partition's longest block.
    k: u16,
    blocks: BTreeMap<u32, Block>,
    /// libnorm parity segments sent.
    pub parity_sent: u64,
    /// Source segments sent again.
    pub sources_resent: u64,
    /// Without NORM-CC, the fixed rate (bytes per second) that the agent's GRTT probes
    /// carry in EXT_RATE, as libnorm's sender does in its default probing mode
    /// (`NORM_PROBE_ACTIVE`): libnorm's receivers answer only a NORM_CMD(CC) with EXT_RATE.
    /// Their answers come back as plain CC ACKs, for the GRTT (`None`: leave probes as the
    /// agent sends them, as under NORM-CC, whose CC RATE carries its own).
    pub probe_rate: Option<u64>,
}

impl LibnormTx {
    /// A shim for an object of `size` bytes in segments of `segment` bytes, blocks of at most
    /// `max_block` sources and `parity` parity each (`None`: no such code, or an empty
    /// object).
    pub fn new(tr: Translator, size: u64, segment: u16, max_block: u8, parity: u8) -> Option<Self> {
        let fti = Fti {
            object_size: size,
            segment_size: segment,
            max_block_len: max_block,
            num_parity: parity,
        };
        let k = block_len_of(&fti, 0)?;
        let code = Rs8::new(max_block.into(), parity.into()).ok();
        Some(LibnormTx {
            tr,
            fti,
            code,
            k,
            blocks: BTreeMap::new(),
            parity_sent: 0,
            sources_resent: 0,
            probe_rate: None,
        })
    }

    /// The agent's block length `k` (the partition's longest block).
    pub fn agent_k(&self) -> u16 {
        self.k
    }

    /// The object's EXT_FTI.
    pub fn fti(&self) -> Fti {
        self.fti
    }

    /// Whether the driver must give the agent a filler segment after the object's segment
    /// number `index` (counted from 0 over the object): it ends a block shorter than `k`.
    pub fn filler_after(&self, index: u64) -> bool {
        let mut start = 0u64;
        let mut sbn = 0;
        while let Some(len) = block_len_of(&self.fti, sbn) {
            let end = start + u64::from(len);
            if index < end {
                return index + 1 == end && len < self.k;
            }
            start = end;
            sbn += 1;
        }
        false
    }

    /// The length of block `sbn` (0: none).
    fn len_of(&self, sbn: u32) -> u16 {
        block_len_of(&self.fti, sbn).unwrap_or(0)
    }

    /// The agent's datagram as libnorm bytes (`None`: a filler, or not translatable).
    pub fn outgoing(&mut self, datagram: &[u8]) -> Option<Vec<u8>> {
        let (env, am) = self.tr.agent_message(datagram)?;
        let data = match am {
            agent::Message::Data {
                block,
                symbol,
                block_len,
                payload,
                ..
            } => Some((block, symbol, block_len, payload.to_vec())),
            _ => None,
        };
        // A filler, or parity not made, is dropped before the translator numbers the
        // message: libnorm's receivers count a gap in the sequence as a loss (NORM-CC).
        let parity = match data {
            Some((sbn, symbol, block_len, _)) if symbol >= block_len => {
                let j = symbol - block_len;
                let esi = u8::try_from(self.len_of(sbn) + j).ok()?;
                Some((self.parity(sbn, j)?, esi))
            }
            Some((sbn, symbol, _, _)) if symbol >= self.len_of(sbn) => return None,
            _ => None,
        };
        let mut m = self.tr.message_of(env, am)?;
        match (&mut m.body, data) {
            (Body::Data { id, payload, .. }, Some((sbn, symbol, _, bytes))) => {
                if let Some((bytes, esi)) = &parity {
                    *payload = bytes.as_slice();
                    *id = PayloadId::Rs8 { sbn, esi: *esi };
                    self.parity_sent += 1;
                } else {
                    let b = self.blocks.entry(sbn).or_default();
                    if b.sources.insert(symbol, bytes).is_some() {
                        self.sources_resent += 1;
                    }
                }
                m.ext = vec![Ext::Fti(self.fti)];
            }
            (
                Body::Cmd {
                    cmd: Cmd::Flush { id, .. } | Cmd::Squelch { id, .. },
                    ..
                },
                _,
            ) => {
                let sbn = id.sbn();
                let last = self.len_of(sbn).max(1) - 1;
                let esi = u8::try_from(id.esi().min(last)).ok()?;
                *id = PayloadId::Rs8 { sbn, esi };
            }
            (
                Body::Cmd {
                    cmd: Cmd::Cc { .. },
                    ..
                },
                _,
            ) => {
                let has_rate = m.ext.iter().any(|e| matches!(e, Ext::Rate { .. }));
                if let Some(rate) = self.probe_rate.filter(|_| !has_rate) {
                    let send_rate = quant::quantize_rate(rate as f64);
                    m.ext.push(Ext::Rate { send_rate });
                }
            }
            _ => {}
        }
        m.to_vec().ok()
    }

    /// libnorm's parity `j` of block `sbn` (all 16 computed at the first ask).
    fn parity(&mut self, sbn: u32, j: u16) -> Option<Vec<u8>> {
        let k_p = usize::from(self.len_of(sbn));
        let code = self.code.as_ref()?;
        let b = self.blocks.get_mut(&sbn)?;
        if b.parity.is_empty() {
            if b.sources.len() < k_p {
                return None;
            }
            let sources: Vec<&[u8]> = b.sources.values().map(Vec::as_slice).collect();
            b.parity = code.parity(&sources).ok()?;
        }
        b.parity.get(usize::from(j)).cloned()
    }

    /// A BLOCK request as the SEGMENT request of every source segment of its blocks (a
    /// block past the object's end is left out).
    fn whole_blocks(&self, r: &RepairRequest) -> RepairRequest {
        let mut items = Vec::new();
        for (a, b) in r.ranges() {
            if a.object != b.object {
                continue;
            }
            for sbn in a.id.sbn()..=b.id.sbn() {
                let k_p = self.len_of(sbn);
                let Some(last) = k_p.checked_sub(1).and_then(|l| u8::try_from(l).ok()) else {
                    break;
                };
                let at = |esi| RepairItem {
                    object: a.object,
                    id: PayloadId::Rs8 { sbn, esi },
                };
                items.extend([at(0), at(last)]);
            }
        }
        RepairRequest {
            form: Form::Ranges,
            flags: RepairFlags {
                segment: true,
                ..RepairFlags::default()
            },
            items,
        }
    }

    /// The agent's datagram for a libnorm message (its NACK's parity ESIs and its ACK of
    /// the object's end in the agent's numbering).
    pub fn incoming(&mut self, m: &Message<'_>) -> Option<Vec<u8>> {
        let mut m = m.clone();
        match &mut m.body {
            Body::Nack { requests, .. } => {
                for r in requests.iter_mut() {
                    if r.flags.object {
                        // A late joiner's (NORM_SYNC_ALL) request for the objects before
                        // ours: the agent squelches a request for another object (libnorm
                        // answers it with SQUELCH too, docs/norm-rfc5740.md point 9).
                        let Some(first) = r.items.first().copied() else {
                            continue;
                        };
                        r.form = Form::Items;
                        r.flags = RepairFlags {
                            segment: true,
                            ..RepairFlags::default()
                        };
                        r.items = vec![RepairItem {
                            object: first.object,
                            id: PayloadId::Rs8 { sbn: 0, esi: 0 },
                        }];
                        continue;
                    }
                    if r.flags.block {
                        // Blocks never heard of (a receiver that joined late, or lost all
                        // of them): every source segment of each.
                        *r = self.whole_blocks(r);
                        continue;
                    }
                    for item in r.items.iter_mut() {
                        let (sbn, esi) = (item.id.sbn(), item.id.esi());
                        let k_p = self.len_of(sbn);
                        if esi >= k_p && k_p > 0 {
                            let esi = esi + (self.k - k_p);
                            item.id = PayloadId::Rs8 {
                                sbn,
                                esi: u8::try_from(esi).ok()?,
                            };
                        }
                    }
                }
            }
            Body::Ack {
                ack_type: ack_type::CC,
                ..
            } if self.probe_rate.is_some() => {
                // An answer to a probe of ours: a plain CC ACK (its figures dropped).
                for e in m.ext.iter_mut() {
                    if let Ext::Cc { rate, .. } = e {
                        *rate = 0;
                    }
                }
            }
            Body::Ack {
                payload: AckPayload::Flush { id, .. },
                ..
            } => {
                let (sbn, esi) = (id.sbn(), id.esi());
                let k_p = self.len_of(sbn);
                let last = block_len_of(&self.fti, sbn + 1).is_none();
                if last && esi + 1 == k_p {
                    *id = PayloadId::Rs8 {
                        sbn,
                        esi: u8::try_from(self.k - 1).ok()?,
                    };
                }
            }
            _ => {}
        }
        self.tr.incoming(&m)
    }
}

#[cfg(test)]
#[path = "tx_tests.rs"]
mod tests;
