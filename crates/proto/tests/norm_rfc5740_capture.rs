//! Every message libnorm 1.5.9 sent in `crates/wire/tests/data/libnorm_cc_loss10.pcap`
//! (issue 62: a 100,000-byte file to two receivers, NORM-CC, 10 % loss) reads through
//! `rmcast_proto::norm::rfc5740::Translator` as the `norm` agent's message, keeping every
//! field the agent uses: a NORM_DATA's block, symbol, block length (RFC 5052's partition:
//! two blocks of 36), payload and repair flag; a FLUSH's position and GRTT (with acking nodes:
//! the watermark request and its nodes); a CMD(CC)'s probe and send time; a NACK's segment
//! requests as (first, count) runs; an ACK's type, watermark and probe. Only what the agent
//! has no message for is dropped: NORM_INFO, REPAIR_ADV and NACKs asking only for INFO or
//! whole objects (libnorm's late-join requests).

use rmcast_proto::norm::rfc5740::Translator;
use rmcast_wire::norm::{AckType, Message as Agent};
use rmcast_wire::rfc5740::{ack_type, AckPayload, Body, Cmd, Ext, Message};
use rmcast_wire::{Packet, FLAG_RETRANSMISSION};
use std::collections::BTreeMap;
use std::path::Path;

#[path = "../../wire/tests/support/pcap.rs"]
mod pcap;

fn us(t: rmcast_wire::rfc5740::Timestamp) -> u64 {
    u64::from(t.sec) * 1_000_000 + u64::from(t.usec)
}

/// Whether the agent's message `a` keeps what the agent uses of `m`.
fn agrees(m: &Message<'_>, a: &Agent<'_>, flags: u8) -> bool {
    match (&m.body, a) {
        (
            Body::Data {
                obj, id, payload, ..
            },
            Agent::Data {
                object,
                block,
                symbol,
                block_len,
                payload: p,
            },
        ) => {
            let repair = obj.flags & 1 != 0 || *symbol >= 36;
            (obj.object, id.sbn(), id.esi(), 36, *payload)
                == (*object, *block, *symbol, *block_len, *p)
                && repair == (flags & FLAG_RETRANSMISSION != 0)
        }
        (Body::Cmd { sender, cmd }, _) => cmd_agrees(sender.grtt, cmd, a),
        (
            Body::Nack {
                server_id,
                grtt_response,
                requests,
                ..
            },
            Agent::Nack {
                server,
                grtt_response_us,
                requests: r,
            },
        ) => {
            let want: Vec<_> = requests
                .iter()
                .filter(|q| q.flags.segment && !q.flags.object && !q.flags.info)
                .flat_map(|q| q.ranges())
                .map(|(f, l)| {
                    (
                        f.object,
                        f.id.sbn(),
                        f.id.esi(),
                        l.id.esi() - f.id.esi() + 1,
                    )
                })
                .collect();
            let got: Vec<_> = r
                .iter()
                .map(|q| (q.object, q.block, q.first, q.count))
                .collect();
            (*server_id, us(*grtt_response)) == (*server, *grtt_response_us) && want == got
        }
        (
            Body::Ack {
                server_id,
                ack_type: ty,
                grtt_response,
                payload,
                ..
            },
            Agent::Ack {
                server,
                grtt_response_us,
                ack_type: at,
                cc_sequence,
                object,
                block,
                symbol,
            },
        ) => {
            let probe = m.ext.iter().find_map(|e| match e {
                Ext::Cc { cc_sequence, .. } => Some(*cc_sequence),
                _ => None,
            });
            let mark_ok = match (payload, at) {
                (AckPayload::Flush { object: o, id }, AckType::Flush) => {
                    *ty == ack_type::FLUSH && (*o, id.sbn(), id.esi()) == (*object, *block, *symbol)
                }
                (_, AckType::Cc) => *ty == ack_type::CC,
                _ => false,
            };
            (*server_id, us(*grtt_response)) == (*server, *grtt_response_us)
                && probe == Some(*cc_sequence)
                && mark_ok
        }
        (
            Body::Ack {
                server_id,
                ack_type: ty,
                grtt_response,
                ..
            },
            Agent::CcAck {
                server,
                grtt_response_us,
                cc_sequence: s,
                cc_flags: f,
                cc_rtt: r,
                cc_loss: l,
                cc_loss_ex: x,
                cc_rate: c,
            },
        ) => {
            // NORM-CC feedback: EXT_CC's every field.
            let cc = m.ext.iter().find_map(|e| match *e {
                Ext::Cc {
                    cc_sequence,
                    flags,
                    rtt,
                    loss,
                    rate,
                    loss_ex,
                } => Some((cc_sequence, flags, rtt, loss, loss_ex, rate)),
                _ => None,
            });
            *ty == ack_type::CC
                && (*server_id, us(*grtt_response)) == (*server, *grtt_response_us)
                && cc == Some((*s, *f, *r, *l, *x, *c))
        }
        _ => false,
    }
}

fn cmd_agrees(grtt: u8, cmd: &Cmd<'_>, a: &Agent<'_>) -> bool {
    match (cmd, a) {
        (
            Cmd::Flush {
                object,
                id,
                acking_nodes,
            },
            Agent::Flush {
                object: o,
                block,
                symbol,
                grtt: g,
            },
        ) => {
            acking_nodes.is_empty()
                && (*object, id.sbn(), id.esi(), grtt) == (*o, *block, *symbol, *g)
        }
        (
            Cmd::Flush {
                object,
                id,
                acking_nodes,
            },
            Agent::AckReq {
                object: o,
                block,
                symbol,
                nodes,
            },
        ) => {
            (*object, id.sbn(), id.esi()) == (*o, *block, *symbol)
                && *acking_nodes == nodes.iter().collect::<Vec<_>>()
        }
        (
            Cmd::Squelch { object, id, .. },
            Agent::Squelch {
                object: o,
                block,
                symbol,
            },
        ) => (*object, id.sbn(), id.esi()) == (*o, *block, *symbol),
        (
            Cmd::Cc {
                cc_sequence,
                send_time,
                ..
            },
            Agent::Cc {
                cc_sequence: c,
                send_ts_us,
                grtt: g,
            },
        ) => (*cc_sequence, us(*send_time), grtt) == (*c, *send_ts_us, *g),
        (
            Cmd::Cc {
                cc_sequence,
                send_time,
                nodes,
                ..
            },
            Agent::CcRate {
                cc_sequence: c,
                send_ts_us,
                grtt: g,
                nodes: n,
                ..
            },
        ) => {
            let listed: Vec<_> = n.iter().map(|e| (e.node, e.flags, e.rtt, e.rate)).collect();
            let want: Vec<_> = nodes
                .iter()
                .map(|e| (e.node_id, e.flags, e.rtt, e.rate))
                .collect();
            (*cc_sequence, us(*send_time), grtt) == (*c, *send_ts_us, *g) && listed == want
        }
        _ => false,
    }
}

/// Why a message may have no agent message.
fn droppable(m: &Message<'_>) -> Option<&'static str> {
    match &m.body {
        Body::Info { .. } => Some("NORM_INFO"),
        Body::Cmd {
            cmd: Cmd::RepairAdv { .. },
            ..
        } => Some("REPAIR_ADV"),
        Body::Nack { requests, .. }
            if requests
                .iter()
                .all(|q| !q.flags.segment || q.flags.object || q.flags.info) =>
        {
            Some("NACK of INFO or objects")
        }
        _ => None,
    }
}

#[test]
fn every_libnorm_message_reads_as_the_agents_without_loss_of_what_it_uses() {
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../wire/tests/data/libnorm_cc_loss10.pcap");
    let datagrams = pcap::udp_payloads(&std::fs::read(path).expect("the capture"), 6003);
    assert_eq!(datagrams.len(), 282);
    let mut tr = Translator::new(0, 7, 0.5, 1_000.0, 16);
    let mut read = BTreeMap::<String, usize>::new();
    let mut dropped = BTreeMap::<&str, usize>::new();
    for d in &datagrams {
        let m = Message::decode(d).expect("the codec reads libnorm's");
        let Some(out) = tr.incoming(&m) else {
            let why = droppable(&m).unwrap_or_else(|| panic!("{m:?} has no agent message"));
            *dropped.entry(why).or_default() += 1;
            continue;
        };
        let p = Packet::decode(&out).expect("the agent's datagram decodes");
        let rmcast_wire::Message::Norm(a) = p.message else {
            panic!("not a norm message: {p:?}");
        };
        assert_eq!((p.header.session, p.header.source), (7, m.source_id));
        assert!(agrees(&m, &a, p.header.flags), "{m:?}\n  -> {a:?}");
        let kind = format!("{a:?}");
        let kind = kind.split([' ', '{']).next().unwrap_or("").to_string();
        *read.entry(kind).or_default() += 1;
    }
    eprintln!("read: {read:?}, dropped: {dropped:?}");
    assert_eq!(read.get("Data"), Some(&84), "every NORM_DATA");
    // libnorm ran NORM-CC: its probes carry EXT_RATE (CC RATE), its answers EXT_CC (CC ACK).
    for kind in ["AckReq", "CcRate", "Nack", "CcAck"] {
        assert!(read.contains_key(kind), "no {kind} in {read:?}");
    }
    assert_eq!(tr.untranslatable, dropped.values().sum::<usize>() as u64);
}
