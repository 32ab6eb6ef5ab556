//! Golden bytes laid out field by field after RFC 5740's figures (§4.1 common header and
//! extensions, §4.2.1 NORM_DATA, §4.2.2 NORM_INFO, §4.2.3 NORM_CMD flavors, §4.3.1 NORM_NACK
//! and repair requests, §4.3.2 NORM_ACK), several of them datagrams libnorm 1.5.9 sent
//! (`tests/data/libnorm_cc_loss10.pcap`); quantization against libnorm's tables; the RS8
//! code; round trips and properties.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::ext::Fti;
use super::quant::*;
use super::rs8::Rs8;
use super::*;
use proptest::prelude::*;

fn hex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

/// Decode `bytes`, check it is `want`, and that it encodes back to `bytes`.
fn golden(bytes: &[u8], want: &Message<'_>) {
    let got = Message::decode(bytes).unwrap();
    assert_eq!(&got, want);
    assert_eq!(want.to_vec().unwrap(), bytes);
}

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

#[test]
fn data_with_fti_golden_as_libnorm_sent_it() {
    #[rustfmt::skip]
    let bytes = hex(concat!(
        "12 08 0002", "00000001",   // version 1, NORM_DATA, hdr_len 8 words, sequence 2; source
        "1c47 6b 42",               // instance_id, grtt, backoff 4 | gsize 2
        "14 05 0000",               // flags INFO|FILE, fec_id 5, object 0
        "000001 23",                // FEC payload id: source block 1, symbol 35
        "40 03 0000 000186a0",      // EXT_FTI, HEL 3, transfer length 100,000 (48 bits)
        "0578 40 10",               // segment 1,400, max block 64, parity 16 (libnorm's)
        "c0ffee",                   // payload
    ));
    let m = Message {
        sequence: 2,
        source_id: 1,
        body: Body::Data {
            sender: SENDER,
            obj: ObjectFields {
                flags: obj_flag::INFO | obj_flag::FILE,
                fec_id: 5,
                object: 0,
            },
            id: PayloadId::Rs8 { sbn: 1, esi: 35 },
            payload: &[0xc0, 0xff, 0xee],
        },
        ext: vec![FTI],
    };
    golden(&bytes, &m);
    assert_eq!(m.msg_type(), msg_type::DATA);
}

#[test]
fn info_golden_as_libnorm_sent_it() {
    let bytes = hex(concat!(
        "11 07 0001 00000001 1c47 6b 42 14 05 0000",
        "40 03 0000 000186a0 0578 40 10",
        "62656e63682e62696e", // "bench.bin"
    ));
    let m = Message {
        sequence: 1,
        source_id: 1,
        body: Body::Info {
            sender: SENDER,
            obj: ObjectFields {
                flags: 0x14,
                fec_id: 5,
                object: 0,
            },
            info: b"bench.bin",
        },
        ext: vec![FTI],
    };
    golden(&bytes, &m);
}

#[test]
fn flush_and_squelch_golden_as_libnorm_sent_them() {
    let flush = hex("13 05 0054 00000001 1c47 6b 42 01 05 0000 00000123 00000002 00000003");
    golden(
        &flush,
        &Message {
            sequence: 0x54,
            source_id: 1,
            body: Body::Cmd {
                sender: SENDER,
                cmd: Cmd::Flush {
                    object: 0,
                    id: PayloadId::Rs8 { sbn: 1, esi: 0x23 },
                    acking_nodes: vec![2, 3],
                },
            },
            ext: vec![],
        },
    );
    let squelch = hex("13 05 000b 00000001 1c47 6b 42 03 05 0007 00000000 0008 0009");
    golden(
        &squelch,
        &Message {
            sequence: 0xb,
            source_id: 1,
            body: Body::Cmd {
                sender: SENDER,
                cmd: Cmd::Squelch {
                    object: 7,
                    id: PayloadId::Rs8 { sbn: 0, esi: 0 },
                    invalid_objects: vec![8, 9],
                },
            },
            ext: vec![],
        },
    );
}

#[test]
fn cc_with_ext_rate_golden_as_libnorm_sent_it() {
    #[rustfmt::skip]
    let bytes = hex(concat!(
        "13 07 0008 00000001 c0ed 95 42",
        "04 00 0003",                // flavor CC, reserved (no SYN), cc_sequence 3
        "6b0d3a50 00043fe1",         // send_time sec, usec
        "80 00 8983",                // EXT_RATE, reserved, send_rate
        "00000003 0d 3b 8983",       // node 3, CLR|RTT|START, rtt, rate
    ));
    let m = Message {
        sequence: 8,
        source_id: 1,
        body: Body::Cmd {
            sender: SenderFields {
                instance_id: 0xc0ed,
                grtt: 0x95,
                backoff: 4,
                gsize: 2,
            },
            cmd: Cmd::Cc {
                syn: false,
                cc_sequence: 3,
                send_time: Timestamp {
                    sec: 0x6b0d_3a50,
                    usec: 0x0004_3fe1,
                },
                nodes: vec![CcNode {
                    node_id: 3,
                    flags: 0x0d,
                    rtt: 0x3b,
                    rate: 0x8983,
                }],
            },
        },
        ext: vec![Ext::Rate { send_rate: 0x8983 }],
    };
    golden(&bytes, &m);
}

#[test]
fn other_flavors_golden() {
    let s = "13 04 0009 00000001 1c47 6b 42";
    let cmd = |cmd: Cmd<'static>| Message {
        sequence: 9,
        source_id: 1,
        body: Body::Cmd {
            sender: SENDER,
            cmd,
        },
        ext: vec![],
    };
    golden(&hex(&format!("{s} 02 000000")), &cmd(Cmd::Eot));
    golden(
        &hex(&format!("{s} 07 000000 68690000")),
        &cmd(Cmd::Application { content: b"hi\0\0" }),
    );
    golden(
        &hex(&format!("{s} 06 00 10 2a 00000002")),
        &cmd(Cmd::AckReq {
            ack_type: 16,
            ack_id: 42,
            acking_nodes: vec![2],
        }),
    );
    golden(
        &hex(&format!("{s} 05 01 0000 01 01 0008 05 00 0004 00000a03")),
        &cmd(Cmd::RepairAdv {
            flags: 1,
            requests: vec![RepairRequest {
                form: Form::Items,
                flags: RepairFlags {
                    segment: true,
                    ..RepairFlags::default()
                },
                items: vec![RepairItem {
                    object: 4,
                    id: PayloadId::Rs8 { sbn: 10, esi: 3 },
                }],
            }],
        }),
    );
}

#[test]
fn nack_golden_as_libnorm_sent_it() {
    #[rustfmt::skip]
    let bytes = hex(concat!(
        "14 09 0000 00000003",              // NORM_NACK, hdr_len 9, from node 3
        "00000001 1c47 0000",               // server_id, instance_id, reserved
        "6b0d3a49 0003d98e",                // grtt_response
        "03 03 0000 20 94 0000 c636 003a",  // EXT_CC: seq, flags, rtt, loss, rate, loss_ex
        "02 08 0010",                       // RANGES, OBJECT, 16 bytes of items
        "05 00 ff01 00000000",              // fec_id 5, object 0xff01, block 0 symbol 0
        "05 00 ffff 00000000",              //   to object 0xffff
        "01 04 0008 05 00 0000 00000000",   // ITEMS, INFO: object 0
    ));
    let item = |object| RepairItem {
        object,
        id: PayloadId::Rs8 { sbn: 0, esi: 0 },
    };
    let m = Message {
        sequence: 0,
        source_id: 3,
        body: Body::Nack {
            server_id: 1,
            instance_id: 0x1c47,
            grtt_response: Timestamp {
                sec: 0x6b0d_3a49,
                usec: 0x0003_d98e,
            },
            requests: vec![
                RepairRequest {
                    form: Form::Ranges,
                    flags: RepairFlags {
                        object: true,
                        ..RepairFlags::default()
                    },
                    items: vec![item(0xff01), item(0xffff)],
                },
                RepairRequest {
                    form: Form::Items,
                    flags: RepairFlags {
                        info: true,
                        ..RepairFlags::default()
                    },
                    items: vec![item(0)],
                },
            ],
        },
        ext: vec![Ext::Cc {
            cc_sequence: 0,
            flags: 0x20,
            rtt: 0x94,
            loss: 0,
            rate: 0xc636,
            loss_ex: 0x3a,
        }],
    };
    golden(&bytes, &m);
    let Body::Nack { requests, .. } = &m.body else {
        unreachable!()
    };
    assert_eq!(requests[0].ranges(), vec![(item(0xff01), item(0xffff))]);
}

#[test]
fn acks_golden_as_libnorm_sent_them() {
    let flush = hex(concat!(
        "15 09 0000 00000003 00000001 1c47 02 00 6b0d3a49 000bf55a",
        "03 03 0000 20 94 0000 1e05 0075",
        "05 00 0000 00000123",
    ));
    let ext = vec![Ext::Cc {
        cc_sequence: 0,
        flags: 0x20,
        rtt: 0x94,
        loss: 0,
        rate: 0x1e05,
        loss_ex: 0x75,
    }];
    let ack = |ack_type, payload| Message {
        sequence: 0,
        source_id: 3,
        body: Body::Ack {
            server_id: 1,
            instance_id: 0x1c47,
            ack_type,
            ack_id: 0,
            grtt_response: Timestamp {
                sec: 0x6b0d_3a49,
                usec: 0x000b_f55a,
            },
            payload,
        },
        ext: ext.clone(),
    };
    let f = AckPayload::Flush {
        object: 0,
        id: PayloadId::Rs8 { sbn: 1, esi: 0x23 },
    };
    golden(&flush, &ack(ack_type::FLUSH, f.clone()));
    let cc = hex(concat!(
        "15 09 0000 00000003 00000001 1c47 01 00 6b0d3a49 000bf55a",
        "03 03 0000 20 94 0000 1e05 0075",
    ));
    golden(&cc, &ack(ack_type::CC, AckPayload::Raw(&[])));
    // A FLUSH payload with another type, or raw bytes with FLUSH, cannot be written.
    assert!(ack(ack_type::CC, f).to_vec().is_err());
    assert!(ack(ack_type::FLUSH, AckPayload::Raw(&[])).to_vec().is_err());
}

#[test]
fn other_fec_ids_and_extensions() {
    // fec_id 129 (8-byte payload id) and 2 (16/16), and an unknown extension kept whole.
    let sb = hex("12 07 0000 00000001 1c47 6b 42 00 81 0005 00000007 0040 0003 41 01 ab cd aa");
    let m = Message::decode(&sb).unwrap();
    let Body::Data { id, payload, .. } = &m.body else {
        panic!("{m:?}")
    };
    assert_eq!(
        *id,
        PayloadId::SmallBlock {
            sbn: 7,
            block_len: 64,
            esi: 3
        }
    );
    assert_eq!(*payload, &[0xaa]);
    assert_eq!(
        m.ext,
        vec![Ext::Other {
            het: 65,
            content: &[0xab, 0xcd]
        }]
    );
    assert_eq!(m.to_vec().unwrap(), sb);
    let rs = hex("12 06 0000 00000001 1c47 6b 42 00 02 0005 0102 0304 ff 010203");
    let m = Message::decode(&rs).unwrap();
    let Body::Data { id, .. } = &m.body else {
        panic!()
    };
    assert_eq!(
        *id,
        PayloadId::Rs16 {
            sbn: 0x102,
            esi: 0x304
        }
    );
    assert_eq!(
        m.ext,
        vec![Ext::Other {
            het: 0xff,
            content: &[1, 2, 3]
        }]
    );
    assert_eq!(m.to_vec().unwrap(), rs);
}

#[test]
fn stream_header_splits() {
    let p = hex("0005 0001 00000bb8 68656c6c6f");
    let (h, d) = StreamHeader::split(&p).unwrap();
    assert_eq!(
        h,
        StreamHeader {
            len: 5,
            msg_start: 1,
            offset: 3000
        }
    );
    assert_eq!(d, b"hello");
    assert!(StreamHeader::split(&p[..7]).is_err());
}

#[test]
fn decode_rules() {
    let ok = hex("13 05 000b 00000001 1c47 6b 42 03 05 0000 00000000");
    assert!(Message::decode(&ok).is_ok());
    let with = |i: usize, v: u8| {
        let mut b = ok.clone();
        b[i] = v;
        Message::decode(&b).map(|_| ())
    };
    assert_eq!(with(0, 0x23), Err(Error::Version(2)));
    assert_eq!(with(0, 0x17), Err(Error::Type(7)));
    assert_eq!(with(12, 9), Err(Error::Flavor(9)));
    assert_eq!(with(13, 6), Err(Error::FecId(6)));
    assert!(matches!(with(1, 4), Err(Error::HeaderLength { .. })));
    assert!(matches!(with(1, 6), Err(Error::HeaderLength { .. })));
    // An extension of HEL 0, and one running past hdr_len.
    let mut b = ok.clone();
    b[1] = 6;
    b.extend_from_slice(&[0x03, 0x00, 0, 0]);
    assert_eq!(
        Message::decode(&b),
        Err(Error::Malformed("header extension of length 0"))
    );
    b[21] = 2;
    assert_eq!(
        Message::decode(&b),
        Err(Error::Malformed("header extension past hdr_len"))
    );
    // Lists that do not fill their content.
    let mut b = hex("13 05 0054 00000001 1c47 6b 42 01 05 0000 00000123 000000");
    assert!(matches!(Message::decode(&b), Err(Error::Malformed(_))));
    b.truncate(20);
    b[12] = 3;
    b.push(0);
    assert!(matches!(Message::decode(&b), Err(Error::Malformed(_))));
    // Reserved fields.
    let eot = hex("13 04 0009 00000001 1c47 6b 42 02 000100");
    assert!(matches!(Message::decode(&eot), Err(Error::Reserved(_))));
    let nack = hex("14 06 0000 00000003 00000001 1c47 0001 6b0d3a49 0003d98e");
    assert!(matches!(Message::decode(&nack), Err(Error::Reserved(_))));
    // Repair requests: an odd RANGES, an unknown form, a flag bit, a length past the end.
    let nack = |req: &str| {
        hex(&format!(
            "14 06 0000 00000003 00000001 1c47 0000 00000000 00000000 {req}"
        ))
    };
    let odd = nack("02 01 0008 05 00 0000 00000000");
    assert!(matches!(Message::decode(&odd), Err(Error::Malformed(_))));
    let form = nack("04 01 0008 05 00 0000 00000000");
    assert!(matches!(Message::decode(&form), Err(Error::Malformed(_))));
    let flag = nack("01 11 0008 05 00 0000 00000000");
    assert!(matches!(Message::decode(&flag), Err(Error::Reserved(_))));
    let long = nack("01 01 0010 05 00 0000 00000000");
    assert!(matches!(Message::decode(&long), Err(Error::Malformed(_))));
    // Truncated common header.
    assert!(matches!(
        Message::decode(&ok[..5]),
        Err(Error::Truncated { .. })
    ));
}

#[test]
fn encode_refuses_what_it_cannot_write() {
    let data = |id, fec_id, sender| Message {
        sequence: 0,
        source_id: 1,
        body: Body::Data {
            sender,
            obj: ObjectFields {
                flags: 0,
                fec_id,
                object: 0,
            },
            id,
            payload: &[],
        },
        ext: vec![],
    };
    let big = PayloadId::Rs8 {
        sbn: 1 << 24,
        esi: 0,
    };
    assert!(data(big, 5, SENDER).to_vec().is_err());
    let id = PayloadId::Rs8 { sbn: 0, esi: 0 };
    assert!(data(id, 129, SENDER).to_vec().is_err(), "fec_id disagrees");
    let bad = SenderFields {
        backoff: 16,
        ..SENDER
    };
    assert!(data(id, 5, bad).to_vec().is_err());
    let mut m = data(id, 5, SENDER);
    m.ext = vec![Ext::Other {
        het: 10,
        content: &[1],
    }];
    let mut out = vec![9];
    assert!(m.encode(&mut out).is_err());
    assert_eq!(out, vec![9], "out is left as it was");
    m.ext = vec![Ext::Other {
        het: 200,
        content: &[1, 2],
    }];
    assert!(m.to_vec().is_err());
    m.ext = vec![Ext::Fti(Fti {
        object_size: 1 << 48,
        segment_size: 1,
        max_block_len: 1,
        num_parity: 0,
    })];
    assert!(m.to_vec().is_err());
}

/// libnorm's `NORM_RTT[]` at a few indices (normMessage.cpp, 4 significant digits).
const NORM_RTT: [(u8, f64); 8] = [
    (0, 1.000e-06),
    (30, 3.100e-05),
    (31, 3.287e-05),
    (64, 4.161e-04),
    (107, 1.137e-02),
    (149, 2.876e-01),
    (200, 1.454e+01),
    (255, 1.000e+03),
];

#[test]
fn rtt_quantization_matches_libnorm() {
    for (q, v) in NORM_RTT {
        let u = unquantize_rtt(q);
        assert!((u - v).abs() / v < 5e-4, "q {q}: {u} vs libnorm's {v}");
    }
    // Quantizing rounds up (never below the RTT, by more than float error), so a value
    // of the table comes back as its q or, through rounding, the next one, as in libnorm.
    for q in 31..=254u8 {
        let back = quantize_rtt(unquantize_rtt(q));
        assert!(back == q || back == q + 1, "q {q} → {back}");
    }
    for i in 0..2000 {
        let rtt = 3.3e-5 * 1.01f64.powi(i);
        if rtt > RTT_MAX {
            break;
        }
        assert!(
            unquantize_rtt(quantize_rtt(rtt)) >= rtt * (1.0 - 1e-3),
            "{rtt}"
        );
    }
    assert_eq!(quantize_rtt(0.01), 106);
    assert!(unquantize_rtt(quantize_rtt(0.01)) >= 0.01);
    assert_eq!(quantize_rtt(0.0), 0);
    assert_eq!(quantize_rtt(1.0e9), 255);
    assert_eq!(quantize_rtt(f64::NAN), 255);
    assert_eq!(quantize_rtt(5.0e-6), 4);
}

#[test]
fn gsize_rate_loss_quantization_match_libnorm() {
    // NORM_GSIZE[] (normMessage.cpp).
    let table = [
        1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 5e1, 5e2, 5e3, 5e4, 5e5, 5e6, 5e7, 5e8,
    ];
    for (q, v) in table.iter().enumerate() {
        assert_eq!(unquantize_gsize(q as u8), *v);
        assert_eq!(quantize_gsize(*v), q as u8);
    }
    assert_eq!(quantize_gsize(1000.0), 2, "libnorm's default group size");
    assert_eq!(quantize_gsize(1001.0), 10, "rounded up to 5,000");
    assert_eq!(quantize_gsize(6000.0), 3, "rounded up to 10,000");
    assert_eq!(quantize_gsize(3.0), 0);
    assert_eq!(quantize_gsize(1e12), 15);
    // The capture's EXT_RATE 0x4005 at normfile's 2 Mbit/s: 250,000 bytes/s.
    assert_eq!(quantize_rate(250_000.0), 0x4005);
    assert!((unquantize_rate(0x4005) - 250_000.0).abs() < 1e-6);
    assert_eq!(quantize_rate(0.0), 1);
    for r in [1.0, 99.0, 12_345.0, 1.25e9] {
        let back = unquantize_rate(quantize_rate(r));
        assert!((back - r).abs() / r < 2.5e-3, "{r} → {back}");
    }
    assert_eq!(quantize_loss(0.5), 32768);
    assert_eq!(quantize_loss(2.0), 65535);
    assert!((unquantize_loss(quantize_loss(0.01)) - 0.01).abs() < 1e-5);
    assert_eq!(quantize_loss32(1.0), u32::MAX);
    assert!((unquantize_loss32(quantize_loss32(1e-7)) - 1e-7).abs() < 1e-9);
}

#[test]
fn rs8_is_systematic_and_recovers_any_k_of_n() {
    let code = Rs8::new(4, 3).unwrap();
    for esi in 0..4 {
        for j in 0..4 {
            assert_eq!(code.coefficient(esi, j), Some(u8::from(esi == j)));
        }
    }
    let src: Vec<Vec<u8>> = (0..4u8).map(|i| vec![i, 2 * i + 1, 0xf0 ^ i]).collect();
    let par = code.parity(&src).unwrap();
    assert_eq!(par.len(), 3);
    // Lose sources 0, 2, 3: recover from source 1 and the three parity symbols.
    let symbols = [
        (1, src[1].as_slice()),
        (4, par[0].as_slice()),
        (5, par[1].as_slice()),
        (6, par[2].as_slice()),
    ];
    assert_eq!(code.recover(4, &symbols).unwrap(), src);
    // A shortened block of 2 sources: its parity ESIs are 2, 3, 4.
    let short = code.parity(&src[..2]).unwrap();
    let symbols = [(3, short[1].as_slice()), (4, short[2].as_slice())];
    assert_eq!(code.recover(2, &symbols).unwrap(), src[..2].to_vec());
    assert!(Rs8::new(0, 1).is_err());
    assert!(Rs8::new(200, 56).is_err());
    assert!(code.parity::<Vec<u8>>(&[]).is_err());
    assert!(code.recover(4, &symbols).is_err());
    let twice = [(0, src[0].as_slice()), (0, src[0].as_slice())];
    assert!(code.recover(2, &twice).is_err());
}

// ---- properties ----

fn payload_id() -> impl Strategy<Value = PayloadId> {
    prop_oneof![
        (0u32..1 << 24, any::<u8>()).prop_map(|(sbn, esi)| PayloadId::Rs8 { sbn, esi }),
        (any::<u16>(), any::<u16>()).prop_map(|(sbn, esi)| PayloadId::Rs16 { sbn, esi }),
        (any::<u32>(), any::<u16>(), any::<u16>()).prop_map(|(sbn, block_len, esi)| {
            PayloadId::SmallBlock {
                sbn,
                block_len,
                esi,
            }
        }),
    ]
}

fn requests() -> impl Strategy<Value = Vec<RepairRequest>> {
    let req = (
        0u8..3,
        0u8..16,
        prop::collection::vec((any::<u16>(), payload_id()), 0..4),
    )
        .prop_map(|(form, flags, items)| {
            let form = [Form::Items, Form::Ranges, Form::Erasures][usize::from(form)];
            let mut items: Vec<RepairItem> = items
                .into_iter()
                .map(|(object, id)| RepairItem { object, id })
                .collect();
            if form == Form::Ranges && items.len() % 2 == 1 {
                items.pop();
            }
            RepairRequest {
                form,
                flags: RepairFlags {
                    segment: flags & 1 != 0,
                    block: flags & 2 != 0,
                    info: flags & 4 != 0,
                    object: flags & 8 != 0,
                },
                items,
            }
        });
    prop::collection::vec(req, 0..3)
}

/// Extensions, as (kind, numbers, content); built into [`Ext`] borrowing the content.
fn exts() -> impl Strategy<Value = Vec<(u8, [u16; 6], Vec<u8>)>> {
    let one = (0u8..4, any::<[u16; 6]>(), 0usize..3).prop_map(|(k, n, words)| {
        (
            k,
            n,
            (0..words * 4 + 2).map(|i| i as u8).collect::<Vec<u8>>(),
        )
    });
    prop::collection::vec(one, 0..3)
}

fn build_exts(v: &[(u8, [u16; 6], Vec<u8>)]) -> Vec<Ext<'_>> {
    v.iter()
        .map(|(k, n, content)| match k {
            0 => Ext::Fti(Fti {
                object_size: (u64::from(n[0]) << 32) | u64::from(n[1]),
                segment_size: n[2],
                max_block_len: n[3] as u8,
                num_parity: n[4] as u8,
            }),
            1 => Ext::Cc {
                cc_sequence: n[0],
                flags: n[1] as u8,
                rtt: n[2] as u8,
                loss: n[3],
                rate: n[4],
                loss_ex: n[5],
            },
            2 => Ext::Rate { send_rate: n[0] },
            // HET 10 (an unassigned one below 64) with 2 + 4·w bytes of content.
            _ => Ext::Other { het: 10, content },
        })
        .collect()
}

#[derive(Debug, Clone)]
struct Spec {
    kind: u8,
    seq: u16,
    source: u32,
    sender: (u16, u8, u8, u8),
    n: (u32, u16, u8, u8),
    id: PayloadId,
    bytes: Vec<u8>,
    nodes: Vec<u32>,
    requests: Vec<RepairRequest>,
    exts: Vec<(u8, [u16; 6], Vec<u8>)>,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        (0u8..13, any::<u16>(), any::<u32>()),
        (any::<u16>(), any::<u8>(), 0u8..16, 0u8..16),
        (any::<u32>(), any::<u16>(), any::<u8>(), any::<u8>()),
        payload_id(),
        prop::collection::vec(any::<u8>(), 0..40),
        prop::collection::vec(any::<u32>(), 0..4),
        requests(),
        exts(),
    )
        .prop_map(
            |((kind, seq, source), sender, n, id, bytes, nodes, requests, exts)| Spec {
                kind,
                seq,
                source,
                sender,
                n,
                id,
                bytes,
                nodes,
                requests,
                exts,
            },
        )
}

fn build_body(s: &Spec) -> Body<'_> {
    let (instance_id, grtt, backoff, gsize) = s.sender;
    let sender = SenderFields {
        instance_id,
        grtt,
        backoff,
        gsize,
    };
    let (a32, a16, b8, c8) = s.n;
    let obj = ObjectFields {
        flags: b8,
        fec_id: s.id.fec_id(),
        object: a16,
    };
    let ts = Timestamp {
        sec: a32,
        usec: u32::from(a16),
    };
    let cmd = |cmd| Body::Cmd { sender, cmd };
    match s.kind {
        0 => Body::Info {
            sender,
            obj,
            info: &s.bytes,
        },
        1 => Body::Data {
            sender,
            obj,
            id: s.id,
            payload: &s.bytes,
        },
        2 => cmd(Cmd::Flush {
            object: a16,
            id: s.id,
            acking_nodes: s.nodes.clone(),
        }),
        3 => cmd(Cmd::Eot),
        4 => cmd(Cmd::Squelch {
            object: a16,
            id: s.id,
            invalid_objects: s.nodes.iter().map(|&n| n as u16).collect(),
        }),
        5 => cmd(Cmd::Cc {
            syn: b8 & 1 != 0,
            cc_sequence: a16,
            send_time: ts,
            nodes: s
                .nodes
                .iter()
                .map(|&node_id| CcNode {
                    node_id,
                    flags: b8,
                    rtt: c8,
                    rate: a16,
                })
                .collect(),
        }),
        6 => cmd(Cmd::RepairAdv {
            flags: c8,
            requests: s.requests.clone(),
        }),
        7 => cmd(Cmd::AckReq {
            ack_type: b8,
            ack_id: c8,
            acking_nodes: s.nodes.clone(),
        }),
        8 => cmd(Cmd::Application { content: &s.bytes }),
        9 => Body::Nack {
            server_id: a32,
            instance_id,
            grtt_response: ts,
            requests: s.requests.clone(),
        },
        10 => Body::Ack {
            server_id: a32,
            instance_id,
            ack_type: ack_type::FLUSH,
            ack_id: c8,
            grtt_response: ts,
            payload: AckPayload::Flush {
                object: a16,
                id: s.id,
            },
        },
        11 => Body::Ack {
            server_id: a32,
            instance_id,
            ack_type: if b8 == ack_type::FLUSH { 0 } else { b8 },
            ack_id: c8,
            grtt_response: ts,
            payload: AckPayload::Raw(&s.bytes),
        },
        _ => Body::Report(&s.bytes),
    }
}

fn build(s: &Spec) -> Message<'_> {
    Message {
        sequence: s.seq,
        source_id: s.source,
        body: build_body(s),
        // NORM_REPORT has no header beyond the common one and no extensions.
        ext: if s.kind == 12 {
            vec![]
        } else {
            build_exts(&s.exts)
        },
    }
}

proptest! {
    #[test]
    fn decode_of_encode_is_identity(s in spec()) {
        let m = build(&s);
        let bytes = m.to_vec().unwrap();
        let back = Message::decode(&bytes).unwrap();
        prop_assert_eq!(&back, &m);
        prop_assert_eq!(back.to_vec().unwrap(), bytes);
    }

    #[test]
    fn decode_never_panics(b in prop::collection::vec(any::<u8>(), 0..200)) {
        let _ = Message::decode(&b);
    }

    #[test]
    fn decode_of_mutated_messages_never_panics(
        s in spec(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut b = build(&s).to_vec().unwrap();
        for (i, v) in flips {
            let i = i.index(b.len());
            b[i] ^= v;
        }
        let _ = Message::decode(&b);
        let n = cut.index(b.len() + 1);
        if let Ok(m) = Message::decode(&b[..n]) {
            // Whatever decodes, encodes back to the bytes it came from.
            prop_assert_eq!(m.to_vec().unwrap(), &b[..n]);
        }
    }
}
