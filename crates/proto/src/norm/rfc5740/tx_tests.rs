#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::norm::{Sender, SenderConfig};
use crate::{Agent, GroupId, NodeId, SenderAgent, Time};
use bytes::Bytes;
use rmcast_wire::rfc5740::{obj_flag, Form, RepairFlags, RepairItem, RepairRequest, Timestamp};

const SEG: usize = 1400;

fn file(size: usize) -> Vec<u8> {
    (0..size as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 9) as u8)
        .collect()
}

/// The agent and the shim for `data`, every segment (and filler) sent; the wire datagrams.
fn sent(data: &[u8]) -> (Sender, LibnormTx, Vec<Vec<u8>>) {
    let mut tr = Translator::new(0x1c47, 9, 0.5, 1_000.0, 16);
    tr.object_flags = obj_flag::FILE;
    let tx = LibnormTx::new(tr, data.len() as u64, SEG as u16, 64, 16).unwrap();
    let mut c = SenderConfig::new(NodeId(1), GroupId(0));
    c.session = 9;
    c.fec.k = tx.agent_k();
    c.receivers = vec![NodeId(4097)];
    let mut agent = Sender::new(c);
    let (mut tx, mut wire) = (tx, Vec::new());
    for (i, seg) in data.chunks(SEG).enumerate() {
        agent.send(Time::ZERO, Bytes::copy_from_slice(seg)).unwrap();
        if tx.filler_after(i as u64) {
            agent.send(Time::ZERO, Bytes::from_static(b"-")).unwrap();
        }
    }
    agent.close(Time::ZERO);
    agent.handle_timeout(Time::ZERO);
    while let Some(t) = agent.poll_transmit() {
        wire.extend(tx.outgoing(&t.payload));
    }
    (agent, tx, wire)
}

/// The NORM_DATA (block, ESI, payload) of the agent's first timeout that sends any.
fn first_data(agent: &mut Sender, tx: &mut LibnormTx) -> Vec<(u32, u16, Vec<u8>)> {
    let mut out = Vec::new();
    for _ in 0..100 {
        let Some(t) = agent.poll_timeout() else { break };
        agent.handle_timeout(t);
        while let Some(t) = agent.poll_transmit() {
            let Some(bytes) = tx.outgoing(&t.payload) else {
                continue;
            };
            if let Body::Data { id, payload, .. } = Message::decode(&bytes).unwrap().body {
                out.push((id.sbn(), id.esi(), payload.to_vec()));
            }
        }
        if !out.is_empty() {
            break;
        }
    }
    out
}

/// libnorm's receiver 4097's NACK with one RANGES request of `flags` over `items`.
fn nack(flags: RepairFlags, items: Vec<RepairItem>) -> Message<'static> {
    Message {
        sequence: 0,
        source_id: 4097,
        body: Body::Nack {
            server_id: 1,
            instance_id: 0x1c47,
            grtt_response: Timestamp::default(),
            requests: vec![RepairRequest {
                form: Form::Ranges,
                flags,
                items,
            }],
        },
        ext: Vec::new(),
    }
}

/// 130 segments: RFC 5052's blocks of 44, 43 and 43. The agent runs with k = 44 and a
/// filler after each block of 43, which never goes out; every NORM_DATA is a FILE segment at
/// the partition's place with libnorm's EXT_FTI; the FLUSH names the real last segment.
#[test]
fn sources_go_out_at_the_partitions_places_fillers_never() {
    let data = file(129 * SEG + 77);
    let (_, tx, wire) = sent(&data);
    assert_eq!(tx.agent_k(), 44);
    let fillers: Vec<u64> = (0..130).filter(|&i| tx.filler_after(i)).collect();
    assert_eq!(fillers, vec![86, 129]);
    let mut got = Vec::new();
    let mut flush = None;
    for dg in &wire {
        let m = Message::decode(dg).unwrap();
        match m.body {
            Body::Data {
                obj, id, payload, ..
            } => {
                assert_eq!(obj.flags, obj_flag::FILE);
                assert_eq!(
                    m.ext,
                    vec![Ext::Fti(Fti {
                        object_size: data.len() as u64,
                        segment_size: SEG as u16,
                        max_block_len: 64,
                        num_parity: 16,
                    })]
                );
                got.push((id.sbn(), id.esi(), payload.to_vec()));
            }
            Body::Cmd {
                cmd: Cmd::Flush { id, .. },
                ..
            } => flush = Some((id.sbn(), id.esi())),
            _ => {}
        }
    }
    let want: Vec<_> = data
        .chunks(SEG)
        .enumerate()
        .map(|(i, s)| {
            let (sbn, esi) = match i {
                0..44 => (0, i),
                44..87 => (1, i - 44),
                _ => (2, i - 87),
            };
            (sbn as u32, esi as u16, s.to_vec())
        })
        .collect();
    assert!(got == want, "the sources as sent differ from the partition");
    assert_eq!(flush, Some((2, 42)));
}

/// libnorm's receiver asks parity ESIs 43..44 of block 1 (of 43): the agent repairs, and
/// what goes out is RS8's parity 0 and 1 of the block at ESIs 43 and 44.
#[test]
fn a_parity_nack_brings_libnorms_parity() {
    let data = file(129 * SEG + 77);
    let (mut agent, mut tx, _) = sent(&data);
    let item = |esi| RepairItem {
        object: 0,
        id: PayloadId::Rs8 { sbn: 1, esi },
    };
    let nack = nack(
        RepairFlags {
            segment: true,
            ..RepairFlags::default()
        },
        vec![item(43), item(44)],
    );
    let dg = tx.incoming(&nack).expect("the agent's NACK");
    let now = Time::from_millis(10);
    agent.handle_packet(now, NodeId(4097), &dg);
    let parity = first_data(&mut agent, &mut tx);
    let block: Vec<&[u8]> = data.chunks(SEG).skip(44).take(43).collect();
    let want = Rs8::new(64, 16).unwrap().parity(&block).unwrap();
    assert_eq!(
        parity,
        vec![(1, 43, want[0].clone()), (1, 44, want[1].clone())]
    );
    assert_eq!(tx.parity_sent, 2);
}

/// A late joiner synced with NORM_SYNC_ALL asks RANGES/OBJECT 0xff01..0xffff (the objects
/// before ours): it is answered with SQUELCH naming object 0, block 0, as libnorm answers
/// it (without, libnorm's receiver never acknowledges the watermark).
#[test]
fn a_request_for_the_objects_before_ours_is_squelched() {
    let data = file(10 * SEG);
    let (mut agent, mut tx, _) = sent(&data);
    let item = |object| RepairItem {
        object,
        id: PayloadId::Rs8 { sbn: 0, esi: 0 },
    };
    let nack = nack(
        RepairFlags {
            object: true,
            ..RepairFlags::default()
        },
        vec![item(0xff01), item(0xffff)],
    );
    let dg = tx.incoming(&nack).expect("the agent's NACK");
    agent.handle_packet(Time::from_millis(10), NodeId(4097), &dg);
    let mut squelch = None;
    while let Some(t) = agent.poll_transmit() {
        let Some(bytes) = tx.outgoing(&t.payload) else {
            continue;
        };
        if let Body::Cmd {
            cmd: Cmd::Squelch { object, id, .. },
            ..
        } = Message::decode(&bytes).unwrap().body
        {
            squelch = Some((object, id.sbn(), id.esi()));
        }
    }
    assert_eq!(squelch, Some((0, 0, 0)));
}

/// A receiver that joined late asks libnorm's way for the blocks it never heard of: a BLOCK
/// request (RANGES over blocks 0 to 1, ESI 0). Every source segment of both blocks goes out
/// again at the partition's places, and nothing of block 2.
#[test]
fn a_block_request_brings_every_source_of_those_blocks() {
    // 129 segments + a bit: blocks of 44, 43 and 43 (RFC 5052's partition).
    let data = file(129 * SEG + 77);
    let (mut agent, mut tx, _) = sent(&data);
    let item = |sbn| RepairItem {
        object: 0,
        id: PayloadId::Rs8 { sbn, esi: 0 },
    };
    let nack = nack(
        RepairFlags {
            block: true,
            ..RepairFlags::default()
        },
        vec![item(0), item(1)],
    );
    let dg = tx.incoming(&nack).expect("the agent's NACK");
    agent.handle_packet(Time::from_millis(10), NodeId(4097), &dg);
    let mut again = first_data(&mut agent, &mut tx);
    let want: Vec<(u32, u16, Vec<u8>)> = (0..44)
        .map(|i| (0, i))
        .chain((0..43).map(|i| (1, i)))
        .zip(data.chunks(SEG))
        .map(|((sbn, esi), seg)| (sbn, esi, seg.to_vec()))
        .collect();
    again.sort();
    assert_eq!(again, want);
    assert_eq!(tx.sources_resent, 87);
    assert_eq!(tx.parity_sent, 0);
}

/// The header's sequence numbers run without a gap over what goes out, fillers (never sent)
/// left out: libnorm's receivers count a gap as a loss, which ends NORM-CC's slow start.
#[test]
fn sequence_numbers_skip_no_number_for_a_filler() {
    // Blocks of 44, 43 and 43: two fillers.
    let data = file(129 * SEG + 77);
    let (_, _, wire) = sent(&data);
    let seqs: Vec<u16> = wire
        .iter()
        .map(|b| Message::decode(b).unwrap().sequence)
        .collect();
    let first = seqs[0];
    let want: Vec<u16> = (0..seqs.len() as u16)
        .map(|i| first.wrapping_add(i))
        .collect();
    assert_eq!(seqs, want);
}

/// libnorm's receivers answer a CC probe by the NACK they have to send, its EXT_CC holding
/// their NORM-CC feedback (and hold their CC ACK back): the translator reads it as a CC ACK
/// for the agent. A NACK with no feedback in it (rate 0, the agent's own) gives none.
#[test]
fn a_nacks_cc_feedback_becomes_the_agents_cc_ack() {
    let (_, mut tx, _) = sent(&file(3 * SEG));
    let mut m = nack(
        RepairFlags {
            segment: true,
            ..RepairFlags::default()
        },
        Vec::new(),
    );
    let cc = |rate| Ext::Cc {
        cc_sequence: 21,
        flags: 0x08,
        rtt: 148,
        loss: 0,
        rate,
        loss_ex: 0,
    };
    m.ext = vec![cc(21_636)];
    let dg = tx.tr.nack_feedback(&m).expect("a CC ACK");
    let p = rmcast_wire::Packet::decode(&dg).unwrap();
    let rmcast_wire::Message::Norm(agent::Message::CcAck {
        server,
        cc_sequence,
        cc_flags,
        cc_rtt,
        cc_rate,
        ..
    }) = p.message
    else {
        panic!("not a CC ACK: {:?}", p.message);
    };
    assert_eq!(p.header.source, 4097);
    assert_eq!(
        (server, cc_sequence, cc_flags, cc_rtt, cc_rate),
        (1, 21, 0x08, 148, 21_636)
    );
    m.ext = vec![cc(0)];
    assert_eq!(tx.tr.nack_feedback(&m), None);
}

/// Without NORM-CC the agent's GRTT probe goes out with EXT_RATE at the fixed rate, as
/// libnorm's sender probes (its receivers answer no NORM_CMD(CC) without it), and
/// libnorm's ACK(CC) answer comes back as a plain CC ACK: the plain sender's GRTT.
#[test]
fn a_plain_probe_carries_the_rate_and_its_answer_is_a_plain_cc_ack() {
    let (_, mut tx, _) = sent(&file(3 * SEG));
    let probe = agent::Message::Cc {
        cc_sequence: 7,
        send_ts_us: 1_500_000,
        grtt: 0x80,
    };
    let env = rmcast_wire::Envelope {
        session: 9,
        source: 1,
        flags: 0,
    };
    let dg = rmcast_wire::Packet::to_vec(env, &rmcast_wire::Message::Norm(probe)).unwrap();
    let rates = |tx: &mut LibnormTx| {
        let bytes = tx.outgoing(&dg).unwrap();
        let m = Message::decode(&bytes).unwrap();
        assert!(matches!(
            m.body,
            Body::Cmd {
                cmd: Cmd::Cc { .. },
                ..
            }
        ));
        m.ext
            .iter()
            .filter_map(|e| match e {
                Ext::Rate { send_rate } => Some(*send_rate),
                _ => None,
            })
            .collect::<Vec<_>>()
    };
    assert_eq!(rates(&mut tx), Vec::<u16>::new(), "none unless asked");
    tx.probe_rate = Some(12_500_000);
    assert_eq!(rates(&mut tx), vec![quant::quantize_rate(12.5e6)]);

    let answer = Message {
        sequence: 0,
        source_id: 4097,
        body: Body::Ack {
            server_id: 1,
            instance_id: 0x1c47,
            ack_type: ack_type::CC,
            ack_id: 0,
            grtt_response: Timestamp {
                sec: 1,
                usec: 500_000,
            },
            payload: AckPayload::Raw(&[]),
        },
        ext: vec![Ext::Cc {
            cc_sequence: 7,
            flags: 0x08,
            rtt: 148,
            loss: 0,
            rate: 22_292,
            loss_ex: 0,
        }],
    };
    let bytes = tx.incoming(&answer).unwrap();
    let back = rmcast_wire::Packet::decode(&bytes).unwrap();
    let rmcast_wire::Message::Norm(agent::Message::Ack {
        ack_type,
        cc_sequence,
        grtt_response_us,
        ..
    }) = back.message
    else {
        panic!("not a plain ACK: {:?}", back.message);
    };
    assert_eq!(
        (ack_type, cc_sequence, grtt_response_us),
        (agent::AckType::Cc, 7, 1_500_000)
    );
}
