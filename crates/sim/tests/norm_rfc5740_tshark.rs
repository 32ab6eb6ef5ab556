//! Wireshark's own NORM dissector reads `rmcast_wire::rfc5740` messages (issue 62): NORM_INFO
//! and NORM_DATA (source, parity, stream) with EXT_FTI, every NORM_CMD flavor (FLUSH, EOT,
//! SQUELCH, CC with EXT_RATE, REPAIR_ADV, ACK_REQ, APPLICATION), NORM_NACK with EXT_CC and
//! the three request forms, NORM_ACK(FLUSH) and NORM_ACK(CC), encoded by the codec, written
//! as UDP over IPv4 over Ethernet by the simulator's pcap writer, and read back with
//! `tshark --enable-heuristic rmt_norm_udp --disable-protocol rx` (the heuristic's name in
//! tshark 4.0; AFS RX owns the pcap writer's port 7002). Every frame
//! must dissect as NORM, none malformed, and show the fields the codec set, as far as the
//! dissector reads them: it leaves a NORM_DATA's fec_id 5 payload id, extensions and
//! payload as one `data` field, and warns on a NORM_INFO with EXT_FTI, as it does on
//! libnorm's own messages.
//!
//! Skipped (with a note) when tshark is not installed. `RMCAST_NORM_PCAP=FILE` keeps the
//! capture.

#[path = "../../../tools/wireshark/tshark.rs"]
mod tshark;

use rmcast_proto::{Bytes, Dest, GroupId, NodeId, Time};
use rmcast_sim::pcap;
use rmcast_sim::PacketRecord;
use rmcast_wire::rfc5740::ext::Fti;
use rmcast_wire::rfc5740::{
    obj_flag, AckPayload, Body, CcNode, Cmd, Ext, Form, Message, ObjectFields, PayloadId,
    RepairFlags, RepairItem, RepairRequest, SenderFields, Timestamp,
};
use std::net::Ipv4Addr;

const SENDER: SenderFields = SenderFields {
    instance_id: 0x1c47,
    grtt: 0x6b,
    backoff: 4,
    gsize: 2,
};
const FTI: Ext<'static> = Ext::Fti(Fti {
    object_size: 100_000,
    segment_size: 1400,
    max_block_len: 64,
    num_parity: 16,
});
const EXT_CC: Ext<'static> = Ext::Cc {
    cc_sequence: 7,
    flags: 0x05,
    rtt: 0x94,
    loss: 12,
    rate: 0x1e05,
    loss_ex: 0x75,
};
const TS: Timestamp = Timestamp {
    sec: 1_796_029_001,
    usec: 236_664,
};
static SEGMENT: [u8; 1400] = [0x5a; 1400];
static STREAM: [u8; 13] = [0, 5, 0, 1, 0, 0, 0x0b, 0xb8, b'h', b'e', b'l', b'l', b'o'];

fn obj(flags: u8, object: u16) -> ObjectFields {
    ObjectFields {
        flags,
        fec_id: 5,
        object,
    }
}

fn rs8(sbn: u32, esi: u8) -> PayloadId {
    PayloadId::Rs8 { sbn, esi }
}

fn msg(
    sequence: u16,
    source_id: u32,
    body: Body<'static>,
    ext: Vec<Ext<'static>>,
) -> Message<'static> {
    Message {
        sequence,
        source_id,
        body,
        ext,
    }
}

fn cmd(sequence: u16, cmd: Cmd<'static>, ext: Vec<Ext<'static>>) -> Message<'static> {
    msg(
        sequence,
        1,
        Body::Cmd {
            sender: SENDER,
            cmd,
        },
        ext,
    )
}

fn item(object: u16, sbn: u32, esi: u8) -> RepairItem {
    RepairItem {
        object,
        id: rs8(sbn, esi),
    }
}

fn request(form: Form, flags: RepairFlags, items: Vec<RepairItem>) -> RepairRequest {
    RepairRequest { form, flags, items }
}

const SEGMENT_FLAG: RepairFlags = RepairFlags {
    segment: true,
    block: false,
    info: false,
    object: false,
};

/// A session's worth of messages, and whether each goes to the sender (unicast).
fn session() -> Vec<(Message<'static>, bool)> {
    let file = obj_flag::INFO | obj_flag::FILE;
    let info = Body::Info {
        sender: SENDER,
        obj: obj(file, 3),
        info: b"bench.bin",
    };
    let data = |flags, esi, payload: &'static [u8]| Body::Data {
        sender: SENDER,
        obj: obj(flags, 3),
        id: rs8(1, esi),
        payload,
    };
    let nack = Body::Nack {
        server_id: 1,
        instance_id: 0x1c47,
        grtt_response: TS,
        requests: vec![
            request(
                Form::Ranges,
                SEGMENT_FLAG,
                vec![item(3, 1, 36), item(3, 1, 40)],
            ),
            request(Form::Items, SEGMENT_FLAG, vec![item(3, 2, 9)]),
            request(Form::Erasures, SEGMENT_FLAG, vec![item(3, 0, 2)]),
        ],
    };
    let ack = |ack_type, payload| Body::Ack {
        server_id: 1,
        instance_id: 0x1c47,
        ack_type,
        ack_id: 4,
        grtt_response: TS,
        payload,
    };
    let nodes = vec![CcNode {
        node_id: 3,
        flags: 0x0d,
        rtt: 0x3b,
        rate: 0x8983,
    }];
    vec![
        (msg(1, 1, info, vec![FTI]), false),
        (msg(2, 1, data(file, 0, &SEGMENT), vec![FTI]), false),
        (
            msg(3, 1, data(file | obj_flag::REPAIR, 36, &SEGMENT), vec![FTI]),
            false,
        ),
        (msg(4, 1, data(obj_flag::STREAM, 5, &STREAM), vec![]), false),
        (
            cmd(
                5,
                Cmd::Flush {
                    object: 3,
                    id: rs8(1, 35),
                    acking_nodes: vec![2, 3],
                },
                vec![],
            ),
            false,
        ),
        (cmd(6, Cmd::Eot, vec![]), false),
        (
            cmd(
                7,
                Cmd::Squelch {
                    object: 3,
                    id: rs8(0, 0),
                    invalid_objects: vec![1, 2],
                },
                vec![],
            ),
            false,
        ),
        (
            cmd(
                8,
                Cmd::Cc {
                    syn: false,
                    cc_sequence: 7,
                    send_time: TS,
                    nodes,
                },
                vec![Ext::Rate { send_rate: 0x4005 }],
            ),
            false,
        ),
        (
            cmd(
                9,
                Cmd::RepairAdv {
                    flags: 0,
                    requests: vec![request(Form::Items, SEGMENT_FLAG, vec![item(3, 1, 2)])],
                },
                vec![],
            ),
            false,
        ),
        (
            cmd(
                10,
                Cmd::AckReq {
                    ack_type: 16,
                    ack_id: 4,
                    acking_nodes: vec![2],
                },
                vec![],
            ),
            false,
        ),
        (
            cmd(11, Cmd::Application { content: b"app!" }, vec![]),
            false,
        ),
        (msg(0, 3, nack, vec![EXT_CC]), true),
        (
            msg(
                0,
                3,
                ack(
                    2,
                    AckPayload::Flush {
                        object: 3,
                        id: rs8(1, 35),
                    },
                ),
                vec![EXT_CC],
            ),
            true,
        ),
        (msg(0, 3, ack(1, AckPayload::Raw(&[])), vec![EXT_CC]), true),
    ]
}

/// The fields read for every frame.
const FIELDS: [&str; 12] = [
    "frame.protocols",
    "_ws.malformed",
    "_ws.expert.message",
    "norm.type",
    "norm.hlen",
    "norm.sequence",
    "norm.source_id",
    "norm.instance_id",
    "norm.object_transport_id",
    "norm.flavor",
    "data.data",
    "norm.nack.form",
];

/// One frame's fields.
struct Row<'a>(&'a [String]);

impl Row<'_> {
    fn get(&self, name: &str) -> String {
        let k = FIELDS.iter().position(|x| *x == name).expect("field");
        self.0.get(k).cloned().unwrap_or_default()
    }
}

fn tshark_fields(file: &std::path::Path) -> Vec<Vec<String>> {
    // The pcap writer's NORM port is 7002, in AFS RX's range (7000-7009): tshark 4.0's RX
    // dissector claims some NORM frames there (a REPAIR_ADV, here) before any heuristic.
    let args = [
        "--enable-heuristic",
        "rmt_norm_udp",
        "--disable-protocol",
        "rx",
    ];
    tshark::fields(file, &args.map(str::to_owned), &FIELDS)
}

/// Frame `n`'s fields show `m` as the codec wrote it.
fn check_frame(m: &Message<'_>, row: &[String], n: usize) {
    let f = Row(row);
    let ctx = format!("frame {n}: {row:?}");
    assert!(f.get("frame.protocols").contains(":udp:norm"), "{ctx}");
    let stream = matches!(m.body, Body::Data { obj, .. } if obj.flags & obj_flag::STREAM != 0);
    if stream && !f.get("_ws.malformed").is_empty() {
        // Wireshark 4.0 takes everything after a fec_id 5 NORM_DATA's object id as data,
        // then reads the stream header past the end: any stream segment of fec_id 5,
        // libnorm's too, is "malformed" to it. A later tshark may read it: both pass.
        assert_eq!(
            f.get("_ws.expert.message"),
            "Malformed Packet (Exception occurred)"
        );
        return;
    }
    assert_eq!(f.get("_ws.malformed"), "", "{ctx}");
    let expert = f.get("_ws.expert.message");
    // Wireshark 4.0 warns on any NORM_INFO carrying EXT_FTI with a fec_id below 128, as it
    // does on libnorm's own (crates/wire/tests/data/libnorm_cc_loss10.pcap, frame 2).
    let info_fti = matches!(m.body, Body::Info { .. }) && !m.ext.is_empty();
    if info_fti {
        assert_eq!(expert, "FEC Encoding ID < 128, should be zero", "{ctx}");
    } else {
        assert_eq!(expert, "", "no expert info: {ctx}");
    }
    assert_eq!(f.get("norm.type"), m.msg_type().to_string(), "{ctx}");
    assert_eq!(f.get("norm.sequence"), m.sequence.to_string(), "{ctx}");
    let src = Ipv4Addr::from(m.source_id).to_string();
    assert_eq!(f.get("norm.source_id"), src, "{ctx}");
    let bytes = m.to_vec().expect("encodes");
    assert_eq!(f.get("norm.hlen"), bytes[1].to_string(), "{ctx}");
    match &m.body {
        Body::Info { sender, obj, .. } | Body::Data { sender, obj, .. } => {
            assert_eq!(
                f.get("norm.instance_id"),
                sender.instance_id.to_string(),
                "{ctx}"
            );
            let oid = format!("0x{:04x}", obj.object);
            assert_eq!(f.get("norm.object_transport_id"), oid, "{ctx}");
            if let Body::Data { .. } = &m.body {
                // Wireshark 4.0 does not read fec_id 5's payload id or NORM_DATA's
                // extensions: everything after the object id is one `data` field (as in
                // libnorm's own NORM_DATA).
                let rest: String = bytes[16..].iter().map(|b| format!("{b:02x}")).collect();
                assert_eq!(f.get("data.data"), rest, "{ctx}");
            }
        }
        Body::Cmd { sender, cmd } => {
            assert_eq!(
                f.get("norm.instance_id"),
                sender.instance_id.to_string(),
                "{ctx}"
            );
            assert_eq!(f.get("norm.flavor"), cmd.flavor().to_string(), "{ctx}");
        }
        Body::Nack { requests, .. } => {
            let forms: Vec<String> = requests
                .iter()
                .map(|q| (q.form as u8).to_string())
                .collect();
            assert_eq!(f.get("norm.nack.form"), forms.join(","), "{ctx}");
        }
        Body::Ack { .. } | Body::Report(_) => {}
    }
}

#[test]
fn wireshark_reads_every_rfc5740_message() {
    if !tshark::available() {
        return;
    }
    let messages = session();
    let records: Vec<PacketRecord> = messages
        .iter()
        .enumerate()
        .map(|(i, (m, to_sender))| PacketRecord {
            id: i as u64,
            time: Time::from_millis(i as u64),
            src: NodeId(if *to_sender { 1 } else { 0 }),
            dest: if *to_sender {
                Dest::Node(NodeId(0))
            } else {
                Dest::Group(GroupId(1))
            },
            class: None,
            payload: Bytes::from(m.to_vec().expect("encodes")),
        })
        .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("norm.pcap");
    pcap::write(std::fs::File::create(&file).expect("create pcap"), &records).expect("write pcap");
    if let Some(keep) = std::env::var_os("RMCAST_NORM_PCAP") {
        std::fs::copy(&file, keep).expect("copy the capture");
    }
    let rows = tshark_fields(&file);
    assert_eq!(rows.len(), messages.len(), "one line per frame: {rows:?}");
    for (i, (m, _)) in messages.iter().enumerate() {
        check_frame(m, &rows[i], i + 1);
    }
}

#[test]
fn wireshark_reads_libnorms_own_capture_the_same_way() {
    // The control: libnorm 1.5.9's datagrams (crates/wire/tests/data, port 6003) read with the
    // same options: every one NORM, none malformed, and the one warning on its NORM_INFO.
    if !tshark::available() {
        return;
    }
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../wire/tests/data/libnorm_cc_loss10.pcap");
    let rows = tshark_fields(&file);
    assert!(rows.len() > 200, "{} frames", rows.len());
    for (i, row) in rows.iter().enumerate() {
        let f = Row(row);
        let ctx = format!("frame {}: {row:?}", i + 1);
        assert!(f.get("frame.protocols").contains(":udp:norm"), "{ctx}");
        assert_eq!(f.get("_ws.malformed"), "", "{ctx}");
        let expert = f.get("_ws.expert.message");
        if f.get("norm.type") == "1" {
            assert_eq!(expert, "FEC Encoding ID < 128, should be zero", "{ctx}");
        } else {
            assert_eq!(expert, "", "{ctx}");
        }
    }
}
