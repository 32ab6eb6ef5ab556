//! The translation at the socket boundary between the `pgm` agents' own messages
//! ([`rmcast_wire::pgm`], in rmcast's 20-byte header) and RFC 3208 packets
//! ([`rmcast_wire::rfc3208`]), as `docs/pgm-rfc3208.md` maps them:
//!
//! * sequence numbers go out as `(seq + base) mod 2^32` and come back as the `u64` nearest
//!   the highest one this side has seen (a window is far smaller than 2^31);
//! * an SPM's lead is the agent's *next* sequence number less one (RFC 3208's is the last
//!   one sent; an empty window is `trail = lead + 1`);
//! * ODATA and RDATA carry the trailing edge of the source's last SPM;
//! * NAKL and NCFL become a NAK or NCF with OPT_NAK_LIST, and back;
//! * FEC parity, block NAKs and TFMCC have no place in open mode (the agents are built
//!   without them) and are dropped, counted in [`Translator::untranslatable`].

use rmcast_proto::NodeId;
use rmcast_wire::pgm::{Message as PgmMessage, SeqList};
use rmcast_wire::rfc3208::{self, Body, Data, Flags, NakBody, Opt, Tsi};
use rmcast_wire::{Envelope, Message, Packet, FLAG_RETRANSMISSION};
use std::net::IpAddr;

/// The session id the agents of an open-mode transfer share (their envelopes only: it never
/// goes on the wire).
pub const SESSION: u32 = 0x0be4_3208;
/// The node id the agents give the source.
pub const SOURCE_NODE: NodeId = NodeId(1);
/// The node id the agents give the local receiver.
pub const RECEIVER_NODE: NodeId = NodeId(2);

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
    /// The highest data sequence number seen or sent (what incoming numbers unwrap near).
    high: u64,
    /// The trailing edge of the source's last SPM (ODATA and RDATA carry it).
    trail: u64,
    /// The sequence number after the last SPM the source sent.
    pub spm_next: u64,
    /// Agent messages that have no open-mode packet (dropped).
    pub untranslatable: u64,
    /// RFC 3208 packets that name a sequence number before `base` (dropped).
    pub before_base: u64,
}

/// An RFC 3208 packet the agent's datagram became, and whether it goes upstream (to the
/// source) rather than to the group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// The UDP payload.
    pub payload: Vec<u8>,
    /// Unicast to the source.
    pub upstream: bool,
}

impl Translator {
    /// A translator for the session `tsi`.
    pub fn new(tsi: Tsi, dport: u16, base: u32, source_nla: IpAddr, group_nla: IpAddr) -> Self {
        Translator {
            tsi,
            dport,
            base,
            source_nla,
            group_nla,
            high: 0,
            trail: 0,
            spm_next: 0,
            untranslatable: 0,
            before_base: 0,
        }
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

    fn packet<'a>(&self, body: Body<'a>, options: Vec<Opt<'a>>) -> rfc3208::Packet<'a> {
        let (sport, dport) = if body.upstream() {
            (self.dport, self.tsi.sport)
        } else {
            (self.tsi.sport, self.dport)
        };
        rfc3208::Packet {
            sport,
            dport,
            gsi: self.tsi.gsi,
            flags: Flags::default(),
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
    fn listed(&self, seqs: &[u64]) -> Option<(NakBody, Vec<Opt<'static>>)> {
        let (first, rest) = seqs.split_first()?;
        let opts = if rest.is_empty() {
            Vec::new()
        } else {
            vec![Opt::NakList(rest.iter().map(|&s| self.wrap(s)).collect())]
        };
        Some((self.nak_body(*first), opts))
    }

    /// The RFC 3208 packet for an agent's datagram (`None`: nothing to send, counted).
    pub fn outgoing(&mut self, datagram: &[u8]) -> Option<Outgoing> {
        let Ok(Packet {
            message: Message::Pgm(m),
            ..
        }) = Packet::decode(datagram)
        else {
            self.untranslatable += 1;
            return None;
        };
        let (base, trail) = (self.base, self.wrap(self.trail));
        let data = |seq: u64, payload| Data {
            sqn: (seq as u32).wrapping_add(base),
            trail,
            payload,
        };
        if let PgmMessage::Odata { seq, .. } = m {
            self.high = self.high.max(seq);
        }
        let (body, opts) = match m {
            PgmMessage::Odata { seq, payload } => (Body::Odata(data(seq, payload)), Vec::new()),
            PgmMessage::Rdata { seq, payload } => (Body::Rdata(data(seq, payload)), Vec::new()),
            PgmMessage::Spm {
                spm_seq,
                trail,
                lead,
            } => {
                self.trail = trail;
                self.spm_next = spm_seq + 1;
                let body = Body::Spm {
                    sqn: spm_seq as u32,
                    trail: self.wrap(trail),
                    lead: self.wrap(lead).wrapping_sub(1),
                    path: self.source_nla,
                };
                (body, Vec::new())
            }
            PgmMessage::Nak { seq } => (Body::Nak(self.nak_body(seq)), Vec::new()),
            PgmMessage::Ncf { seq } => (Body::Ncf(self.nak_body(seq)), Vec::new()),
            PgmMessage::NakList { seqs } => {
                let s: Vec<u64> = seqs.iter().collect();
                let (b, o) = self.listed(&s)?;
                (Body::Nak(b), o)
            }
            PgmMessage::NcfList { seqs } => {
                let s: Vec<u64> = seqs.iter().collect();
                let (b, o) = self.listed(&s)?;
                (Body::Ncf(b), o)
            }
            _ => {
                self.untranslatable += 1;
                return None;
            }
        };
        let p = self.packet(body, opts);
        let upstream = p.body.upstream();
        match p.to_vec() {
            Ok(payload) => Some(Outgoing { payload, upstream }),
            Err(_) => {
                self.untranslatable += 1;
                None
            }
        }
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
        self.packet(body, vec![fin]).to_vec().ok()
    }

    /// An SPMR to the source.
    pub fn spmr(&self) -> Option<Vec<u8>> {
        self.packet(Body::Spmr, Vec::new()).to_vec().ok()
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
        let mut flags = 0;
        let mut list = Vec::new();
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
                list.push(self.seq_in(n.sqn)?);
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
            session: SESSION,
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
