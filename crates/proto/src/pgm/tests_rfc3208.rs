//! The translation between the agents' messages and RFC 3208 packets ([`super::rfc3208`]).

use super::rfc3208::{tsi_of, Outgoing, Translator, RECEIVER_NODE, SESSION, SOURCE_NODE};
use crate::NodeId;
use rmcast_wire::pgm::{Message as Pgm, SeqList};
use rmcast_wire::rfc3208::{self, options::id, Body, Gsi, Opt, Tsi};
use rmcast_wire::{Envelope, Message, Packet, FLAG_RETRANSMISSION};
use std::net::IpAddr;

const TSI: Tsi = Tsi {
    gsi: Gsi([1, 2, 3, 4, 5, 6]),
    sport: 4000,
};

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

/// The source's and a receiver's translators, the receiver's with the source's `base`.
fn pair(base: u32) -> (Translator, Translator) {
    let src = Translator::new(TSI, 7500, base, ip("10.0.0.1"), ip("239.1.2.3"));
    let rx = Translator::new(TSI, 7500, base, ip("10.0.0.1"), ip("239.1.2.3"));
    (src, rx)
}

/// The RFC 3208 packet an agent's datagram became, and whether it goes upstream.
fn pgm_of(o: Option<Outgoing>) -> (Vec<u8>, bool) {
    match o {
        Some(Outgoing::Pgm { payload, upstream }) => (payload, upstream),
        other => panic!("not a PGM packet: {other:?}"),
    }
}

/// An agent's datagram.
fn agent(m: Pgm<'_>, from: u32, flags: u8) -> Vec<u8> {
    let env = Envelope {
        session: SESSION,
        source: from,
        flags,
    };
    Packet::to_vec(env, &Message::Pgm(m)).unwrap()
}

/// The agent message a datagram holds.
fn message(d: &[u8]) -> (Pgm<'_>, u32, u8) {
    let p = Packet::decode(d).unwrap();
    assert_eq!(p.header.session, SESSION);
    let Message::Pgm(m) = p.message else {
        panic!("not pgm")
    };
    (m, p.header.source, p.header.flags)
}

#[test]
fn data_crosses_the_wire_and_back_with_sequence_numbers_mod_2_32() {
    // The agent's 0 is 2^32 − 2 on the wire: its 2 and 3 wrap to 0 and 1.
    let (mut src, mut rx) = pair(u32::MAX - 1);
    for seq in 0..6u64 {
        let payload = [seq as u8; 5];
        let d = agent(
            Pgm::Odata {
                seq,
                payload: &payload,
            },
            1,
            0,
        );
        let (wire, upstream) = pgm_of(src.outgoing(&d));
        assert!(!upstream);
        let p = rfc3208::Packet::decode(&wire).unwrap();
        assert_eq!((p.tsi(), p.dport), (TSI, 7500));
        let Body::Odata(data) = p.body else {
            panic!("{p:?}")
        };
        assert_eq!(data.sqn, (seq as u32).wrapping_add(u32::MAX - 1));
        assert_eq!(data.payload, &payload);
        assert!(rx.ours(&p));
        let back = rx.incoming(&p, SOURCE_NODE).unwrap();
        assert_eq!(
            message(&back),
            (
                Pgm::Odata {
                    seq,
                    payload: &payload
                },
                1,
                0
            )
        );
    }
    // RDATA keeps the retransmission flag; a sequence number before the receiver's 0 (here
    // a receiver whose 0 is the source's 2) is
    // dropped and counted.
    let d = agent(
        Pgm::Rdata {
            seq: 1,
            payload: b"r",
        },
        1,
        FLAG_RETRANSMISSION,
    );
    let p_bytes = pgm_of(src.outgoing(&d)).0;
    let p = rfc3208::Packet::decode(&p_bytes).unwrap();
    let back = rx.incoming(&p, SOURCE_NODE).unwrap();
    assert_eq!(message(&back).2, FLAG_RETRANSMISSION);
    let (_, mut late) = pair(0);
    assert_eq!(late.incoming(&p, SOURCE_NODE), None);
    assert_eq!(late.before_base, 1);
}

#[test]
fn an_spm_s_lead_is_the_last_sequence_number_sent_and_comes_back_as_the_next() {
    let (mut src, mut rx) = pair(0);
    // An empty window: trail 0, lead −1, as OpenPGM sends it.
    let d = agent(
        Pgm::Spm {
            spm_seq: 0,
            trail: 0,
            lead: 0,
        },
        1,
        0,
    );
    let w = pgm_of(src.outgoing(&d)).0;
    let p = rfc3208::Packet::decode(&w).unwrap();
    assert_eq!(
        p.body,
        Body::Spm {
            sqn: 0,
            trail: 0,
            lead: u32::MAX,
            path: ip("10.0.0.1")
        }
    );
    let back = rx.incoming(&p, SOURCE_NODE).unwrap();
    assert_eq!(
        message(&back).0,
        Pgm::Spm {
            spm_seq: 0,
            trail: 0,
            lead: 0
        }
    );
    // Ten packets sent, the oldest three let go; ODATA then carries the trail.
    let d = agent(
        Pgm::Spm {
            spm_seq: 1,
            trail: 3,
            lead: 10,
        },
        1,
        0,
    );
    let w = pgm_of(src.outgoing(&d)).0;
    let p = rfc3208::Packet::decode(&w).unwrap();
    assert!(matches!(
        p.body,
        Body::Spm {
            trail: 3,
            lead: 9,
            ..
        }
    ));
    assert_eq!(
        message(&rx.incoming(&p, SOURCE_NODE).unwrap()).0,
        Pgm::Spm {
            spm_seq: 1,
            trail: 3,
            lead: 10
        }
    );
    let d = agent(
        Pgm::Odata {
            seq: 10,
            payload: b"x",
        },
        1,
        0,
    );
    let w = pgm_of(src.outgoing(&d)).0;
    let p = rfc3208::Packet::decode(&w).unwrap();
    assert!(matches!(p.body, Body::Odata(x) if x.trail == 3));
    // The closing SPM: OPT_FIN, the SPM number after the last, lead = last sent.
    let fin = src.fin_spm(src.spm_next, 11).unwrap();
    let p = rfc3208::Packet::decode(&fin).unwrap();
    assert!(matches!(
        p.body,
        Body::Spm {
            sqn: 2,
            lead: 10,
            ..
        }
    ));
    assert!(matches!(&p.options[..], [Opt::Other { id: i, .. }] if *i == id::FIN));
}

#[test]
fn nak_lists_become_opt_nak_list_and_back_and_naks_go_upstream() {
    let (mut src, mut rx) = pair(100);
    let mut raw = Vec::new();
    SeqList::encode_seqs([4, 5, 9], &mut raw);
    let seqs = SeqList::from_raw(&raw).unwrap();
    let d = agent(Pgm::NakList { seqs }, 2, 0);
    let (payload, upstream) = pgm_of(rx.outgoing(&d));
    assert!(upstream);
    let p = rfc3208::Packet::decode(&payload).unwrap();
    // Upstream: the ports swapped, the source's GSI, the NLAs of source and group.
    assert_eq!((p.sport, p.dport, p.tsi()), (7500, 4000, TSI));
    let Body::Nak(n) = p.body else {
        panic!("{p:?}")
    };
    assert_eq!(
        (n.sqn, n.source, n.group),
        (104, ip("10.0.0.1"), ip("239.1.2.3"))
    );
    assert_eq!(p.options, vec![Opt::NakList(vec![105, 109])]);
    assert!(src.ours(&p));
    let back = src.incoming(&p, RECEIVER_NODE).unwrap();
    let (m, from, _) = message(&back);
    let Pgm::NakList { seqs } = m else {
        panic!("{m:?}")
    };
    assert_eq!(seqs.iter().collect::<Vec<_>>(), vec![4, 5, 9]);
    assert_eq!(from, 2);
    // One NAK stays a NAK; an NCF with a list becomes an NCFL.
    let w = pgm_of(rx.outgoing(&agent(Pgm::Nak { seq: 7 }, 2, 0))).0;
    let p = rfc3208::Packet::decode(&w).unwrap();
    assert!(p.options.is_empty());
    assert_eq!(
        message(&src.incoming(&p, RECEIVER_NODE).unwrap()).0,
        Pgm::Nak { seq: 7 }
    );
    let d = agent(Pgm::NcfList { seqs }, 1, 0);
    let w = pgm_of(src.outgoing(&d)).0;
    let p = rfc3208::Packet::decode(&w).unwrap();
    assert!(matches!(p.body, Body::Ncf(_)) && !p.body.upstream());
    assert!(matches!(
        message(&rx.incoming(&p, SOURCE_NODE).unwrap()).0,
        Pgm::NcfList { .. }
    ));
}

#[test]
fn tfmcc_stays_a_session_datagram_and_strangers_are_not_ours() {
    let (mut src, rx) = pair(0);
    let ccfb = Pgm::Feedback {
        round: 1,
        ts_us: 2,
        rtt_us: 3,
        rate: 4,
        recv_rate: 5,
        loss_ppm: 6,
        flags: 0,
    };
    assert_eq!(src.outgoing(&agent(ccfb, 2, 0)), Some(Outgoing::Session));
    assert_eq!(src.outgoing(b"not an rmcast datagram"), None);
    assert_eq!(src.untranslatable, 1);
    let d = agent(
        Pgm::Odata {
            seq: 0,
            payload: b"x",
        },
        1,
        0,
    );
    let w = pgm_of(src.outgoing(&d)).0;
    let mut p = rfc3208::Packet::decode(&w).unwrap();
    p.sport += 1;
    assert!(!rx.ours(&p));
    p.sport -= 1;
    p.dport = 7501;
    assert!(!rx.ours(&p));
    p.dport = 7500;
    p.gsi = Gsi([9; 6]);
    assert!(!rx.ours(&p));
    // An SPMR goes upstream.
    let w = rx.spmr().unwrap();
    let spmr = rfc3208::Packet::decode(&w).unwrap();
    assert_eq!(
        (spmr.body, spmr.sport, spmr.dport),
        (Body::Spmr, 7500, 4000)
    );
}

#[test]
fn parity_and_block_naks_cross_the_wire_with_opt_parity_and_back() {
    let (mut src, mut rx) = pair(0);
    src.set_fec(4, 1);
    rx.set_fec(4, 1);
    // The SPM announces the FEC parameters.
    let d = agent(
        Pgm::Spm {
            spm_seq: 0,
            trail: 0,
            lead: 12,
        },
        1,
        0,
    );
    let p_bytes = pgm_of(src.outgoing(&d)).0;
    let p = rfc3208::Packet::decode(&p_bytes).unwrap();
    assert!(p.flags.network);
    assert_eq!(
        p.options,
        vec![Opt::ParityPrm {
            proactive: true,
            on_demand: true,
            tg_size: 4
        }]
    );
    rx.incoming(&p, SOURCE_NODE).unwrap();
    // Index 0 (proactive) is ODATA, 3 RDATA with sqn tg|3, 6 RDATA tg|2 in parity group 1.
    for (index, odata, sqn, grp) in [
        (0u16, true, 8u32, None),
        (3, false, 11, None),
        (6, false, 10, Some(1)),
    ] {
        let d = agent(
            Pgm::Parity {
                block: 2,
                index,
                k: 4,
                payload: b"sym",
            },
            1,
            FLAG_RETRANSMISSION,
        );
        let w = pgm_of(src.outgoing(&d)).0;
        let p = rfc3208::Packet::decode(&w).unwrap();
        assert!(p.flags.parity, "{p:?}");
        let data = match p.body {
            Body::Odata(x) if odata => x,
            Body::Rdata(x) if !odata => x,
            other => panic!("{other:?}"),
        };
        assert_eq!(data.sqn, sqn);
        let want: Vec<Opt<'_>> = grp
            .map(|group| Opt::ParityGrp { group })
            .into_iter()
            .collect();
        assert_eq!(p.options, want);
        assert_eq!(
            message(&rx.incoming(&p, SOURCE_NODE).unwrap()),
            (d_message(&d), 1, FLAG_RETRANSMISSION)
        );
    }
    // A block NAK for 5 symbols in all: NAK tg|1 in parity group 1, upstream; its BNCF back.
    let d = agent(Pgm::BlockNak { block: 2, total: 5 }, 2, 0);
    let (w, upstream) = pgm_of(rx.outgoing(&d));
    assert!(upstream);
    let p = rfc3208::Packet::decode(&w).unwrap();
    assert!(p.flags.parity && matches!(p.body, Body::Nak(n) if n.sqn == 9));
    assert_eq!(p.options, vec![Opt::ParityGrp { group: 1 }]);
    assert_eq!(
        message(&src.incoming(&p, RECEIVER_NODE).unwrap()).0,
        Pgm::BlockNak { block: 2, total: 5 }
    );
    let d = agent(Pgm::BlockNcf { block: 2, total: 3 }, 1, 0);
    let w = pgm_of(src.outgoing(&d)).0;
    let p = rfc3208::Packet::decode(&w).unwrap();
    assert!(
        p.flags.parity && matches!(p.body, Body::Ncf(n) if n.sqn == 11) && p.options.is_empty()
    );
    assert_eq!(
        message(&rx.incoming(&p, SOURCE_NODE).unwrap()).0,
        Pgm::BlockNcf { block: 2, total: 3 }
    );
    // A side that does not know k drops parity (counted), rather than taking it as data.
    let (_, mut plain) = pair(0);
    assert_eq!(plain.incoming(&p, SOURCE_NODE), None);
    assert_eq!(plain.untranslatable, 1);
}

/// The message of an agent's datagram.
fn d_message(d: &[u8]) -> Pgm<'_> {
    message(d).0
}

#[test]
fn a_source_s_tsi_follows_from_its_session_and_node() {
    let a = tsi_of(7, NodeId(0));
    assert_eq!(a, tsi_of(7, NodeId(0)));
    assert_ne!(a.gsi, tsi_of(7, NodeId(1)).gsi);
    assert_ne!(a.gsi, tsi_of(8, NodeId(0)).gsi);
    assert!(a.sport >= 1024);
}
