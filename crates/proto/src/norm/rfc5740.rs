//! The translation between the `norm` agents' own messages ([`rmcast_wire::norm`], in
//! rmcast's header) and RFC 5740 messages ([`rmcast_wire::rfc5740`]), as
//! `docs/norm-rfc5740.md` ("The map") maps them; pure (no clock, no socket):
//!
//! * `source_id` is the agent's node id; sender messages (DATA, CMD) carry the sender's
//!   `instance_id`, its GRTT (the last FLUSH's or CC's, quantized by
//!   [`rmcast_wire::rfc5740::quant`]), `backoff` and `gsize`, and a `sequence` counted here;
//!   receivers send sequence 0, and NACK and ACK name the sender's instance (learned from its
//!   messages on a receiver's side);
//! * DATA is NORM_DATA with fec_id 5 (`sbn` = block, `esi` = symbol) and EXT_FTI, whose
//!   `max_block_len` is the agent's `block_len` of that block and `num_parity` the session's
//!   parity (libnorm's reading of the field). The payload goes as the agent made it: the
//!   agent's parity is [`crate::fec`]'s, not libnorm's ([`rmcast_wire::rfc5740::rs8`]).
//!   A repair sets NORM_FLAG_REPAIR. Read back, a block's length is RFC 5052's partition of
//!   EXT_FTI's object (libnorm's blocks) or, for an object of size 0 (ours: the agent's
//!   object has no size known in advance), `max_block_len`; a symbol from that length on is
//!   parity and reads as a repair (libnorm sets no REPAIR flag);
//! * FLUSH is NORM_CMD(FLUSH) with an empty acking list, ACK REQ one with its nodes (libnorm's
//!   watermark); SQUELCH is NORM_CMD(SQUELCH); CC is NORM_CMD(CC) with the send time as
//!   seconds and microseconds of the agent's µs clock;
//! * NACK is NORM_NACK with a request per agent request: ITEMS/SEGMENT for one symbol,
//!   RANGES/SEGMENT for more; ACK is NORM_ACK(CC) or NORM_ACK(FLUSH) with the watermark. Both
//!   carry EXT_CC (as libnorm's receivers send it) whose `cc_sequence` is the probe answered
//!   (ACK) or the last probe this translator passed (NACK), and which brings an ACK's
//!   `cc_sequence` back;
//! * what the agent has no message for (NORM_INFO, EOT, REPAIR_ADV, ACK_REQ, APPLICATION,
//!   REPORT, BLOCK/INFO/OBJECT repair requests) is dropped on reading, counted
//!   ([`Translator::untranslatable`]); NORM_INFO and a DATA's EXT_FTI are remembered per
//!   object, as a DATA without EXT_FTI needs them.

pub mod rx;
pub mod tx;

use crate::NodeId;
use rmcast_wire::norm::{self as agent, AckType, Nodes, Request, Requests};
use rmcast_wire::rfc5740::Form;
use rmcast_wire::rfc5740::{
    ack_type, fec_id, obj_flag, quant, AckPayload, Body, CcNode, Cmd, Ext, Fti, Message,
    ObjectFields, PayloadId, RepairFlags, RepairItem, RepairRequest, SenderFields, Timestamp,
};
use rmcast_wire::{Envelope, Packet, FLAG_RETRANSMISSION};
use std::collections::BTreeMap;

/// libnorm's back-off factor K (the 4 bits of every sender message).
pub const BACKOFF: u8 = 4;

/// One side's translation state.
#[derive(Debug, Clone)]
pub struct Translator {
    /// The sender's instance id (a receiver's side learns it from the sender's messages).
    pub instance_id: u16,
    /// The session id of the envelopes [`Translator::incoming`] writes.
    pub session: u32,
    /// The quantized group size every sender message carries.
    pub gsize: u8,
    /// The back-off factor K every sender message carries (4 bits).
    pub backoff: u8,
    /// NORM_DATA's object flags ([`obj_flag`]: 0 for a data object, FILE, STREAM).
    pub object_flags: u8,
    /// Parity symbols per block, EXT_FTI's last byte.
    pub num_parity: u8,
    /// The object's size and segment size EXT_FTI names (0, 0: the agent's open-ended
    /// object, whose DATA then names its own payload's length).
    pub object: (u64, u16),
    /// The sender's GRTT, quantized (the last FLUSH's or CC's).
    grtt: u8,
    /// The next sender message's sequence number.
    sequence: u16,
    /// The last probe's sequence number seen (NACKs' EXT_CC).
    probe: u16,
    /// EXT_FTI of each object seen.
    fti: BTreeMap<u16, Fti>,
    /// Messages with no counterpart on the other side (dropped).
    pub untranslatable: u64,
}

impl Translator {
    /// A translator for a sender of instance `instance_id` (on a receiver's side, any: it is
    /// learned), with GRTT `grtt` seconds until the agent names one, group size estimate
    /// `gsize` and `num_parity` parity symbols per block; libnorm's back-off, data objects.
    pub fn new(instance_id: u16, session: u32, grtt: f64, gsize: f64, num_parity: u8) -> Self {
        Translator {
            instance_id,
            session,
            gsize: quant::quantize_gsize(gsize),
            backoff: BACKOFF,
            object_flags: 0,
            num_parity,
            object: (0, 0),
            grtt: quant::quantize_rtt(grtt),
            sequence: 0,
            probe: 0,
            fti: BTreeMap::new(),
            untranslatable: 0,
        }
    }

    fn sender(&self) -> SenderFields {
        SenderFields {
            instance_id: self.instance_id,
            grtt: self.grtt,
            backoff: self.backoff,
            gsize: self.gsize,
        }
    }

    /// The agent's datagram as RFC 5740 bytes (`None`: not a `norm` datagram or not
    /// encodable, counted).
    pub fn outgoing(&mut self, datagram: &[u8]) -> Option<Vec<u8>> {
        let (envelope, m) = self.agent_message(datagram)?;
        let out = self
            .message_of(envelope, m)
            .and_then(|msg| msg.to_vec().ok());
        if out.is_none() {
            self.untranslatable += 1;
        }
        out
    }

    /// An agent's datagram as its envelope and `norm` message (`None`: not one, counted).
    pub fn agent_message<'a>(
        &mut self,
        datagram: &'a [u8],
    ) -> Option<(Envelope, agent::Message<'a>)> {
        let Ok(Packet {
            header: h,
            message: rmcast_wire::Message::Norm(m),
        }) = Packet::decode(datagram)
        else {
            self.untranslatable += 1;
            return None;
        };
        let env = Envelope {
            session: h.session,
            source: h.source,
            flags: h.flags,
        };
        Some((env, m))
    }

    /// The RFC 5740 message of an agent's message (`None`: an id out of fec_id 5's range).
    pub fn message_of<'a>(&mut self, env: Envelope, m: agent::Message<'a>) -> Option<Message<'a>> {
        let receiver = matches!(
            m,
            agent::Message::Nack { .. } | agent::Message::Ack { .. } | agent::Message::CcAck { .. }
        );
        let (body, ext) = self.body_of(env, m)?;
        let sequence = if receiver {
            0
        } else {
            let s = self.sequence;
            self.sequence = s.wrapping_add(1);
            s
        };
        Some(Message {
            sequence,
            source_id: env.source,
            body,
            ext,
        })
    }

    /// EXT_CC as the agent's receivers send it: the probe, no NORM-CC figures.
    fn ext_cc(cc_sequence: u16) -> Ext<'static> {
        Ext::Cc {
            cc_sequence,
            flags: 0,
            rtt: 0,
            loss: 0,
            rate: 0,
            loss_ex: 0,
        }
    }

    fn cmd<'a>(&self, cmd: Cmd<'a>) -> (Body<'a>, Vec<Ext<'a>>) {
        let sender = self.sender();
        (Body::Cmd { sender, cmd }, Vec::new())
    }

    /// The RFC 5740 body and extensions of an agent's message.
    fn body_of<'a>(
        &mut self,
        env: Envelope,
        m: agent::Message<'a>,
    ) -> Option<(Body<'a>, Vec<Ext<'a>>)> {
        Some(match m {
            agent::Message::Data {
                object,
                block,
                symbol,
                block_len,
                payload,
            } => self.data_out(env, object, rs8(block, symbol)?, block_len, payload)?,
            agent::Message::Flush {
                object,
                block,
                symbol,
                grtt,
            } => {
                self.grtt = grtt;
                self.cmd(Cmd::Flush {
                    object,
                    id: rs8(block, symbol)?,
                    acking_nodes: Vec::new(),
                })
            }
            agent::Message::AckReq {
                object,
                block,
                symbol,
                nodes,
            } => self.cmd(Cmd::Flush {
                object,
                id: rs8(block, symbol)?,
                acking_nodes: nodes.iter().collect(),
            }),
            agent::Message::Squelch {
                object,
                block,
                symbol,
            } => self.cmd(Cmd::Squelch {
                object,
                id: rs8(block, symbol)?,
                invalid_objects: Vec::new(),
            }),
            agent::Message::Cc {
                cc_sequence,
                send_ts_us,
                grtt,
            } => {
                self.grtt = grtt;
                self.probe = cc_sequence;
                self.cmd(Cmd::Cc {
                    syn: false,
                    cc_sequence,
                    send_time: timestamp(send_ts_us)?,
                    nodes: Vec::new(),
                })
            }
            agent::Message::Nack {
                server,
                grtt_response_us,
                requests,
            } => {
                let requests = requests.iter().map(request_out).collect::<Option<_>>()?;
                let body = Body::Nack {
                    server_id: server,
                    instance_id: self.instance_id,
                    grtt_response: timestamp(grtt_response_us)?,
                    requests,
                };
                (body, vec![Self::ext_cc(self.probe)])
            }
            agent::Message::Ack {
                server,
                grtt_response_us,
                ack_type,
                cc_sequence,
                object,
                block,
                symbol,
            } => {
                let (ty, payload) = match ack_type {
                    AckType::Cc => (ack_type::CC, AckPayload::Raw(&[])),
                    AckType::Flush => {
                        let id = rs8(block, symbol)?;
                        (ack_type::FLUSH, AckPayload::Flush { object, id })
                    }
                };
                let body = Body::Ack {
                    server_id: server,
                    instance_id: self.instance_id,
                    ack_type: ty,
                    ack_id: 0,
                    grtt_response: timestamp(grtt_response_us)?,
                    payload,
                };
                (body, vec![Self::ext_cc(cc_sequence)])
            }
            m @ (agent::Message::CcRate { .. } | agent::Message::CcAck { .. }) => self.cc_out(m)?,
        })
    }

    /// NORM-CC's messages: the probe with EXT_RATE and its CC node list; the feedback in
    /// EXT_CC (`None`: not one of them, or a time out of range).
    fn cc_out<'a>(&mut self, m: agent::Message<'a>) -> Option<(Body<'a>, Vec<Ext<'a>>)> {
        Some(match m {
            agent::Message::CcRate {
                cc_sequence,
                send_ts_us,
                grtt,
                rate,
                nodes,
            } => {
                self.grtt = grtt;
                self.probe = cc_sequence;
                let nodes = nodes.iter().map(|n| CcNode {
                    node_id: n.node,
                    flags: n.flags,
                    rtt: n.rtt,
                    rate: n.rate,
                });
                let (body, _) = self.cmd(Cmd::Cc {
                    syn: false,
                    cc_sequence,
                    send_time: timestamp(send_ts_us)?,
                    nodes: nodes.collect(),
                });
                (body, vec![Ext::Rate { send_rate: rate }])
            }
            agent::Message::CcAck {
                server,
                grtt_response_us,
                cc_sequence,
                cc_flags,
                cc_rtt,
                cc_loss,
                cc_loss_ex,
                cc_rate,
            } => {
                let body = Body::Ack {
                    server_id: server,
                    instance_id: self.instance_id,
                    ack_type: ack_type::CC,
                    ack_id: 0,
                    grtt_response: timestamp(grtt_response_us)?,
                    payload: AckPayload::Raw(&[]),
                };
                let cc = Ext::Cc {
                    cc_sequence,
                    flags: cc_flags,
                    rtt: cc_rtt,
                    loss: cc_loss,
                    rate: cc_rate,
                    loss_ex: cc_loss_ex,
                };
                (body, vec![cc])
            }
            _ => return None,
        })
    }

    /// NORM_DATA and its EXT_FTI.
    fn data_out<'a>(
        &mut self,
        env: Envelope,
        object: u16,
        id: PayloadId,
        block_len: u16,
        payload: &'a [u8],
    ) -> Option<(Body<'a>, Vec<Ext<'a>>)> {
        let repair = env.flags & FLAG_RETRANSMISSION != 0;
        let obj = ObjectFields {
            flags: self.object_flags | if repair { obj_flag::REPAIR } else { 0 },
            fec_id: fec_id::RS8,
            object,
        };
        let (object_size, segment_size) = match self.object {
            (0, _) | (_, 0) => (0, u16::try_from(payload.len()).ok()?),
            o => o,
        };
        let fti = Fti {
            object_size,
            segment_size,
            max_block_len: u8::try_from(block_len).ok()?,
            num_parity: self.num_parity,
        };
        let sender = self.sender();
        let body = Body::Data {
            sender,
            obj,
            id,
            payload,
        };
        Some((body, vec![Ext::Fti(fti)]))
    }

    /// The agent's datagram for an RFC 5740 message (`None`: one the agent has no message
    /// for, counted). Sender messages teach a receiver's side the sender's instance.
    pub fn incoming(&mut self, m: &Message<'_>) -> Option<Vec<u8>> {
        let from = NodeId(m.source_id);
        let out = self.incoming_body(m).and_then(|(msg, flags)| {
            let mut raw = Vec::new();
            let (env, msg) = (self.envelope(from, flags), msg.build(&mut raw)?);
            Packet::to_vec(env, &rmcast_wire::Message::Norm(msg)).ok()
        });
        if out.is_none() {
            self.untranslatable += 1;
        }
        out
    }

    /// The agent's CC ACK for the NORM-CC feedback a NACK carries in EXT_CC (`None`: not a
    /// NACK, or no feedback in it). libnorm's receivers answer a CC probe by a NACK when they
    /// have one to send, and then hold their CC ACK back: a NORM-CC sender must read both.
    pub fn nack_feedback(&mut self, m: &Message<'_>) -> Option<Vec<u8>> {
        let Body::Nack {
            server_id,
            grtt_response,
            ..
        } = &m.body
        else {
            return None;
        };
        let ack = cc_ack(*server_id, *grtt_response, &m.ext)?;
        let env = self.envelope(NodeId(m.source_id), 0);
        Packet::to_vec(env, &rmcast_wire::Message::Norm(ack)).ok()
    }

    fn envelope(&self, from: NodeId, flags: u8) -> Envelope {
        Envelope {
            session: self.session,
            source: from.0,
            flags,
        }
    }

    fn incoming_body<'a>(&mut self, m: &Message<'a>) -> Option<(Owned<'a>, u8)> {
        if let Body::Info { sender, .. } | Body::Data { sender, .. } | Body::Cmd { sender, .. } =
            &m.body
        {
            self.instance_id = sender.instance_id;
        }
        let fti = m.ext.iter().find_map(|e| match e {
            Ext::Fti(f) => Some(*f),
            _ => None,
        });
        Some(match &m.body {
            Body::Info { obj, .. } => {
                if let Some(f) = fti {
                    self.fti.insert(obj.object, f);
                }
                return None;
            }
            Body::Data {
                obj, id, payload, ..
            } => {
                if let Some(f) = fti {
                    self.fti.insert(obj.object, f);
                }
                let f = self.fti.get(&obj.object)?;
                let (block, symbol) = (id.sbn(), id.esi());
                let block_len = block_len_of(f, block)?;
                let repair = obj.flags & obj_flag::REPAIR != 0 || symbol >= block_len;
                let flags = if repair { FLAG_RETRANSMISSION } else { 0 };
                let data = agent::Message::Data {
                    object: obj.object,
                    block,
                    symbol,
                    block_len,
                    payload,
                };
                (Owned::Ready(data), flags)
            }
            Body::Cmd {
                sender,
                cmd:
                    Cmd::Cc {
                        cc_sequence,
                        send_time,
                        nodes,
                        ..
                    },
            } if ext_rate(&m.ext).is_some() => {
                self.probe = *cc_sequence;
                let nodes = nodes.iter().map(|n| agent::CcNode {
                    node: n.node_id,
                    flags: n.flags,
                    rtt: n.rtt,
                    rate: n.rate,
                });
                let probe = Owned::CcRate {
                    cc_sequence: *cc_sequence,
                    send_ts_us: micros(*send_time),
                    grtt: sender.grtt,
                    rate: ext_rate(&m.ext)?,
                    nodes: nodes.collect(),
                };
                (probe, 0)
            }
            Body::Ack {
                server_id,
                ack_type: ack_type::CC,
                grtt_response,
                ..
            } if cc_feedback(&m.ext).is_some() => {
                (Owned::Ready(cc_ack(*server_id, *grtt_response, &m.ext)?), 0)
            }
            Body::Cmd { sender, cmd } => (self.cmd_in(sender.grtt, cmd)?, 0),
            Body::Nack {
                server_id,
                grtt_response,
                requests,
                ..
            } => {
                let mut list = Vec::new();
                for r in requests {
                    if !r.flags.segment || r.flags.block || r.flags.info || r.flags.object {
                        continue;
                    }
                    list.extend(r.ranges().into_iter().filter_map(request_in));
                }
                if list.is_empty() {
                    return None;
                }
                let nack = Owned::Nack {
                    server: *server_id,
                    grtt_response_us: micros(*grtt_response),
                    requests: list,
                };
                (nack, 0)
            }
            Body::Ack {
                server_id,
                ack_type: ty,
                grtt_response,
                payload,
                ..
            } => {
                let cc_sequence = m
                    .ext
                    .iter()
                    .find_map(|e| match e {
                        Ext::Cc { cc_sequence, .. } => Some(*cc_sequence),
                        _ => None,
                    })
                    .unwrap_or(0);
                let (ack_type, (object, block, symbol)) = match (*ty, payload) {
                    (ack_type::CC, _) => (AckType::Cc, (0, 0, 0)),
                    (ack_type::FLUSH, AckPayload::Flush { object, id }) => {
                        (AckType::Flush, (*object, id.sbn(), id.esi()))
                    }
                    _ => return None,
                };
                let ack = agent::Message::Ack {
                    server: *server_id,
                    grtt_response_us: micros(*grtt_response),
                    ack_type,
                    cc_sequence,
                    object,
                    block,
                    symbol,
                };
                (Owned::Ready(ack), 0)
            }
            Body::Report(_) => return None,
        })
    }

    /// A NORM_CMD as the agent's message (`None`: a flavor it has none for).
    fn cmd_in<'a>(&mut self, grtt: u8, cmd: &Cmd<'a>) -> Option<Owned<'a>> {
        Some(match cmd {
            Cmd::Flush {
                object,
                id,
                acking_nodes,
            } if acking_nodes.is_empty() => Owned::Ready(agent::Message::Flush {
                object: *object,
                block: id.sbn(),
                symbol: id.esi(),
                grtt,
            }),
            Cmd::Flush {
                object,
                id,
                acking_nodes,
            } => Owned::AckReq {
                object: *object,
                block: id.sbn(),
                symbol: id.esi(),
                nodes: acking_nodes.clone(),
            },
            Cmd::Squelch { object, id, .. } => Owned::Ready(agent::Message::Squelch {
                object: *object,
                block: id.sbn(),
                symbol: id.esi(),
            }),
            Cmd::Cc {
                cc_sequence,
                send_time,
                ..
            } => {
                self.probe = *cc_sequence;
                Owned::Ready(agent::Message::Cc {
                    cc_sequence: *cc_sequence,
                    send_ts_us: micros(*send_time),
                    grtt,
                })
            }
            Cmd::Eot | Cmd::RepairAdv { .. } | Cmd::AckReq { .. } | Cmd::Application { .. } => {
                return None
            }
        })
    }
}

/// An agent message read from RFC 5740, with the lists it owns until encoded.
enum Owned<'a> {
    Ready(agent::Message<'a>),
    AckReq {
        object: u16,
        block: u32,
        symbol: u16,
        nodes: Vec<u32>,
    },
    Nack {
        server: u32,
        grtt_response_us: u64,
        requests: Vec<Request>,
    },
    CcRate {
        cc_sequence: u16,
        send_ts_us: u64,
        grtt: u8,
        rate: u16,
        nodes: Vec<agent::CcNode>,
    },
}

/// NORM-CC's EXT_RATE: the sender's quantized rate.
fn ext_rate(ext: &[Ext<'_>]) -> Option<u16> {
    ext.iter().find_map(|e| match e {
        Ext::Rate { send_rate } => Some(*send_rate),
        _ => None,
    })
}

/// NORM-CC feedback in EXT_CC (a rate of 0: none, as the agent's plain answers carry):
/// sequence, flags, RTT, loss, rate and libnorm's low half of the loss.
fn cc_feedback(ext: &[Ext<'_>]) -> Option<(u16, u8, u8, u16, u16, u16)> {
    ext.iter().find_map(|e| match *e {
        Ext::Cc {
            cc_sequence,
            flags,
            rtt,
            loss,
            rate,
            loss_ex,
        } if rate != 0 => Some((cc_sequence, flags, rtt, loss, rate, loss_ex)),
        _ => None,
    })
}

/// The agent's CC ACK to `server` for the NORM-CC feedback in `ext` (`None`: none).
fn cc_ack<'b>(
    server: u32,
    grtt_response: Timestamp,
    ext: &[Ext<'_>],
) -> Option<agent::Message<'b>> {
    let (cc_sequence, cc_flags, cc_rtt, cc_loss, cc_rate, cc_loss_ex) = cc_feedback(ext)?;
    Some(agent::Message::CcAck {
        server,
        grtt_response_us: micros(grtt_response),
        cc_sequence,
        cc_flags,
        cc_rtt,
        cc_loss,
        cc_loss_ex,
        cc_rate,
    })
}

impl<'a> Owned<'a> {
    /// The message, its lists encoded into `raw`.
    fn build<'b>(self, raw: &'b mut Vec<u8>) -> Option<agent::Message<'b>>
    where
        'a: 'b,
    {
        Some(match self {
            Owned::Ready(m) => m,
            Owned::AckReq {
                object,
                block,
                symbol,
                mut nodes,
            } => {
                nodes.truncate(agent::MAX_ACKING);
                Nodes::encode(nodes, raw);
                agent::Message::AckReq {
                    object,
                    block,
                    symbol,
                    nodes: Nodes::from_raw(raw)?,
                }
            }
            Owned::Nack {
                server,
                grtt_response_us,
                mut requests,
            } => {
                requests.truncate(agent::MAX_REQUESTS);
                Requests::encode(requests, raw);
                agent::Message::Nack {
                    server,
                    grtt_response_us,
                    requests: Requests::from_raw(raw)?,
                }
            }
            Owned::CcRate {
                cc_sequence,
                send_ts_us,
                grtt,
                rate,
                mut nodes,
            } => {
                nodes.truncate(agent::MAX_CC_NODES);
                agent::CcNodes::encode(nodes, raw);
                agent::Message::CcRate {
                    cc_sequence,
                    send_ts_us,
                    grtt,
                    rate,
                    nodes: agent::CcNodes::from_raw(raw)?,
                }
            }
        })
    }
}

/// fec_id 5's payload id of `block`, `symbol` (`None`: over 24 or 8 bits).
fn rs8(block: u32, symbol: u16) -> Option<PayloadId> {
    (block <= 0x00ff_ffff).then_some(())?;
    Some(PayloadId::Rs8 {
        sbn: block,
        esi: u8::try_from(symbol).ok()?,
    })
}

/// A µs clock reading as seconds and microseconds, the seconds mod 2^32 as `gettimeofday`'s
/// 32 bits of them are (the agent's clock starts at 0: 136 years before they wrap).
fn timestamp(us: u64) -> Option<Timestamp> {
    Some(Timestamp {
        sec: (us / 1_000_000) as u32,
        usec: (us % 1_000_000) as u32,
    })
}

/// A timestamp as µs.
fn micros(t: Timestamp) -> u64 {
    u64::from(t.sec) * 1_000_000 + u64::from(t.usec)
}

/// An agent's repair request: ITEMS for one symbol, RANGES for more.
fn request_out(r: Request) -> Option<RepairRequest> {
    let item = |symbol| {
        Some(RepairItem {
            object: r.object,
            id: rs8(r.block, symbol)?,
        })
    };
    let flags = RepairFlags {
        segment: true,
        ..RepairFlags::default()
    };
    let last = r.first.checked_add(r.count.checked_sub(1)?)?;
    Some(if r.count == 1 {
        RepairRequest {
            form: Form::Items,
            flags,
            items: vec![item(r.first)?],
        }
    } else {
        RepairRequest {
            form: Form::Ranges,
            flags,
            items: vec![item(r.first)?, item(last)?],
        }
    })
}

/// A (first, last) pair of symbols as the agent's request (`None`: across blocks or
/// objects, or backwards).
fn request_in((a, b): (RepairItem, RepairItem)) -> Option<Request> {
    if a.object != b.object || a.id.sbn() != b.id.sbn() {
        return None;
    }
    let (first, last) = (a.id.esi(), b.id.esi());
    Some(Request {
        object: a.object,
        block: a.id.sbn(),
        first,
        count: last.checked_sub(first)?.checked_add(1)?,
    })
}

/// The source length of block `sbn` of an object EXT_FTI describes: RFC 5052's partition
/// (libnorm's `NormObject::Open`) of a sized object, `max_block_len` for one of size 0.
pub fn block_len_of(f: &Fti, sbn: u32) -> Option<u16> {
    let k = u64::from(f.max_block_len);
    if f.object_size == 0 || f.segment_size == 0 {
        return (k > 0).then_some(u16::from(f.max_block_len));
    }
    let segments = f.object_size.div_ceil(u64::from(f.segment_size));
    let blocks = segments.div_ceil(k.max(1));
    let sbn = u64::from(sbn);
    if k == 0 || sbn >= blocks {
        return None;
    }
    let large = segments.div_ceil(blocks);
    let small = segments / blocks;
    let n_large = segments - small * blocks;
    u16::try_from(if sbn < n_large { large } else { small }).ok()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use rmcast_wire::norm::samples;

    fn translator(session: u32) -> Translator {
        Translator::new(0x1c47, session, 0.5, 1_000.0, 16)
    }

    fn request(object: u16, block: u32, first: u16, count: u16) -> Request {
        Request {
            object,
            block,
            first,
            count,
        }
    }

    #[test]
    fn every_agent_message_comes_back_from_its_rfc5740_bytes() {
        for s in samples() {
            let dg = s.datagram().expect("a sample encodes");
            let mut tx = translator(s.env.session);
            let bytes = tx.outgoing(&dg).expect("a sample translates");
            let m = Message::decode(&bytes).expect("the codec reads what it wrote");
            let mut rx = Translator::new(0, s.env.session, 0.5, 1_000.0, 16);
            let back = rx.incoming(&m).expect("read back");
            let want = match s.message {
                // The sample's send time is past 2^32 s: its seconds come back mod 2^32.
                agent::Message::Cc {
                    cc_sequence,
                    send_ts_us,
                    grtt,
                } => encode(
                    s.env,
                    agent::Message::Cc {
                        cc_sequence,
                        send_ts_us: send_ts_us % (1_000_000 << 32),
                        grtt,
                    },
                ),
                agent::Message::CcRate {
                    cc_sequence,
                    send_ts_us,
                    grtt,
                    rate,
                    nodes,
                } => encode(
                    s.env,
                    agent::Message::CcRate {
                        cc_sequence,
                        send_ts_us: send_ts_us % (1_000_000 << 32),
                        grtt,
                        rate,
                        nodes,
                    },
                ),
                _ => dg,
            };
            assert_eq!(back, want, "{:?} -> {m:?}", s.message);
            assert_eq!((tx.untranslatable, rx.untranslatable), (0, 0));
            if !matches!(m.body, Body::Nack { .. } | Body::Ack { .. }) {
                assert_eq!(rx.instance_id, 0x1c47, "the instance is learned");
            }
        }
    }

    #[test]
    fn sender_messages_are_numbered_receivers_send_zero() {
        let mut tx = translator(1);
        let mut seqs = Vec::new();
        for s in samples() {
            let bytes = tx.outgoing(&s.datagram().unwrap()).unwrap();
            let m = Message::decode(&bytes).unwrap();
            seqs.push((m.msg_type(), m.sequence));
        }
        let sender: Vec<u16> = seqs.iter().filter(|s| s.0 < 4).map(|s| s.1).collect();
        assert_eq!(sender, (0..sender.len() as u16).collect::<Vec<_>>());
        assert!(seqs.iter().filter(|s| s.0 >= 4).all(|s| s.1 == 0));
        assert_eq!(seqs.len(), 10);
    }

    fn encode(env: Envelope, m: agent::Message<'_>) -> Vec<u8> {
        Packet::to_vec(env, &rmcast_wire::Message::Norm(m)).unwrap()
    }

    #[test]
    fn data_is_fec_id_5_with_fti_and_the_flush_grtt() {
        let env = Envelope {
            session: 9,
            source: 1,
            flags: FLAG_RETRANSMISSION,
        };
        let mut tx = translator(9);
        let flush = agent::Message::Flush {
            object: 0,
            block: 3,
            symbol: 7,
            grtt: 0x6b,
        };
        tx.outgoing(&encode(env, flush)).unwrap();
        let data = agent::Message::Data {
            object: 0,
            block: 0x12_3456,
            symbol: 40,
            block_len: 36,
            payload: b"parity",
        };
        let bytes = tx.outgoing(&encode(env, data)).unwrap();
        let m = Message::decode(&bytes).unwrap();
        let Body::Data {
            sender, obj, id, ..
        } = m.body
        else {
            panic!("not NORM_DATA: {m:?}");
        };
        assert_eq!((sender.grtt, sender.backoff, sender.gsize), (0x6b, 4, 2));
        assert_eq!((obj.flags, obj.fec_id), (obj_flag::REPAIR, 5));
        assert_eq!(
            id,
            PayloadId::Rs8 {
                sbn: 0x12_3456,
                esi: 40
            }
        );
        let fti = Fti {
            object_size: 0,
            segment_size: 6,
            max_block_len: 36,
            num_parity: 16,
        };
        assert_eq!(m.ext, vec![Ext::Fti(fti)]);
    }

    #[test]
    fn nack_requests_are_items_for_one_ranges_for_more() {
        let r = request_out(request(2, 5, 36, 7)).unwrap();
        assert_eq!((r.form, r.flags.bits()), (Form::Ranges, 1));
        let esis: Vec<_> = r
            .items
            .iter()
            .map(|i| (i.object, i.id.sbn(), i.id.esi()))
            .collect();
        assert_eq!(esis, vec![(2, 5, 36), (2, 5, 42)]);
        let r = request_out(request(2, 5, 36, 1)).unwrap();
        assert_eq!((r.form, r.items.len()), (Form::Items, 1));
        assert_eq!(request_out(request(2, 5, 36, 0)), None);
        assert_eq!(request_out(request(2, 5, 250, 7)), None, "ESI over 8 bits");
        assert_eq!(
            request_out(request(2, 1 << 24, 0, 1)),
            None,
            "SBN over 24 bits"
        );
    }

    #[test]
    fn ids_out_of_fec_id_5_are_not_sent_but_counted() {
        let env = Envelope::default();
        let mut tx = translator(0);
        let data = agent::Message::Data {
            object: 0,
            block: 0,
            symbol: 256,
            block_len: 200,
            payload: b"x",
        };
        assert_eq!(tx.outgoing(&encode(env, data)), None);
        assert_eq!(tx.outgoing(b"not a datagram"), None);
        assert_eq!(tx.untranslatable, 2);
    }

    #[test]
    fn blocks_are_rfc5052s_partition_of_a_sized_object() {
        let fti = |object_size, max_block_len| Fti {
            object_size,
            segment_size: 1400,
            max_block_len,
            num_parity: 16,
        };
        // libnorm's capture: 100,000 bytes, 72 segments, k = 64: two blocks of 36.
        assert_eq!(block_len_of(&fti(100_000, 64), 0), Some(36));
        assert_eq!(block_len_of(&fti(100_000, 64), 1), Some(36));
        assert_eq!(block_len_of(&fti(100_000, 64), 2), None);
        // 130 segments, k = 64: 3 blocks, 44 + 43 + 43.
        let f = fti(130 * 1400, 64);
        let lens: Vec<_> = (0..3).map(|b| block_len_of(&f, b).unwrap()).collect();
        assert_eq!(lens, vec![44, 43, 43]);
        // The agent's open-ended object: max_block_len is the block's own length.
        assert_eq!(block_len_of(&fti(0, 7), 99), Some(7));
        assert_eq!(block_len_of(&fti(0, 0), 0), None);
    }
}
