//! Golden bytes laid out field by field after RFC 3208's figures (§8.1 SPM, §8.2 data,
//! §8.3 NAK/NCF, §9 options, §13.6 SPMR), round trips, and properties.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::options::{id, Opt};
use super::*;
use proptest::prelude::*;

const GSI: Gsi = Gsi([0x11, 0x22, 0x33, 0x44, 0x55, 0x66]);
const SRC: [u8; 4] = [10, 0, 0, 1];
const GRP: [u8; 4] = [239, 1, 2, 3];

fn v4(a: [u8; 4]) -> IpAddr {
    IpAddr::V4(Ipv4Addr::from(a))
}

/// A packet from the test GSI with no header option bits.
fn pkt<'a>(sport: u16, dport: u16, body: Body<'a>, options: Vec<Opt<'a>>) -> Packet<'a> {
    Packet {
        sport,
        dport,
        gsi: GSI,
        flags: Flags::default(),
        body,
        options,
    }
}

/// The encoding without checksum (field 0), to compare with the figures' bytes.
fn bytes_nocsum(p: &Packet<'_>) -> Vec<u8> {
    let mut v = Vec::new();
    p.encode_with(&mut v, Checksum::None).unwrap();
    v
}

/// The 1's complement sum of a packet with its checksum in place: all ones when it is right.
fn sum_with_field(b: &[u8]) -> u16 {
    let mut s: u32 = 0;
    for c in b.chunks(2) {
        s += u32::from(u16::from_be_bytes([c[0], *c.get(1).unwrap_or(&0)]));
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s as u16
}

#[test]
fn checksum_matches_rfc1071_example() {
    // RFC 1071 §3: the words 0001 f203 f4f5 f6f7 sum to ddf2; the checksum is its complement.
    assert_eq!(
        checksum(&[0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7]),
        !0xddf2
    );
    // An odd length pads with a zero byte.
    assert_eq!(checksum(&[0x01]), !0x0100);
    // A sum of all ones would give 0, which means "none": it is sent as ffff.
    assert_eq!(checksum(&[0xff, 0xff]), 0xffff);
}

#[test]
fn spm_golden() {
    let p = pkt(
        0x1234,
        7500,
        Body::Spm {
            sqn: 7,
            trail: 0x10,
            lead: 0x20,
            path: v4(SRC),
        },
        vec![],
    );
    #[rustfmt::skip]
    let want: Vec<u8> = vec![
        0x12, 0x34, 0x1d, 0x4c,             // source port, destination port 7500
        0x00, 0x00, 0x00, 0x00,             // type SPM, options none, checksum (none)
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66, // GSI
        0x00, 0x00,                         // TSDU length
        0, 0, 0, 7,                         // SPM's sequence number
        0, 0, 0, 0x10,                      // trailing edge
        0, 0, 0, 0x20,                      // leading edge
        0x00, 0x01, 0x00, 0x00,             // NLA AFI IPv4, reserved
        10, 0, 0, 1,                        // path NLA
    ];
    assert_eq!(bytes_nocsum(&p), want);
    let full = p.to_vec().unwrap();
    assert_eq!(full[..6], want[..6]);
    assert_eq!(full[8..], want[8..]);
    assert_eq!(
        sum_with_field(&full),
        0xffff,
        "the checksum makes the sum all ones"
    );
    assert_eq!(Packet::decode(&full).unwrap(), p);
    assert_eq!(Packet::decode(&want).unwrap(), p, "checksum 0 means none");
    assert_eq!(
        p.tsi(),
        Tsi {
            gsi: GSI,
            sport: 0x1234
        }
    );
    assert_eq!(p.tsi().to_string(), "17.34.51.68.85.102.4660");
}

#[test]
fn odata_with_fragment_golden() {
    let p = Packet {
        sport: 0x1234,
        dport: 7500,
        gsi: GSI,
        flags: Flags::default(),
        body: Body::Odata(Data {
            sqn: 0x0102_0304,
            trail: 0x0102_0300,
            payload: b"abc",
        }),
        options: vec![Opt::Fragment {
            first_sqn: 0x0102_0303,
            offset: 1400,
            apdu_len: 1403,
        }],
    };
    #[rustfmt::skip]
    let want: Vec<u8> = vec![
        0x12, 0x34, 0x1d, 0x4c,
        0x04, 0x01, 0x00, 0x00,             // ODATA, OPT_PRESENT
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
        0x00, 0x03,                         // TSDU length 3
        1, 2, 3, 4,                         // data packet sequence number
        1, 2, 3, 0,                         // trailing edge
        0x00, 0x04, 0x00, 0x14,             // OPT_LENGTH, 4, total 4 + 16
        0x81, 0x10, 0x00, 0x00,             // OPT_FRAGMENT | OPT_END, 16, reserved
        1, 2, 3, 3,                         // first sequence number
        0, 0, 0x05, 0x78,                   // offset 1400
        0, 0, 0x05, 0x7b,                   // APDU length 1403
        b'a', b'b', b'c',
    ];
    assert_eq!(bytes_nocsum(&p), want);
    let full = p.to_vec().unwrap();
    assert_eq!(sum_with_field(&full), 0xffff);
    assert_eq!(Packet::decode(&full).unwrap(), p);
}

#[test]
fn nak_with_list_golden_and_ports_swapped() {
    let p = Packet {
        sport: 7500,
        dport: 0x1234,
        gsi: GSI,
        flags: Flags::default(),
        body: Body::Nak(NakBody {
            sqn: 5,
            source: v4(SRC),
            group: v4(GRP),
        }),
        options: vec![Opt::NakList(vec![6, 9])],
    };
    #[rustfmt::skip]
    let want: Vec<u8> = vec![
        0x1d, 0x4c, 0x12, 0x34,             // upstream: the ports swapped
        0x08, 0x01, 0x00, 0x00,             // NAK, OPT_PRESENT
        0x11, 0x22, 0x33, 0x44, 0x55, 0x66,
        0x00, 0x00,
        0, 0, 0, 5,                         // requested sequence number
        0x00, 0x01, 0x00, 0x00, 10, 0, 0, 1,   // source NLA
        0x00, 0x01, 0x00, 0x00, 239, 1, 2, 3,  // multicast group NLA
        0x00, 0x04, 0x00, 0x10,             // OPT_LENGTH, total 4 + 12
        0x82, 0x0c, 0x00, 0x00,             // OPT_NAK_LIST | OPT_END, 12
        0, 0, 0, 6,
        0, 0, 0, 9,
    ];
    assert_eq!(bytes_nocsum(&p), want);
    assert_eq!(Packet::decode(&p.to_vec().unwrap()).unwrap(), p);
    assert_eq!(
        p.tsi(),
        Tsi {
            gsi: GSI,
            sport: 0x1234
        },
        "the TSI's port is dport"
    );
    assert_eq!(udp::route(&p.body), udp::Route::Source);
}

#[test]
fn ncf_ipv6_and_spmr_golden() {
    let six: IpAddr = "ff3e::8000:1".parse().unwrap();
    let src6: IpAddr = "2001:db8::1".parse().unwrap();
    let ncf = pkt(
        1,
        2,
        Body::Ncf(NakBody {
            sqn: 3,
            source: src6,
            group: six,
        }),
        vec![],
    );
    let b = bytes_nocsum(&ncf);
    assert_eq!(b.len(), 16 + 4 + 2 * (4 + 16));
    assert_eq!(b[4], kind::NCF);
    assert_eq!(b[20..24], [0, 2, 0, 0], "AFI 2 is IPv6");
    assert_eq!(
        b[24..40],
        "2001:db8::1".parse::<Ipv6Addr>().unwrap().octets()
    );
    assert_eq!(Packet::decode(&ncf.to_vec().unwrap()).unwrap(), ncf);
    let spmr = pkt(7500, 0x1234, Body::Spmr, vec![]);
    #[rustfmt::skip]
    let want = [0x1d, 0x4c, 0x12, 0x34, 0x0c, 0, 0, 0, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0, 0];
    assert_eq!(bytes_nocsum(&spmr), want);
}

#[test]
fn spm_with_parity_prm_and_rdata_parity_golden() {
    let spm = Packet {
        sport: 1,
        dport: 2,
        gsi: GSI,
        flags: Flags {
            network: true,
            ..Flags::default()
        },
        body: Body::Spm {
            sqn: 1,
            trail: 0,
            lead: 0,
            path: v4(SRC),
        },
        options: vec![Opt::ParityPrm {
            proactive: false,
            on_demand: true,
            tg_size: 16,
        }],
    };
    let b = bytes_nocsum(&spm);
    assert_eq!(b[5], opt_bits::PRESENT | opt_bits::NETWORK);
    #[rustfmt::skip]
    let opts = [0x00, 0x04, 0x00, 0x0c, 0x88, 0x08, 0x00, 0x02, 0, 0, 0, 16];
    assert_eq!(b[36..], opts);
    let rdata = Packet {
        sport: 1,
        dport: 2,
        gsi: GSI,
        flags: Flags {
            parity: true,
            ..Flags::default()
        },
        body: Body::Rdata(Data {
            sqn: 0x20,
            trail: 0,
            payload: &[0xaa; 5],
        }),
        options: vec![Opt::ParityGrp { group: 0x20 }],
    };
    let b = bytes_nocsum(&rdata);
    assert_eq!(b[4..6], [kind::RDATA, opt_bits::PARITY | opt_bits::PRESENT]);
    assert_eq!(b[24..36], [0, 4, 0, 12, 0x89, 8, 0, 0, 0, 0, 0, 0x20]);
    for p in [spm, rdata] {
        assert_eq!(Packet::decode(&p.to_vec().unwrap()).unwrap(), p);
    }
}

/// An ODATA with the given options bytes (after the data header), TSDU 0.
fn odata_with_opts(opts: &[u8]) -> Vec<u8> {
    let mut b = vec![0, 1, 0, 2, kind::ODATA, opt_bits::PRESENT, 0, 0];
    b.extend_from_slice(&GSI.0);
    b.extend_from_slice(&[0, 0, 0, 0, 0, 9, 0, 0, 0, 1]);
    b.extend_from_slice(opts);
    b
}

#[test]
fn unknown_options_are_skipped_by_their_length() {
    // OPT_FIN (0x0e, 4 bytes) and an unassigned type (0x3f, 6 bytes) around a fragment.
    #[rustfmt::skip]
    let b = odata_with_opts(&[
        0x00, 0x04, 0x00, 0x1e,
        0x0e, 0x04, 0x00, 0x00,
        0x01, 0x10, 0x00, 0x00, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0, 0,
        0xbf, 0x06, 0x02, 0x00, 0xde, 0xad,
    ]);
    let p = Packet::decode(&b).unwrap();
    assert_eq!(
        p.options,
        vec![
            Opt::Other {
                id: id::FIN,
                value: &[0, 0]
            },
            Opt::Fragment {
                first_sqn: 9,
                offset: 0,
                apdu_len: 0
            },
            Opt::Other {
                id: 0x3f,
                value: &[0x02, 0x00, 0xde, 0xad]
            },
        ]
    );
    assert_eq!(
        bytes_nocsum(&p),
        b,
        "kept whole, they encode back to the same bytes"
    );
}

#[test]
fn malformed_options_are_errors() {
    let cases: [&[u8]; 8] = [
        &[0x01, 0x04, 0x00, 0x08, 0x8e, 0x04, 0, 0], // first is not OPT_LENGTH
        &[0x00, 0x04, 0x00, 0x08, 0x0e, 0x04, 0, 0], // no OPT_END
        &[0x00, 0x04, 0x00, 0x0c, 0x8e, 0x04, 0, 0, 0x8e, 0x04, 0, 0], // bytes after OPT_END
        &[0x00, 0x05, 0x00, 0x08, 0x8e, 0x04, 0, 0], // an OPT_LENGTH of 5 bytes
        &[0x00, 0x04, 0x00, 0x08, 0x8e, 0x08, 0, 0], // option past the total
        &[0x00, 0x04, 0x00, 0x08, 0x80, 0x04, 0, 4], // a second OPT_LENGTH
        &[0x00, 0x04, 0x00, 0x08, 0x82, 0x04, 0, 0], // empty NAK list
        &[0x00, 0x04, 0x00, 0x06, 0x8e, 0x02],       // an option of 2 bytes
    ];
    for (i, c) in cases.iter().enumerate() {
        let b = odata_with_opts(c);
        let r = Packet::decode(&b);
        assert!(matches!(r, Err(Error::Options(_))), "case {i}: {r:?}");
    }
    // A total length past the packet is truncation.
    let b = odata_with_opts(&[0x00, 0x04, 0x00, 0x40, 0x8e, 0x04, 0, 0]);
    let r = Packet::decode(&b);
    assert!(matches!(r, Err(Error::Truncated { .. })), "{r:?}");
}

#[test]
fn header_rules() {
    let p = pkt(
        1,
        2,
        Body::Odata(Data {
            sqn: 1,
            trail: 0,
            payload: b"hello",
        }),
        vec![],
    );
    let good = p.to_vec().unwrap();
    let mut bad = good.clone();
    *bad.last_mut().unwrap() ^= 1;
    assert!(matches!(Packet::decode(&bad), Err(Error::Checksum { .. })));
    let mut ty = bytes_nocsum(&p);
    ty[4] = 0x01; // POLL
    assert_eq!(Packet::decode(&ty), Err(Error::Type(0x01)));
    let mut tsdu = bytes_nocsum(&p);
    tsdu[15] = 4;
    assert_eq!(Packet::decode(&tsdu), Err(Error::Tsdu { tsdu: 4, data: 5 }));
    let mut afi = bytes_nocsum(&Packet {
        body: Body::Spm {
            sqn: 0,
            trail: 0,
            lead: 0,
            path: v4(SRC),
        },
        ..p.clone()
    });
    afi[29] = 3;
    assert_eq!(Packet::decode(&afi), Err(Error::Afi(3)));
    for n in 0..good.len() {
        assert!(Packet::decode(&good[..n]).is_err(), "a prefix of {n} bytes");
    }
}

#[test]
fn encode_refuses_what_it_cannot_write() {
    let big = vec![0u8; 70_000];
    let mut p = pkt(
        1,
        2,
        Body::Odata(Data {
            sqn: 1,
            trail: 0,
            payload: &big,
        }),
        vec![],
    );
    let mut out = vec![9];
    assert!(p.encode(&mut out).is_err());
    p.body = Body::Spmr;
    for o in [
        Opt::NakList(vec![]),
        Opt::NakList((0..63).collect()),
        Opt::Other {
            id: id::FRAGMENT,
            value: &[0],
        },
        Opt::Other {
            id: 0x3f,
            value: &[],
        },
    ] {
        p.options = vec![o];
        assert!(p.encode(&mut out).is_err());
        assert_eq!(out, vec![9], "an error leaves the buffer as it was");
    }
}

// ---------------------------------------------------------------------------- properties

/// The owned parts of an arbitrary packet; [`build`] borrows a packet from them.
#[derive(Debug, Clone)]
struct Spec {
    ports: (u16, u16),
    gsi: [u8; 6],
    flags: (bool, bool, bool),
    kind: u8,
    nums: (u32, u32, u32),
    addrs: (IpAddr, IpAddr),
    payload: Vec<u8>,
    opts: Vec<OptSpec>,
}

#[derive(Debug, Clone)]
enum OptSpec {
    Fragment(u32, u32, u32),
    NakList(Vec<u32>),
    ParityPrm(bool, bool, u32),
    ParityGrp(u32),
    Other(u8, Vec<u8>),
}

fn addr() -> impl Strategy<Value = IpAddr> {
    prop_oneof![
        any::<[u8; 4]>().prop_map(|a| IpAddr::V4(a.into())),
        any::<[u8; 16]>().prop_map(|a| IpAddr::V6(a.into())),
    ]
}

fn opt_spec() -> impl Strategy<Value = OptSpec> {
    prop_oneof![
        any::<(u32, u32, u32)>().prop_map(|(a, b, c)| OptSpec::Fragment(a, b, c)),
        prop::collection::vec(any::<u32>(), 1..=62).prop_map(OptSpec::NakList),
        any::<(bool, bool, u32)>().prop_map(|(a, b, c)| OptSpec::ParityPrm(a, b, c)),
        any::<u32>().prop_map(OptSpec::ParityGrp),
        (
            (1u8..0x80).prop_filter("not modelled", |i| !options::is_modelled(*i)),
            prop::collection::vec(any::<u8>(), 1..40)
        )
            .prop_map(|(i, v)| OptSpec::Other(i, v)),
    ]
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        any::<(u16, u16)>(),
        any::<[u8; 6]>(),
        any::<(bool, bool, bool)>(),
        prop::sample::select(vec![0x00u8, 0x04, 0x05, 0x08, 0x09, 0x0a, 0x0c]),
        any::<(u32, u32, u32)>(),
        (addr(), addr()),
        prop::collection::vec(any::<u8>(), 0..200),
        prop::collection::vec(opt_spec(), 0..5),
    )
        .prop_map(
            |(ports, gsi, flags, kind, nums, addrs, payload, opts)| Spec {
                ports,
                gsi,
                flags,
                kind,
                nums,
                addrs,
                payload,
                opts,
            },
        )
}

fn build(s: &Spec) -> Packet<'_> {
    let nak = NakBody {
        sqn: s.nums.0,
        source: s.addrs.0,
        group: s.addrs.1,
    };
    let data = Data {
        sqn: s.nums.0,
        trail: s.nums.1,
        payload: &s.payload,
    };
    let body = match s.kind {
        kind::SPM => Body::Spm {
            sqn: s.nums.0,
            trail: s.nums.1,
            lead: s.nums.2,
            path: s.addrs.0,
        },
        kind::ODATA => Body::Odata(data),
        kind::RDATA => Body::Rdata(data),
        kind::NAK => Body::Nak(nak),
        kind::NNAK => Body::Nnak(nak),
        kind::NCF => Body::Ncf(nak),
        _ => Body::Spmr,
    };
    let options = s
        .opts
        .iter()
        .map(|o| match o {
            OptSpec::Fragment(a, b, c) => Opt::Fragment {
                first_sqn: *a,
                offset: *b,
                apdu_len: *c,
            },
            OptSpec::NakList(l) => Opt::NakList(l.clone()),
            OptSpec::ParityPrm(a, b, c) => Opt::ParityPrm {
                proactive: *a,
                on_demand: *b,
                tg_size: *c,
            },
            OptSpec::ParityGrp(g) => Opt::ParityGrp { group: *g },
            OptSpec::Other(i, v) => Opt::Other { id: *i, value: v },
        })
        .collect();
    Packet {
        sport: s.ports.0,
        dport: s.ports.1,
        gsi: Gsi(s.gsi),
        flags: Flags {
            network: s.flags.0,
            var_pktlen: s.flags.1,
            parity: s.flags.2,
        },
        body,
        options,
    }
}

proptest! {
    #[test]
    fn decode_of_encode_is_identity(s in spec(), csum in any::<bool>()) {
        let p = build(&s);
        let mut b = Vec::new();
        let mode = if csum { Checksum::Compute } else { Checksum::None };
        let n = p.encode_with(&mut b, mode).unwrap();
        prop_assert_eq!(n, b.len());
        prop_assert_eq!(Packet::decode(&b).unwrap(), p);
        if csum {
            prop_assert_eq!(sum_with_field(&b), 0xffff);
        }
    }

    #[test]
    fn decode_never_panics(b in prop::collection::vec(any::<u8>(), 0..300)) {
        let _ = Packet::decode(&b);
    }

    #[test]
    fn decode_of_mutated_packets_never_panics(
        s in spec(),
        flips in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut b = Vec::new();
        build(&s).encode_with(&mut b, Checksum::None).unwrap();
        for (i, x) in flips {
            let i = i.index(b.len());
            b[i] ^= x;
        }
        let n = cut.index(b.len() + 1);
        if let Ok(p) = Packet::decode(&b[..n]) {
            // Whatever it accepts, it writes back to bytes it reads the same way.
            let again = bytes_nocsum(&p);
            prop_assert_eq!(Packet::decode(&again).unwrap(), p);
        }
    }
}
