//! Wireshark's own PGM dissector reads `rmcast_wire::rfc3208` packets (issue 62): a session's
//! worth of SPM, ODATA (whole and fragmented APDUs), NAK with OPT_NAK_LIST, NCF, RDATA,
//! SPMR, NNAK, FEC parity with OPT_PARITY_PRM/OPT_PARITY_GRP, an unknown option and IPv6
//! NLAs, encoded by the codec, written as UDP over IPv4 over Ethernet by the simulator's pcap
//! writer, and read back with `tshark -d udp.port==PORT,pgm`. Every frame must dissect as
//! PGM, none malformed or with a bad checksum, and show the fields the codec set.
//!
//! Skipped (with a note) when tshark is not installed. `RMCAST_PGM_PCAP=FILE` keeps the
//! capture.

#[path = "../../../tools/wireshark/tshark.rs"]
mod tshark;

use rmcast_proto::{Bytes, Dest, GroupId, NodeId, Time};
use rmcast_sim::pcap;
use rmcast_sim::PacketRecord;
use rmcast_wire::rfc3208::options::id;
use rmcast_wire::rfc3208::{Body, Data, Flags, Gsi, NakBody, Opt, Packet};
use std::net::IpAddr;
use std::process::Command;

const GSI: Gsi = Gsi([0x02, 0x00, 0x0a, 0x00, 0x00, 0x01]);
/// The TSI's source port and the data-destination port (OpenPGM's default 7500).
const SPORT: u16 = 40_000;
const DPORT: u16 = 7500;

fn ip(s: &str) -> IpAddr {
    s.parse().expect("address")
}

fn down(body: Body<'static>, options: Vec<Opt<'static>>, flags: Flags) -> Packet<'static> {
    Packet {
        sport: SPORT,
        dport: DPORT,
        gsi: GSI,
        flags,
        body,
        options,
    }
}

fn up(body: Body<'static>, options: Vec<Opt<'static>>) -> Packet<'static> {
    Packet {
        sport: DPORT,
        dport: SPORT,
        gsi: GSI,
        flags: Flags::default(),
        body,
        options,
    }
}

fn nak(sqn: u32, v6: bool) -> NakBody {
    if v6 {
        NakBody {
            sqn,
            source: ip("2001:db8::1"),
            group: ip("ff3e::8000:1"),
        }
    } else {
        NakBody {
            sqn,
            source: ip("10.0.0.1"),
            group: ip("239.1.0.1"),
        }
    }
}

fn odata(sqn: u32, payload: &'static [u8]) -> Body<'static> {
    Body::Odata(Data {
        sqn,
        trail: 100,
        payload,
    })
}

/// The session, in order, and whether each packet goes to the source (unicast).
fn session() -> Vec<(Packet<'static>, bool)> {
    let none = Flags::default();
    let spm = |sqn, lead| Body::Spm {
        sqn,
        trail: 100,
        lead,
        path: ip("10.0.0.1"),
    };
    let frag = |offset| Opt::Fragment {
        first_sqn: 102,
        offset,
        apdu_len: 10,
    };
    let netsig = Flags {
        network: true,
        ..none
    };
    let parity = Flags {
        parity: true,
        ..none
    };
    vec![
        (down(spm(1, 99), vec![], none), false),
        (down(odata(100, b"apdu one"), vec![], none), false),
        (down(odata(101, b"apdu two"), vec![], none), false),
        (down(odata(102, b"apdu "), vec![frag(0)], none), false),
        (down(odata(103, b"three"), vec![frag(5)], none), false),
        (
            up(
                Body::Nak(nak(101, false)),
                vec![Opt::NakList(vec![102, 103])],
            ),
            true,
        ),
        (
            down(
                Body::Ncf(nak(101, false)),
                vec![Opt::NakList(vec![102, 103])],
                none,
            ),
            false,
        ),
        (
            down(
                Body::Rdata(Data {
                    sqn: 101,
                    trail: 100,
                    payload: b"apdu two",
                }),
                vec![],
                none,
            ),
            false,
        ),
        (up(Body::Spmr, vec![]), true),
        (up(Body::Nnak(nak(104, true)), vec![]), true),
        (
            down(
                spm(2, 103),
                vec![Opt::ParityPrm {
                    proactive: false,
                    on_demand: true,
                    tg_size: 4,
                }],
                netsig,
            ),
            false,
        ),
        (
            down(
                Body::Rdata(Data {
                    sqn: 100,
                    trail: 100,
                    payload: b"parity!!",
                }),
                vec![Opt::ParityGrp { group: 100 }],
                parity,
            ),
            false,
        ),
        (
            down(
                spm(3, 103),
                vec![Opt::Other {
                    id: id::FIN,
                    value: &[0, 0],
                }],
                none,
            ),
            false,
        ),
    ]
}

/// tshark's fields for every frame: one line each, `|`-separated, values of a repeated field
/// `,`-separated.
fn tshark_fields(file: &std::path::Path, fields: &[&str; 16]) -> Vec<Vec<String>> {
    let mut args = Vec::new();
    for port in [pcap::STANDARD_PORT, pcap::node_port(NodeId(0))] {
        args.extend(["-d".to_owned(), format!("udp.port=={port},pgm")]);
    }
    args.extend(["-o", "pgm.check_checksum:TRUE"].map(str::to_owned));
    tshark::fields(file, &args, fields)
}

#[test]
fn wireshark_reads_every_rfc3208_packet() {
    if !tshark::available() {
        return;
    }
    let packets = session();
    let mut datagrams: Vec<(Vec<u8>, bool)> = packets
        .iter()
        .map(|(p, to_source)| (p.to_vec().expect("encodes"), *to_source))
        .collect();
    // The control: an ODATA whose last byte changed after its checksum was computed.
    let mut bad = datagrams[1].0.clone();
    *bad.last_mut().expect("data") ^= 0x20;
    datagrams.push((bad, false));
    let records: Vec<PacketRecord> = datagrams
        .into_iter()
        .enumerate()
        .map(|(i, (payload, to_source))| PacketRecord {
            id: i as u64,
            time: Time::from_millis(i as u64),
            src: NodeId(if to_source { 1 } else { 0 }),
            dest: if to_source {
                Dest::Node(NodeId(0))
            } else {
                Dest::Group(GroupId(1))
            },
            class: None,
            payload: Bytes::from(payload),
        })
        .collect();
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("pgm.pcap");
    pcap::write(std::fs::File::create(&file).expect("create pcap"), &records).expect("write pcap");
    if let Some(keep) = std::env::var_os("RMCAST_PGM_PCAP") {
        // Keep the capture to look at in Wireshark.
        std::fs::copy(&file, keep).expect("copy the capture");
    }
    let rows = tshark_fields(&file, &FIELDS);
    assert_eq!(
        rows.len(),
        packets.len() + 1,
        "one line per frame: {rows:?}"
    );
    let verbose = tshark_verbose(&file);
    for (i, (p, _)) in packets.iter().enumerate() {
        check_frame(
            p,
            &rows[i],
            verbose.get(i).map_or("", String::as_str),
            i + 1,
        );
    }
    // The control shows that the dissector does check the checksum.
    let control = Row(&rows[packets.len()]);
    assert!(control.get("frame.protocols").contains(":udp:pgm"));
    assert_ne!(control.get("pgm.bad_checksum"), "", "{:?}", control.0);
    assert!(
        control.get("pgm.hdr.cksum.status").ends_with(",0"),
        "{:?}",
        control.0
    );
}

/// The fields read for every frame.
const FIELDS: [&str; 16] = [
    "frame.protocols",
    "_ws.malformed",
    "_ws.expert.severity",
    "pgm.bad_checksum",
    "pgm.hdr.cksum.status",
    "pgm.hdr.type",
    "pgm.hdr.sport",
    "pgm.hdr.dport",
    "pgm.hdr.gsi",
    "pgm.hdr.tsdulen",
    "pgm.spm.sqn",
    "pgm.spm.lead",
    "pgm.nak.sqn",
    "pgm.opts.fragment.first_sqn",
    "pgm.opts.fragment.fragment_offset",
    "pgm.opts.parity_prm.prm_grp",
];

/// One frame's fields.
struct Row<'a>(&'a [String]);

impl Row<'_> {
    fn get(&self, name: &str) -> String {
        let k = FIELDS.iter().position(|x| *x == name).expect("field");
        self.0.get(k).cloned().unwrap_or_default()
    }
}

/// `tshark -V`'s text, one string per frame.
fn tshark_verbose(file: &std::path::Path) -> Vec<String> {
    let mut cmd = Command::new("tshark");
    cmd.arg("-r").arg(file).arg("-V");
    for port in [pcap::STANDARD_PORT, pcap::node_port(NodeId(0))] {
        cmd.args(["-d", &format!("udp.port=={port},pgm")]);
    }
    let out = cmd.output().expect("tshark runs");
    let text = String::from_utf8_lossy(&out.stdout);
    text.split("\nFrame ")
        .map(str::to_owned)
        .collect::<Vec<_>>()
}

/// Frame `n`'s fields and verbose text show `p` as the codec wrote it.
fn check_frame(p: &Packet<'_>, row: &[String], verbose: &str, n: usize) {
    let f = Row(row);
    let ctx = format!("frame {n}: {row:?}");
    assert_eq!(f.get("_ws.malformed"), "", "{ctx}");
    if p.body == Body::Spmr && f.get("frame.protocols").ends_with(":udp:data") {
        // Wireshark 4.0's PGM dissector has no SPMR (type 0x0c): it leaves it as data.
        return;
    }
    assert!(f.get("frame.protocols").contains(":udp:pgm"), "{ctx}");
    assert_eq!(f.get("_ws.expert.severity"), "", "no expert info: {ctx}");
    assert_eq!(f.get("pgm.bad_checksum"), "", "{ctx}");
    // The last status is the verdict (1: good); 4.0 also puts the value under that name.
    assert!(
        f.get("pgm.hdr.cksum.status").ends_with(",1"),
        "checksum good: {ctx}"
    );
    assert_eq!(
        f.get("pgm.hdr.type"),
        format!("0x{:02x}", p.body.kind()),
        "{ctx}"
    );
    assert_eq!(f.get("pgm.hdr.sport"), p.sport.to_string(), "{ctx}");
    assert_eq!(f.get("pgm.hdr.dport"), p.dport.to_string(), "{ctx}");
    assert_eq!(f.get("pgm.hdr.gsi"), "02000a000001", "{ctx}");
    let hex = |v: u32| format!("0x{v:08x}");
    match &p.body {
        Body::Spm { sqn, lead, .. } => {
            assert_eq!(f.get("pgm.spm.sqn"), hex(*sqn), "{ctx}");
            assert_eq!(f.get("pgm.spm.lead"), hex(*lead), "{ctx}");
        }
        // Wireshark shows a data packet's sequence number under the SPM's field name.
        Body::Odata(d) | Body::Rdata(d) => {
            assert_eq!(f.get("pgm.spm.sqn"), hex(d.sqn), "{ctx}");
            assert_eq!(
                f.get("pgm.hdr.tsdulen"),
                d.payload.len().to_string(),
                "{ctx}"
            );
        }
        Body::Nak(k) | Body::Ncf(k) | Body::Nnak(k) => {
            assert_eq!(f.get("pgm.nak.sqn"), hex(k.sqn), "{ctx}");
            let src = format!("Source NLA: {}", k.source);
            assert!(verbose.contains(&src), "{src} in frame {n}:\n{verbose}");
        }
        Body::Spmr => {}
    }
    for o in &p.options {
        match o {
            Opt::NakList(l) => {
                // The field itself holds the text as bytes; the tree shows the list.
                let list: Vec<String> = l.iter().map(|s| format!("0x{s:x}")).collect();
                let want = format!("List({}): {}", l.len(), list.join(" "));
                assert!(verbose.contains(&want), "{want} in frame {n}:\n{verbose}");
            }
            Opt::Fragment {
                first_sqn, offset, ..
            } => {
                assert_eq!(
                    f.get("pgm.opts.fragment.first_sqn"),
                    hex(*first_sqn),
                    "{ctx}"
                );
                let off = f.get("pgm.opts.fragment.fragment_offset");
                assert_eq!(off, offset.to_string(), "{ctx}");
            }
            Opt::ParityPrm { tg_size, .. } => {
                assert_eq!(f.get("pgm.opts.parity_prm.prm_grp"), hex(*tg_size), "{ctx}");
            }
            Opt::ParityGrp { group } => {
                // Wireshark 4.0 shows the group number under the same field name.
                assert_eq!(f.get("pgm.opts.parity_prm.prm_grp"), hex(*group), "{ctx}");
            }
            Opt::Other { .. } => {
                assert!(verbose.contains("Option: Fin, Length: 4"), "{verbose}");
            }
        }
    }
}
