#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::norm::{Receiver, ReceiverConfig};
use crate::rng::AgentRng;
use crate::{Agent, Event, NodeId, Time};
use rmcast_wire::rfc5740::{obj_flag, ObjectFields, SenderFields};

const SENDER: u32 = 1;
const ME: u32 = 4097;
/// libnorm's object id (not 0: the shim maps it).
const OBJECT: u16 = 7;

fn fti(size: u64) -> Fti {
    Fti {
        object_size: size,
        segment_size: 1400,
        max_block_len: 64,
        num_parity: 16,
    }
}

fn sender() -> SenderFields {
    SenderFields {
        instance_id: 0x1c47,
        grtt: rmcast_wire::rfc5740::quant::quantize_rtt(0.01),
        backoff: 4,
        gsize: 2,
    }
}

/// NORM_DATA as libnorm sends it (FILE, EXT_FTI on every one).
fn data_msg<'a>(size: u64, sbn: u32, esi: u16, payload: &'a [u8]) -> Message<'a> {
    Message {
        sequence: 0,
        source_id: SENDER,
        body: Body::Data {
            sender: sender(),
            obj: ObjectFields {
                flags: obj_flag::FILE | obj_flag::INFO,
                fec_id: 5,
                object: OBJECT,
            },
            id: PayloadId::Rs8 {
                sbn,
                esi: esi as u8,
            },
            payload,
        },
        ext: vec![Ext::Fti(fti(size))],
    }
}

/// libnorm's watermark: FLUSH at the last segment, naming us.
fn watermark(sbn: u32, esi: u16) -> Message<'static> {
    Message {
        sequence: 0,
        source_id: SENDER,
        body: Body::Cmd {
            sender: sender(),
            cmd: Cmd::Flush {
                object: OBJECT,
                id: PayloadId::Rs8 {
                    sbn,
                    esi: esi as u8,
                },
                acking_nodes: vec![ME],
            },
        },
        ext: Vec::new(),
    }
}

struct Rig {
    shim: LibnormRx,
    agent: Receiver,
    now: Time,
    got: Vec<u8>,
    sent: Vec<Message<'static>>,
}

impl Rig {
    fn new() -> Self {
        let mut c = ReceiverConfig::new(NodeId(ME), NodeId(SENDER));
        c.session = 5;
        Rig {
            shim: LibnormRx::new(Translator::new(0, 5, 0.5, 1_000.0, 16)),
            agent: Receiver::new(c, AgentRng::from_seed(3)),
            now: Time::ZERO,
            got: Vec::new(),
            sent: Vec::new(),
        }
    }

    fn feed(&mut self, m: &Message<'_>) {
        for dg in self.shim.incoming(m) {
            self.agent.handle_packet(self.now, NodeId(SENDER), &dg);
        }
        self.drain();
    }

    fn drain(&mut self) {
        while let Some(t) = self.agent.poll_transmit() {
            if let Some(bytes) = self.shim.outgoing(&t.payload) {
                let m = Message::decode(&bytes).expect("libnorm bytes");
                self.sent.push(owned(m));
            }
        }
        while let Some(e) = self.agent.poll_event() {
            if let Event::Delivered { data, .. } = e {
                self.got.extend_from_slice(&data);
            }
        }
    }

    /// Run the agent's timers for `secs`.
    fn run(&mut self, secs: u64) {
        let end = self.now + core::time::Duration::from_secs(secs);
        while let Some(t) = self.agent.poll_timeout().filter(|t| *t <= end) {
            self.now = t.max(self.now);
            self.agent.handle_timeout(self.now);
            self.drain();
        }
        self.now = end;
    }
}

/// A decoded message with its borrowed parts dropped (NACK and ACK own theirs).
fn owned(m: Message<'_>) -> Message<'static> {
    let body = match m.body {
        Body::Nack {
            server_id,
            instance_id,
            grtt_response,
            requests,
        } => Body::Nack {
            server_id,
            instance_id,
            grtt_response,
            requests,
        },
        Body::Ack {
            server_id,
            instance_id,
            ack_type,
            ack_id,
            grtt_response,
            payload: AckPayload::Flush { object, id },
        } => Body::Ack {
            server_id,
            instance_id,
            ack_type,
            ack_id,
            grtt_response,
            payload: AckPayload::Flush { object, id },
        },
        _ => Body::Report(&[]),
    };
    Message {
        sequence: m.sequence,
        source_id: m.source_id,
        body,
        ext: Vec::new(),
    }
}

fn file(size: usize) -> Vec<u8> {
    (0..size as u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect()
}

/// A block's source segments and its parity.
type SourcesAndParity<'a> = (Vec<&'a [u8]>, Vec<Vec<u8>>);

/// The segments of `data` as libnorm cuts them: (sbn, esi, bytes), and each block's parity.
fn libnorm_blocks(data: &[u8]) -> Vec<SourcesAndParity<'_>> {
    let f = fti(data.len() as u64);
    let code = Rs8::new(64, 16).unwrap();
    let mut segs = data.chunks(1400);
    let mut out = Vec::new();
    let mut sbn = 0;
    while let Some(k) = block_len_of(&f, sbn) {
        let src: Vec<&[u8]> = segs.by_ref().take(usize::from(k)).collect();
        let parity = code.parity(&src).unwrap();
        out.push((src, parity));
        sbn += 1;
    }
    out
}

/// 100,000 bytes (72 segments: RFC 5052's two blocks of 36), sources lost in both blocks,
/// the last (short) one among them: the agent asks, the shim asks libnorm's parity ESIs
/// from 36, the parity rebuilds the sources, the file comes out byte-exact and the watermark
/// is acknowledged for libnorm's object.
#[test]
fn libnorm_parity_rebuilds_lost_sources_byte_exact() {
    let data = file(100_000);
    let size = data.len() as u64;
    let blocks = libnorm_blocks(&data);
    assert_eq!(
        blocks.iter().map(|b| b.0.len()).collect::<Vec<_>>(),
        [36, 36]
    );
    let lost = [(0u32, 0u16), (0, 5), (1, 35)];
    let mut rig = Rig::new();
    for (sbn, (src, _)) in blocks.iter().enumerate() {
        for (esi, s) in src.iter().enumerate() {
            if !lost.contains(&(sbn as u32, esi as u16)) {
                rig.feed(&data_msg(size, sbn as u32, esi as u16, s));
            }
        }
    }
    rig.feed(&watermark(1, 35));
    rig.run(2);
    assert!(rig.got.len() < data.len(), "nothing is lost?");
    let nacks: Vec<_> = rig
        .sent
        .iter()
        .filter_map(|m| match &m.body {
            Body::Nack { requests, .. } => Some(requests.clone()),
            _ => None,
        })
        .collect();
    let first = nacks.first().expect("the agent NACKed");
    let asked: Vec<_> = first
        .iter()
        .map(|r| {
            let ids: Vec<_> = r
                .items
                .iter()
                .map(|i| (i.object, i.id.sbn(), i.id.esi()))
                .collect();
            (r.form, ids)
        })
        .collect();
    assert_eq!(
        asked,
        vec![
            (Form::Ranges, vec![(OBJECT, 0, 36), (OBJECT, 0, 37)]),
            (Form::Items, vec![(OBJECT, 1, 36)]),
        ]
    );
    // libnorm answers with parity 0 and 1 of block 0 and parity 0 of block 1.
    rig.feed(&data_msg(size, 0, 36, &blocks[0].1[0]));
    rig.feed(&data_msg(size, 0, 37, &blocks[0].1[1]));
    rig.feed(&data_msg(size, 1, 36, &blocks[1].1[0]));
    rig.feed(&watermark(1, 35));
    rig.run(1);
    assert_eq!(rig.shim.recovered, 3);
    assert!(rig.got == data, "{} bytes of {}", rig.got.len(), data.len());
    let acked = rig.sent.iter().any(|m| {
        matches!(&m.body, Body::Ack { payload: AckPayload::Flush { object, id }, .. }
            if *object == OBJECT && id.sbn() == 1 && id.esi() == 35)
    });
    assert!(
        acked,
        "no ACK(FLUSH) of libnorm's watermark: {:?}",
        rig.sent
    );
}

/// A block that lost more than the parity can give is asked by its missing source ids.
#[test]
fn past_the_parity_count_the_missing_sources_are_asked() {
    let data = file(64 * 1400);
    let size = data.len() as u64;
    let blocks = libnorm_blocks(&data);
    let mut rig = Rig::new();
    for (esi, s) in blocks[0].0.iter().enumerate().skip(20) {
        rig.feed(&data_msg(size, 0, esi as u16, s));
    }
    rig.feed(&watermark(0, 63));
    rig.run(2);
    let Some(Body::Nack { requests, .. }) = rig.sent.first().map(|m| &m.body) else {
        panic!("no NACK: {:?}", rig.sent);
    };
    let ids: Vec<_> = requests[0].items.iter().map(|i| i.id.esi()).collect();
    assert_eq!((requests[0].form, ids), (Form::Ranges, vec![0, 19]));
    for (esi, s) in blocks[0].0.iter().enumerate().take(20) {
        rig.feed(&data_msg(size, 0, esi as u16, s));
    }
    rig.run(1);
    assert!(rig.got == data);
    assert_eq!(rig.shim.recovered, 0);
}

#[test]
fn segment_lengths_follow_the_partition() {
    let f = fti(100_000);
    assert_eq!(segment_len(&f, 0, 0), 1400);
    assert_eq!(segment_len(&f, 1, 34), 1400);
    assert_eq!(segment_len(&f, 1, 35), 100_000 - 71 * 1400);
}
