//! The translation between the `pgm` agents' own messages ([`rmcast_wire::pgm`], in rmcast's
//! 20-byte header) and RFC 3208 packets ([`rmcast_wire::rfc3208`]), as `docs/pgm-rfc3208.md`
//! maps them; pure (no clock, no socket), used by open mode on sockets, the default socket
//! mode and the simulator's pcap alike:
//!
//! * sequence numbers go out as `(seq + base) mod 2^32` and come back as the `u64` nearest
//!   the highest one this side has seen (a window is far smaller than 2^31);
//! * an SPM's lead is the agent's *next* sequence number less one (RFC 3208's is the last
//!   one sent; an empty window is `trail = lead + 1`); with FEC it carries OPT_PARITY_PRM;
//! * ODATA and RDATA carry the trailing edge of the source's last SPM;
//! * NAKL and NCFL become a NAK or NCF with OPT_NAK_LIST, and back;
//! * FEC (RFC 3208 §11): a PARITY of block `b`, index `i` of `k` becomes RDATA (ODATA for the
//!   first `proactive` indices, sent unasked) with the header's OPT_PARITY bit and sqn =
//!   `b·k + i mod k` (OpenPGM's `tg_sqn | h` when `k` is a power of two), and, when
//!   `i ≥ k`, OPT_PARITY_GRP = `i / k` (RFC 3208 §9.9's group of `k` parity packets). A
//!   BNAK or BNCF for `total` symbols is a NAK or NCF with OPT_PARITY and the same encoding
//!   of `total` (the agent's cumulative total, not OpenPGM's count of missing symbols: the
//!   default mode carries what the agent has). Reading these back needs `k`
//!   ([`Translator::set_fec`]); without it they are dropped, counted;
//! * TFMCC's CCS and CCFB have no RFC 3208 packet: [`Outgoing::Session`], the datagram goes
//!   as it is, on the session layer's port (open mode has none and drops it).

use crate::NodeId;
use rmcast_wire::pgm::{Message as PgmMessage, SeqList};
use rmcast_wire::rfc3208::{self, Body, Data, Flags, Gsi, NakBody, Opt, Tsi};
use rmcast_wire::{Envelope, Message, Packet, FLAG_RETRANSMISSION};
use std::net::IpAddr;

/// The session id the agents of an open-mode transfer share (their envelopes only: it never
/// goes on the wire).
pub const SESSION: u32 = 0x0be4_3208;
/// The node id open mode's agents give the source.
pub const SOURCE_NODE: NodeId = NodeId(1);
/// The node id open mode's agents give the local receiver.
pub const RECEIVER_NODE: NodeId = NodeId(2);

/// The TSI of the source `node` of rmcast session `session`: a GSI of the low 48 bits of a
/// mix of the two (as OpenPGM takes the low 48 bits of an MD5 of the host name) and a port
/// of 1024 and up from the rest. The same on every host and in every run.
pub fn tsi_of(session: u32, node: NodeId) -> Tsi {
    let h = mix((u64::from(session) << 32) | u64::from(node.0));
    let b = h.to_be_bytes();
    let gsi = Gsi([b[2], b[3], b[4], b[5], b[6], b[7]]);
    let port = u16::from_be_bytes([b[0], b[1]]);
    Tsi {
        gsi,
        sport: port.max(1024),
    }
}

/// splitmix64's finaliser: a fixed, well-spread mix of 64 bits.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// One side's translation state.
#[derive(Debug, Clone)]
pub struct Translator {
    /// The source's TSI.
    pub tsi: Tsi,
    /// The PGM data-destination port.
    pub dport: u16,
    /// The RFC 3208 sequence number of the agent's sequence number 0.
    pub base: u32,
    /// The source's unicast address (SPM path NLA, NAK source NLA).
    pub source_nla: IpAddr,
    /// The group's address (NAK group NLA).
    pub group_nla: IpAddr,
    /// The session id of the envelopes [`Translator::incoming`] writes.
    pub session: u32,
    /// FEC: source packets per block (0: off) and parity indices sent unasked.
    fec: (u16, u16),
    /// The highest data sequence number seen or sent (what incoming numbers unwrap near).
    high: u64,
    /// The trailing edge of the source's last SPM (ODATA and RDATA carry it).
    trail: u64,
    /// The sequence number after the last SPM the source sent.
    pub spm_next: u64,
    /// Agent messages and RFC 3208 packets that have no counterpart here (dropped).
    pub untranslatable: u64,
    /// RFC 3208 packets that name a sequence number before `base` (dropped).
    pub before_base: u64,
}

/// What an agent's datagram becomes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outgoing {
    /// An RFC 3208 packet: the UDP payload, and whether it goes upstream (to the source)
    /// rather than to the group.
    Pgm {
        /// The UDP payload.
        payload: Vec<u8>,
        /// Unicast to the source.
        upstream: bool,
    },
    /// A datagram RFC 3208 has no packet for (TFMCC's CCS and CCFB): it goes unchanged, on
    /// the session layer's port.
    Session,
}

impl Translator {
    /// A translator for the session `tsi`, the agents' envelopes naming open mode's
    /// [`SESSION`] (see [`Translator::session`]), FEC off.
    pub fn new(tsi: Tsi, dport: u16, base: u32, source_nla: IpAddr, group_nla: IpAddr) -> Self {
        Translator {
            tsi,
            dport,
            base,
            source_nla,
            group_nla,
            session: SESSION,
            fec: (0, 0),
            high: 0,
            trail: 0,
            spm_next: 0,
            untranslatable: 0,
            before_base: 0,
        }
    }

    /// FEC as the session runs it: `k` source packets per block (0: off) and `proactive`
    /// parity indices sent unasked after each block. SPMs then carry OPT_PARITY_PRM, and
    /// parity packets and parity NAKs can be read back.
    pub fn set_fec(&mut self, k: u16, proactive: u16) {
        self.fec = (k, proactive);
    }

    fn wrap(&self, seq: u64) -> u32 {
        (seq as u32).wrapping_add(self.base)
    }

    /// The `u64` sequence number nearest `near` whose wire form is `sqn`; `None` if it
    /// falls before the agent's 0.
    fn unwrap_near(&self, sqn: u32, near: u64) -> Option<u64> {
        let rel = sqn.wrapping_sub(self.base);
        let delta = rel.wrapping_sub(near as u32) as i32;
        near.checked_add_signed(i64::from(delta))
    }

    /// A data sequence number from the wire (and the high mark moves up to it).
    pub fn seq_in(&mut self, sqn: u32) -> Option<u64> {
        let s = self.unwrap_near(sqn, self.high);
        match s {
            Some(s) => {
                self.high = self.high.max(s);
                Some(s)
            }
            None => {
                self.before_base += 1;
                None
            }
        }
    }

    fn packet<'a>(
        &self,
        body: Body<'a>,
        options: Vec<Opt<'a>>,
        flags: Flags,
    ) -> rfc3208::Packet<'a> {
        let (sport, dport) = if body.upstream() {
            (self.dport, self.tsi.sport)
        } else {
            (self.tsi.sport, self.dport)
        };
        rfc3208::Packet {
            sport,
            dport,
            gsi: self.tsi.gsi,
            flags,
            body,
            options,
        }
    }

    fn nak_body(&self, seq: u64) -> NakBody {
        NakBody {
            sqn: self.wrap(seq),
            source: self.source_nla,
            group: self.group_nla,
        }
    }

    /// A NAK or NCF body for `seqs` (the first in the body, the rest in OPT_NAK_LIST).
    fn listed(&self, seqs: SeqList<'_>) -> Option<(NakBody, Vec<Opt<'static>>)> {
        let mut it = seqs.iter();
        let first = it.next()?;
        let rest: Vec<u32> = it.map(|s| self.wrap(s)).collect();
        let opts = if rest.is_empty() {
            Vec::new()
        } else {
            vec![Opt::NakList(rest)]
        };
        Some((self.nak_body(first), opts))
    }

    /// The wire sequence number and options of parity index (or parity total) `h` of
    /// `block` of `k`: `block·k + h mod k`, and OPT_PARITY_GRP `h / k` when `h ≥ k`.
    fn parity_sqn(&self, block: u64, h: u16, k: u16) -> (u32, Vec<Opt<'static>>) {
        let k = k.max(1);
        let tg = block.wrapping_mul(u64::from(k));
        let sqn = self.wrap(tg.wrapping_add(u64::from(h % k)));
        let grp = h / k;
        let opts = if grp == 0 {
            Vec::new()
        } else {
            vec![Opt::ParityGrp {
                group: u32::from(grp),
            }]
        };
        (sqn, opts)
    }

    /// The agent's datagram as it goes on the wire (`None`: nothing to send, counted).
    pub fn outgoing(&mut self, datagram: &[u8]) -> Option<Outgoing> {
        let Ok(Packet {
            message: Message::Pgm(m),
            ..
        }) = Packet::decode(datagram)
        else {
            self.untranslatable += 1;
            return None;
        };
        if let PgmMessage::Odata { seq, .. } = m {
            self.high = self.high.max(seq);
        }
        let Some((body, opts, flags)) = self.body_of(m) else {
            return Some(Outgoing::Session);
        };
        let p = self.packet(body, opts, flags);
        let upstream = p.body.upstream();
        match p.to_vec() {
            Ok(payload) => Some(Outgoing::Pgm { payload, upstream }),
            Err(_) => {
                self.untranslatable += 1;
                None
            }
        }
    }

    /// The RFC 3208 body, options and flags of an agent's message (`None`: it has none).
    fn body_of<'a>(&mut self, m: PgmMessage<'a>) -> Option<(Body<'a>, Vec<Opt<'a>>, Flags)> {
        let none = Flags::default();
        let parity = Flags {
            parity: true,
            ..none
        };
        let trail = self.wrap(self.trail);
        let data = |sqn, payload| Data {
            sqn,
            trail,
            payload,
        };
        Some(match m {
            PgmMessage::Odata { seq, payload } => {
                (Body::Odata(data(self.wrap(seq), payload)), vec![], none)
            }
            PgmMessage::Rdata { seq, payload } => {
                (Body::Rdata(data(self.wrap(seq), payload)), vec![], none)
            }
            PgmMessage::Spm {
                spm_seq,
                trail,
                lead,
            } => {
                self.trail = trail;
                self.spm_next = spm_seq + 1;
                let (opts, flags) = self.parity_prm();
                let body = Body::Spm {
                    sqn: spm_seq as u32,
                    trail: self.wrap(trail),
                    lead: self.wrap(lead).wrapping_sub(1),
                    path: self.source_nla,
                };
                (body, opts, flags)
            }
            PgmMessage::Nak { seq } => (Body::Nak(self.nak_body(seq)), vec![], none),
            PgmMessage::Ncf { seq } => (Body::Ncf(self.nak_body(seq)), vec![], none),
            PgmMessage::NakList { seqs } => {
                let (b, o) = self.listed(seqs)?;
                (Body::Nak(b), o, none)
            }
            PgmMessage::NcfList { seqs } => {
                let (b, o) = self.listed(seqs)?;
                (Body::Ncf(b), o, none)
            }
            PgmMessage::Parity {
                block,
                index,
                k,
                payload,
            } => {
                let (sqn, opts) = self.parity_sqn(block, index, k);
                let d = data(sqn, payload);
                let body = if index < self.fec.1 {
                    Body::Odata(d)
                } else {
                    Body::Rdata(d)
                };
                (body, opts, parity)
            }
            PgmMessage::BlockNak { block, total } | PgmMessage::BlockNcf { block, total } => {
                let (sqn, opts) = self.parity_sqn(block, total, self.fec.0);
                let n = NakBody {
                    sqn,
                    ..self.nak_body(0)
                };
                let body = if matches!(m, PgmMessage::BlockNak { .. }) {
                    Body::Nak(n)
                } else {
                    Body::Ncf(n)
                };
                (body, opts, parity)
            }
            PgmMessage::Status { .. } | PgmMessage::Feedback { .. } => return None,
        })
    }

    /// An SPM's OPT_PARITY_PRM and header flags when FEC is on (OpenPGM sets OPT_NETWORK
    /// with it).
    fn parity_prm(&self) -> (Vec<Opt<'static>>, Flags) {
        let (k, proactive) = self.fec;
        if k == 0 {
            return (Vec::new(), Flags::default());
        }
        let prm = Opt::ParityPrm {
            proactive: proactive > 0,
            on_demand: true,
            tg_size: u32::from(k),
        };
        let flags = Flags {
            network: true,
            ..Flags::default()
        };
        (vec![prm], flags)
    }

    /// An SPM with OPT_FIN: the source's window as its last SPM gave it (`spm_seq`, the
    /// agent's next sequence number `next`).
    pub fn fin_spm(&self, spm_seq: u64, next: u64) -> Option<Vec<u8>> {
        let body = Body::Spm {
            sqn: spm_seq as u32,
            trail: self.wrap(self.trail),
            lead: self.wrap(next).wrapping_sub(1),
            path: self.source_nla,
        };
        let fin = Opt::Other {
            id: rfc3208::options::id::FIN,
            value: &[0, 0],
        };
        let p = self.packet(body, vec![fin], Flags::default());
        p.to_vec().ok()
    }

    /// An SPMR to the source.
    pub fn spmr(&self) -> Option<Vec<u8>> {
        let p = self.packet(Body::Spmr, Vec::new(), Flags::default());
        p.to_vec().ok()
    }

    /// Whether `p` belongs to this session (its TSI and data-destination port).
    pub fn ours(&self, p: &rfc3208::Packet<'_>) -> bool {
        p.tsi() == self.tsi
            && if p.body.upstream() {
                p.sport == self.dport
            } else {
                p.dport == self.dport
            }
    }

    /// The agent's datagram for an RFC 3208 packet of this session (`None`: one the agent
    /// does not take, or a sequence number before `base`). `from` is the node that sent
    /// it as the agents name nodes.
    pub fn incoming(&mut self, p: &rfc3208::Packet<'_>, from: NodeId) -> Option<Vec<u8>> {
        if p.flags.parity {
            return self.parity_in(p, from);
        }
        let mut flags = 0;
        let m = match p.body {
            Body::Odata(d) => PgmMessage::Odata {
                seq: self.seq_in(d.sqn)?,
                payload: d.payload,
            },
            Body::Rdata(d) => {
                flags = FLAG_RETRANSMISSION;
                PgmMessage::Rdata {
                    seq: self.seq_in(d.sqn)?,
                    payload: d.payload,
                }
            }
            Body::Spm {
                sqn, trail, lead, ..
            } => {
                // The agents do not order SPMs by their number (RFC 3208 receivers do, to
                // drop stale ones; the window edges here only ever move forward).
                let spm_seq = u64::from(sqn);
                let lead = self.seq_in(lead.wrapping_add(1))?;
                let trail = self.unwrap_near(trail, lead).unwrap_or(0).min(lead);
                PgmMessage::Spm {
                    spm_seq,
                    trail,
                    lead,
                }
            }
            Body::Nak(n) | Body::Ncf(n) => {
                let mut list = vec![self.seq_in(n.sqn)?];
                for o in &p.options {
                    if let Opt::NakList(more) = o {
                        list.extend(more.iter().filter_map(|&s| self.seq_in(s)));
                    }
                }
                list.sort_unstable();
                list.dedup();
                list.truncate(rmcast_wire::pgm::MAX_NAK_LIST);
                return self.nak_message(matches!(p.body, Body::Nak(_)), &list, from);
            }
            Body::Nnak(_) | Body::Spmr => return None,
        };
        self.envelope(m, from, flags)
    }

    /// A parity packet or parity NAK/NCF (OPT_PARITY set) as the agent's PARITY, BNAK or
    /// BNCF; `None` without FEC ([`Translator::set_fec`]) or for a type that has none.
    fn parity_in(&mut self, p: &rfc3208::Packet<'_>, from: NodeId) -> Option<Vec<u8>> {
        let k = self.fec.0;
        let sqn = match p.body {
            Body::Odata(d) | Body::Rdata(d) => d.sqn,
            Body::Nak(n) | Body::Ncf(n) => n.sqn,
            _ => 0,
        };
        let s = match self.unwrap_near(sqn, self.high) {
            Some(s) if k > 0 => s,
            _ => {
                self.untranslatable += 1;
                return None;
            }
        };
        let grp = p.options.iter().find_map(|o| match o {
            Opt::ParityGrp { group } => Some(*group),
            _ => None,
        });
        let block = s / u64::from(k);
        let h = u32::from(k)
            .checked_mul(grp.unwrap_or(0))
            .and_then(|g| g.checked_add((s % u64::from(k)) as u32))
            .and_then(|h| u16::try_from(h).ok());
        let Some(h) = h else {
            self.untranslatable += 1;
            return None;
        };
        let (m, flags) = match p.body {
            Body::Odata(d) | Body::Rdata(d) => (
                PgmMessage::Parity {
                    block,
                    index: h,
                    k,
                    payload: d.payload,
                },
                FLAG_RETRANSMISSION,
            ),
            Body::Nak(_) => (PgmMessage::BlockNak { block, total: h }, 0),
            Body::Ncf(_) => (PgmMessage::BlockNcf { block, total: h }, 0),
            _ => {
                self.untranslatable += 1;
                return None;
            }
        };
        self.envelope(m, from, flags)
    }

    fn nak_message(&mut self, nak: bool, list: &[u64], from: NodeId) -> Option<Vec<u8>> {
        let m = match (nak, list) {
            (_, []) => return None,
            (true, [seq]) => PgmMessage::Nak { seq: *seq },
            (false, [seq]) => PgmMessage::Ncf { seq: *seq },
            (_, many) => {
                let mut raw = Vec::new();
                SeqList::encode_seqs(many.iter().copied(), &mut raw);
                let seqs = SeqList::from_raw(&raw)?;
                let m = if nak {
                    PgmMessage::NakList { seqs }
                } else {
                    PgmMessage::NcfList { seqs }
                };
                return self.envelope(m, from, 0);
            }
        };
        self.envelope(m, from, 0)
    }

    fn envelope(&mut self, m: PgmMessage<'_>, from: NodeId, flags: u8) -> Option<Vec<u8>> {
        let env = Envelope {
            session: self.session,
            source: from.0,
            flags,
        };
        let out = Packet::to_vec(env, &Message::Pgm(m)).ok();
        if out.is_none() {
            self.untranslatable += 1;
        }
        out
    }
}
