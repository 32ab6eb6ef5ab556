//! The Wireshark dissector (`tools/wireshark/rmcast.lua`) against the wire crate: tshark
//! with the dissector reads captures, and every field it shows must be the one the wire
//! crate reads from the same bytes. The dissector's fields and every kind's layout are
//! generated from the wire crate's declarations (`rmcast_wire::dissector`), so the fields
//! expected here are read by the same layouts (`rmcast_wire::layout::read_fields`): what
//! this checks is that the committed dissector is the generated one, that its reader walks
//! the layouts as the wire crate does, and that its hand-written checks flag what the
//! decoder refuses.
//!
//! * one datagram of every kind of every family (built with the wire crate, written to a
//!   pcap here, on the simulator's port 7001 and on other ports, so the heuristic is
//!   exercised), plain, sealed (authenticated) and sealed and encrypted
//!   (`crates/net/src/secure.rs`);
//! * datagrams the wire crate refuses (mutations of the above): the dissector flags each
//!   one it shows as rmcast as malformed, and none that the wire crate accepts;
//! * `rmcast sim --pcap` captures of eleven protocols (saw, bap, rra, dsp, csp, cp, prmp,
//!   srm, lms, ff, xtp); `pgm`'s is RFC 3208, read by Wireshark's own PGM dissector
//!   (`crates/sim/tests/pgm_sim_pcap_tshark.rs`).
//!
//! Skipped (with a note) when tshark is not installed.

mod common;
#[path = "../../../tools/wireshark/tshark.rs"]
mod tshark;

use rmcast_wire::{
    lms, rra, saw, session, xtp, Envelope, Family, Message, Packet, FLAG_RETRANSMISSION, HEADER_LEN,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

fn dissector() -> PathBuf {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tools/wireshark/rmcast.lua");
    assert!(p.exists(), "{}", p.display());
    p
}

// ---------------------------------------------------------------------------------- pcap

/// One captured UDP datagram: its destination port and payload.
struct Captured {
    port: u16,
    payload: Vec<u8>,
}

/// Write `datagrams` as a pcap (microsecond timestamps, Ethernet, IPv4, UDP).
fn write_pcap(path: &Path, datagrams: &[Captured]) {
    let mut v = Vec::new();
    v.extend_from_slice(&0xa1b2_c3d4u32.to_le_bytes());
    v.extend_from_slice(&2u16.to_le_bytes());
    v.extend_from_slice(&4u16.to_le_bytes());
    v.extend_from_slice(&[0; 8]);
    v.extend_from_slice(&262_144u32.to_le_bytes());
    v.extend_from_slice(&1u32.to_le_bytes());
    for (i, d) in datagrams.iter().enumerate() {
        let mut f = vec![
            0x01, 0x00, 0x5e, 0x01, 0x00, 0x01, 0x02, 0, 10, 0, 0, 1, 0x08, 0x00,
        ];
        let ip_len = (20 + 8 + d.payload.len()) as u16;
        f.extend_from_slice(&[0x45, 0]);
        f.extend_from_slice(&ip_len.to_be_bytes());
        f.extend_from_slice(&(i as u16).to_be_bytes());
        f.extend_from_slice(&[0, 0, 64, 17, 0, 0, 10, 0, 0, 1, 239, 1, 0, 1]);
        f.extend_from_slice(&40_000u16.to_be_bytes());
        f.extend_from_slice(&d.port.to_be_bytes());
        f.extend_from_slice(&(ip_len - 20).to_be_bytes());
        f.extend_from_slice(&[0, 0]);
        f.extend_from_slice(&d.payload);
        v.extend_from_slice(&(i as u32).to_le_bytes());
        v.extend_from_slice(&0u32.to_le_bytes());
        v.extend_from_slice(&(f.len() as u32).to_le_bytes());
        v.extend_from_slice(&(f.len() as u32).to_le_bytes());
        v.extend_from_slice(&f);
    }
    std::fs::write(path, v).unwrap();
}

/// The UDP payloads of a pcap with Ethernet framing and IPv4 (what `rmcast sim --pcap`
/// writes), in order.
fn read_pcap(path: &Path) -> Vec<Captured> {
    let b = std::fs::read(path).unwrap();
    let magic = u32::from_le_bytes(b[0..4].try_into().unwrap());
    assert!(magic == 0xa1b2_c3d4 || magic == 0xa1b2_3c4d, "not a pcap");
    assert_eq!(
        u32::from_le_bytes(b[20..24].try_into().unwrap()),
        1,
        "not Ethernet"
    );
    let mut at = 24;
    let mut out = Vec::new();
    while at < b.len() {
        let incl = u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
        let f = &b[at + 16..at + 16 + incl];
        at += 16 + incl;
        assert_eq!(&f[12..14], &[0x08, 0x00], "not IPv4");
        let ihl = usize::from(f[14] & 0x0f) * 4;
        assert_eq!(f[14 + 9], 17, "not UDP");
        let udp = &f[14 + ihl..];
        let len = usize::from(u16::from_be_bytes([udp[4], udp[5]]));
        out.push(Captured {
            port: u16::from_be_bytes([udp[2], udp[3]]),
            payload: udp[8..len].to_vec(),
        });
    }
    out
}

// ------------------------------------------------------------------- expected fields

/// The fields the dissector must show for one datagram, as tshark prints them
/// (`-T fields -E occurrence=a`): field name → values in order.
#[derive(Default)]
struct Expect(BTreeMap<String, Vec<String>>);

impl Expect {
    fn f(&mut self, name: &str, v: impl ToString) {
        self.0
            .entry(format!("rmcast.{name}"))
            .or_default()
            .push(v.to_string());
    }
    /// A bytes field: absent when empty, lower-case hex otherwise.
    fn bytes(&mut self, name: &str, b: &[u8]) {
        if !b.is_empty() {
            self.f(name, hex(b));
        }
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().fold(String::new(), |mut s, x| {
        let _ = write!(s, "{x:02x}");
        s
    })
}

/// What the dissector must show for `datagram` (a plain datagram the wire crate accepts)
/// followed by `trailer` (the 24 bytes of a sealed datagram, if sealed); `opaque`: its body
/// is ciphertext, shown as such.
fn expect(datagram: &[u8], trailer: Option<&[u8]>, opaque: bool) -> Expect {
    let p = Packet::decode(datagram).unwrap();
    let h = p.header;
    let mut e = Expect::default();
    e.f("magic", "0x524d");
    e.f("version", 1);
    e.f("family", h.family as u8);
    e.f("family_name", h.family.name());
    e.f("kind", h.kind);
    e.f("flags", format!("0x{:02x}", h.flags));
    e.f("flags.retx", u8::from(h.flags & FLAG_RETRANSMISSION != 0));
    e.f("session", format!("0x{:08x}", h.session));
    e.f("source", h.source);
    e.f("length", h.payload_len);
    e.f("sealed", u8::from(trailer.is_some()));
    if let Some(t) = trailer {
        e.f(
            "trailer.counter",
            u64::from_be_bytes(t[..8].try_into().unwrap()),
        );
        e.bytes("trailer.tag", &t[8..]);
    }
    let body = &datagram[HEADER_LEN..];
    if opaque {
        e.bytes("ciphertext", body);
        e.f("kind_name", kind_name(&p.message));
        return e;
    }
    e.f("kind_name", kind_name(&p.message));
    body_fields(&mut e, datagram, &p.message);
    e
}

/// The kind's name as the dissector shows it: the wire crate's own (the dissector's tables
/// are generated from it).
fn kind_name(m: &Message<'_>) -> String {
    m.kind_name()
}

/// Every body field of `datagram` (which holds `m`), in the dissector's names: the fields its
/// kind's layout reads ([`rmcast_wire::layout::read_fields`], the layout the dissector's
/// tables are generated from), but for the two bodies the dissector reads by hand: the
/// records of an XTP DATA with RECS and an ANNOUNCE's `dsp` or `srm` parameters, whose
/// fields the wire crate's own decoders give.
fn body_fields(e: &mut Expect, datagram: &[u8], m: &Message<'_>) {
    let family = m.family();
    let layout = family.layout(datagram[4]).unwrap();
    let fields = rmcast_wire::layout::read_fields(layout, &datagram[HEADER_LEN..]).unwrap();
    for (name, v) in fields {
        match (m, name.as_str()) {
            (
                Message::Xtp(xtp::Message::Data {
                    options, payload, ..
                }),
                "payload",
            ) if options & xtp::opt::RECS != 0 => records(e, payload),
            (
                Message::Session(session::Message::Announce {
                    protocol, params, ..
                }),
                "params",
            ) => announce_params(e, *protocol, params),
            _ => e.f(&format!("{}.{name}", family.name()), v),
        }
    }
}

/// An XTP RECS payload: its records when it is whole ones, else the payload.
fn records(e: &mut Expect, payload: &[u8]) {
    let recs: Option<Vec<&[u8]>> = xtp::records(payload).map(|r| r.ok()).collect();
    match recs {
        Some(recs) if !payload.is_empty() => {
            for r in recs {
                e.f("xtp.record.len", r.len());
                e.bytes("xtp.record", r);
            }
        }
        _ => e.bytes("xtp.payload", payload),
    }
}

fn address(e: &mut Expect, a: std::net::SocketAddr) {
    match a.ip() {
        std::net::IpAddr::V4(ip) => {
            e.f("session.addr.family", 4);
            e.f("session.addr.ipv4", ip);
        }
        std::net::IpAddr::V6(ip) => {
            e.f("session.addr.family", 6);
            e.f("session.addr.ipv6", ip);
        }
    }
    e.f("session.addr.port", a.port());
}

/// An ANNOUNCE's parameters: `dsp`'s or `srm`'s peers when they decode, else raw bytes.
fn announce_params(e: &mut Expect, protocol: u8, params: &[u8]) {
    let dsp = (protocol == Family::Tree as u8)
        .then(|| session::DspParams::decode(params).ok())
        .flatten();
    let peers = (protocol == Family::Srm as u8)
        .then(|| session::decode_peers(params).ok())
        .flatten();
    if let Some(d) = dsp.filter(|_| !params.is_empty()) {
        e.f("session.dsp.status_min_us", d.status_min_us);
        e.f("session.dsp.status_max_us", d.status_max_us);
        e.f("session.dsp.local_rtd_us", d.local_rtd_us);
        e.f("session.dsp.r_f_milli", d.r_f_milli);
        e.f("session.count", d.entries.len());
        for x in &d.entries {
            e.f("session.node", x.node);
            e.f("session.region", x.region);
            e.f("session.role", x.role as u8);
            address(e, x.addr);
        }
    } else if let Some(p) = peers.filter(|_| !params.is_empty()) {
        e.f("session.count", p.len());
        for (node, a) in p {
            e.f("session.node", node);
            address(e, a);
        }
    } else {
        e.bytes("session.params", params);
    }
}

// ---------------------------------------------------------------------------- tshark

/// What tshark showed for one frame.
#[derive(Clone)]
struct Shown {
    /// Field name → the values (`;`-joined as tshark aggregates them).
    fields: BTreeMap<String, String>,
    /// Expert infos of severity error, malformed-packet marks and Lua errors.
    problems: Vec<String>,
}

/// Expert infos from this severity up are problems (PI_ERROR).
const PI_ERROR: u64 = 0x0080_0000;

/// Run tshark with the dissector over `pcap`, reading `columns` (and the expert infos);
/// `prefs` are `-o` settings. Also runs `-V` once and checks it for Lua errors and
/// malformed-packet marks.
/// Heuristic dissectors before port-registered ones: a socket capture's ephemeral ports are
/// random, and about 30 of them (ENIP's 44818, Elasticsearch's 54328, HCrt's 47000 …) are
/// registered to another dissector, which would otherwise take the datagram (and fail on it).
const HEURISTIC_FIRST: &str = "udp.try_heuristic_first:TRUE";

fn tshark(pcap: &Path, columns: &[String], prefs: &[&str]) -> Vec<Shown> {
    tshark_filtered(pcap, columns, prefs, None)
}

/// [`tshark`], the `-V` check only over the frames `filter` shows.
fn tshark_filtered(
    pcap: &Path,
    columns: &[String],
    prefs: &[&str],
    filter: Option<&str>,
) -> Vec<Shown> {
    let lua = format!("lua_script:{}", dissector().display());
    let mut verbose = Command::new("tshark");
    verbose
        .args(["-n", "-X", &lua, "-o", HEURISTIC_FIRST, "-V", "-r"])
        .arg(pcap);
    if let Some(f) = filter {
        verbose.args(["-Y", f]);
    }
    for p in prefs {
        verbose.args(["-o", p]);
    }
    let v = verbose.output().unwrap();
    assert!(
        v.status.success(),
        "tshark -V: {}",
        String::from_utf8_lossy(&v.stderr)
    );
    let text = String::from_utf8_lossy(&v.stdout);
    let stderr = String::from_utf8_lossy(&v.stderr);
    for bad in ["Lua Error", "Malformed Packet", "Dissector bug"] {
        assert!(
            !text.contains(bad) && !stderr.contains(bad),
            "tshark -V of {} says {bad:?}:\n{}",
            pcap.display(),
            text.lines()
                .filter(|l| l.contains(bad))
                .take(5)
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    assert!(
        text.contains("rmcast reliable multicast"),
        "the dissector decoded nothing in {}: {stderr}",
        pcap.display()
    );

    let fixed = [
        "frame.number",
        "udp.length",
        "_ws.expert.severity",
        "_ws.expert.message",
        "_ws.malformed",
    ];
    let mut cmd = Command::new("tshark");
    cmd.args(["-n", "-X", &lua, "-o", HEURISTIC_FIRST, "-r"])
        .arg(pcap)
        .args([
            "-T",
            "fields",
            "-E",
            "occurrence=a",
            "-E",
            "aggregator=;",
            "-E",
            "separator=/t",
        ]);
    for p in prefs {
        cmd.args(["-o", p]);
    }
    for c in fixed
        .iter()
        .copied()
        .chain(columns.iter().map(String::as_str))
    {
        cmd.args(["-e", c]);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "tshark -T fields: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|line| {
            let cells: Vec<&str> = line.split('\t').collect();
            assert_eq!(cells.len(), fixed.len() + columns.len(), "{line}");
            let mut problems = Vec::new();
            let sev: Vec<&str> = cells[2].split(';').collect();
            let msg: Vec<&str> = cells[3].split(';').collect();
            for (i, s) in sev.iter().enumerate() {
                if s.parse::<u64>().is_ok_and(|s| s >= PI_ERROR) {
                    problems.push(format!("expert {s}: {}", msg.get(i).unwrap_or(&"")));
                }
            }
            if !cells[4].is_empty() {
                problems.push(format!("malformed: {}", cells[3]));
            }
            let fields = columns
                .iter()
                .zip(&cells[fixed.len()..])
                .map(|(c, v)| (c.clone(), v.to_string()))
                .collect();
            Shown { fields, problems }
        })
        .collect()
}

/// The fields of `expected` against what tshark showed, frame by frame; every column not
/// expected for a frame must be empty. Returns the number of frames compared.
fn compare(what: &str, expected: &[Expect], shown: &[Shown]) -> usize {
    assert_eq!(
        expected.len(),
        shown.len(),
        "{what}: tshark shows {} frames, the capture has {}",
        shown.len(),
        expected.len()
    );
    let mut mismatches = Vec::new();
    for (i, (e, s)) in expected.iter().zip(shown).enumerate() {
        if !s.problems.is_empty() {
            mismatches.push(format!("frame {}: {}", i + 1, s.problems.join("; ")));
        }
        for (col, got) in &s.fields {
            let want = e.0.get(col).map(|v| v.join(";")).unwrap_or_default();
            if &want != got {
                mismatches.push(format!(
                    "frame {}: {col}: wire crate {want:?}, dissector {got:?}",
                    i + 1
                ));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{what}: {} mismatches, first ones:\n{}",
        mismatches.len(),
        mismatches
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    expected.len()
}

fn columns_of(expected: &[Expect]) -> Vec<String> {
    let mut c: Vec<String> = expected.iter().flat_map(|e| e.0.keys().cloned()).collect();
    c.sort();
    c.dedup();
    c
}

// ------------------------------------------------------------------------------ samples

/// One datagram of every kind of every family: the wire crate's own samples
/// ([`rmcast_wire::samples::every_kind`], which its golden-bytes test pins), and more of the
/// kinds whose layout varies with a field (an RRA DATA naming an acker, XTP records split
/// and whole, an LMS repair through a turning point, an END with every outcome, ANNOUNCEs
/// whose parameters are `dsp`'s, `srm`'s peer list, empty and malformed).
fn samples() -> Vec<Vec<u8>> {
    use rmcast_wire::samples::{ENV, P, RX};
    let (env, rx, p) = (ENV, RX, P);
    let mut recs = Vec::new();
    xtp::push_record(&mut recs, b"abc").unwrap();
    xtp::push_record(&mut recs, b"").unwrap();
    xtp::push_record(&mut recs, b"xy").unwrap();
    let members = session::encode_members(&[1, 2, 0xffff_ffff]);
    let outcomes = session::encode_outcomes(&[
        (1, session::Outcome::Completed),
        (9, session::Outcome::Failed),
        (12, session::Outcome::Evicted),
    ]);
    let v4: std::net::SocketAddr = "192.0.2.7:5001".parse().unwrap();
    let v6: std::net::SocketAddr = "[2001:db8::1]:6000".parse().unwrap();
    let dsp = session::DspParams {
        status_min_us: 1000,
        status_max_us: 2000,
        local_rtd_us: 300,
        r_f_milli: 1500,
        entries: vec![
            session::DspEntry {
                node: 1,
                region: 0,
                role: session::DspRole::Designated,
                addr: v4,
            },
            session::DspEntry {
                node: 2,
                region: 3,
                role: session::DspRole::Evicted,
                addr: v6,
            },
        ],
    }
    .encode()
    .unwrap();
    let peers = session::encode_peers(&[(5, v4), (6, v6)]).unwrap();
    let announce = |protocol: u8, params: &'static [u8]| session::Message::Announce {
        protocol,
        phase: session::Phase::Running,
        security: session::SECURITY_AUTH,
        ack_delay_us: 100,
        window: 16,
        ack_timeout_us: 5000,
        members: Box::leak(members.clone().into_boxed_slice()),
        params,
    };
    let leak = |v: &Vec<u8>| -> &'static [u8] { Box::leak(v.clone().into_boxed_slice()) };
    let mut list = rmcast_wire::samples::every_kind();
    list.extend::<[(Envelope, Message<'_>); 10]>([
        (
            rx,
            saw::Message::Data {
                seq: 0,
                payload: &[],
            }
            .into(),
        ),
        (
            rx,
            rra::Message::Data {
                seq: 9,
                low: 9,
                acker: 4,
                payload: p,
            }
            .into(),
        ),
        (
            rx,
            xtp::Message::Data {
                seq: 2,
                sync: 3,
                options: xtp::opt::RECS | xtp::opt::EOM | xtp::opt::SREQ,
                payload: leak(&recs),
            }
            .into(),
        ),
        (
            env,
            xtp::Message::Data {
                seq: 3,
                sync: 0,
                options: xtp::opt::RECS,
                payload: &[0, 9, 1],
            }
            .into(),
        ),
        (
            rx,
            lms::Message::Repair {
                seq: 1,
                tp: 3,
                tp_iface: 2,
                payload: p,
            }
            .into(),
        ),
        (
            env,
            session::Message::End {
                outcomes: leak(&outcomes),
            }
            .into(),
        ),
        (env, announce(Family::Tree as u8, leak(&dsp)).into()),
        (env, announce(Family::Srm as u8, leak(&peers)).into()),
        (env, announce(Family::Saw as u8, &[]).into()),
        (env, announce(Family::Tree as u8, &[1, 2, 3]).into()),
    ]);
    list.iter()
        .map(|(e, m)| Packet::to_vec(*e, m).unwrap())
        .collect()
}

/// The ports the samples go to: the simulator's 7001 (registered), others (heuristic), and
/// ENIP's 44818, an ephemeral port Wireshark registers to another protocol ([`HEURISTIC_FIRST`]).
const PORTS: [u16; 4] = [7001, 5000, 47_123, 44_818];

#[test]
fn the_committed_dissector_is_what_rmcast_dissector_prints() {
    let lua = std::fs::read_to_string(dissector()).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_rmcast"))
        .arg("dissector")
        .output()
        .expect("run rmcast dissector");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The binary embeds the file as it was built; the generated block is the wire crate's.
    let printed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        rmcast_wire::dissector::regenerate(&lua).as_deref(),
        Some(printed.as_str()),
        "tools/wireshark/rmcast.lua's tables differ from the wire format's: \
         run `rmcast dissector > tools/wireshark/rmcast.lua`"
    );
    assert_eq!(
        lua, printed,
        "run `rmcast dissector > tools/wireshark/rmcast.lua`"
    );
}

#[test]
fn every_kind_of_every_family_shows_the_fields_the_wire_crate_wrote() {
    if !tshark::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let samples = samples();
    // Every kind each family declares is among the samples.
    let mut kinds: Vec<(u8, u8)> = samples.iter().map(|d| (d[3], d[4])).collect();
    kinds.sort();
    kinds.dedup();
    let declared: usize = Family::ALL.iter().map(|f| f.kinds().len()).sum();
    assert_eq!(kinds.len(), declared, "{kinds:?}");

    let secret = [7u8; 32];
    let keys = |encrypt| rmcast_net::secure::Keys::from_secret(&secret, encrypt).unwrap();
    let mut auth = rmcast_net::secure::Sealer::new(keys(false), 1_700_000_000_000_000);
    let mut enc = rmcast_net::secure::Sealer::new(keys(true), 1_700_000_000_000_000);
    let seal = |s: &mut rmcast_net::secure::Sealer, d: &[u8]| {
        let mut out = Vec::new();
        s.seal(d, &mut out);
        out
    };

    // Plain and authenticated: every field decoded.
    let mut captured = Vec::new();
    let mut expected = Vec::new();
    for (i, d) in samples.iter().enumerate() {
        let port = PORTS[i % PORTS.len()];
        captured.push(Captured {
            port,
            payload: d.clone(),
        });
        expected.push(expect(d, None, false));
        let sealed = seal(&mut auth, d);
        expected.push(expect(d, Some(&sealed[d.len()..]), false));
        captured.push(Captured {
            port,
            payload: sealed,
        });
    }
    let pcap = dir.path().join("samples.pcap");
    write_pcap(&pcap, &captured);
    let columns = columns_of(&expected);
    let n = compare(
        "plain and authenticated samples",
        &expected,
        &tshark(&pcap, &columns, &[]),
    );
    // Every field the generated tables declare is among them: tshark showed each.
    let missing: Vec<String> = rmcast_wire::dissector::field_names()
        .into_iter()
        .filter(|f| !columns.contains(f))
        .collect();
    assert!(missing.is_empty(), "no sample shows {missing:?}");

    // Encrypted: the header and trailer decoded, the body shown as ciphertext (with the
    // preference saying sealed bodies are encrypted).
    let mut captured = Vec::new();
    let mut expected = Vec::new();
    for (i, d) in samples.iter().enumerate() {
        let sealed = seal(&mut enc, d);
        let mut e = expect(d, Some(&sealed[d.len()..]), true);
        e.0.insert(
            "rmcast.ciphertext".into(),
            vec![hex(&sealed[HEADER_LEN..d.len()])],
        );
        if d.len() == HEADER_LEN {
            e.0.remove("rmcast.ciphertext");
        }
        expected.push(e);
        captured.push(Captured {
            port: PORTS[i % PORTS.len()],
            payload: sealed,
        });
    }
    let pcap = dir.path().join("encrypted.pcap");
    write_pcap(&pcap, &captured);
    let m = compare(
        "encrypted samples",
        &expected,
        &tshark(&pcap, &columns_of(&expected), &["rmcast.encrypted:TRUE"]),
    );
    // Without the preference an encrypted body is decoded when it happens to parse and shown
    // as ciphertext when it does not: never an error either way.
    let shown = tshark(&pcap, &["rmcast.kind".to_string()], &[]);
    let problems: Vec<&String> = shown.iter().flat_map(|s| &s.problems).collect();
    assert!(problems.is_empty(), "{problems:?}");
    eprintln!(
        "dissector: {} kinds of 11 families; {n} plain and authenticated datagrams and {m} \
         encrypted ones match the wire crate",
        kinds.len()
    );
}

/// A small deterministic generator for the mutations.
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn datagrams_the_wire_crate_refuses_are_flagged_and_only_those() {
    if !tshark::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let samples = samples();
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut captured = Vec::new();
    let mut accepted = Vec::new();
    for _ in 0..40 {
        for d in &samples {
            let mut m = d.clone();
            // Change one to three bytes of the body, or the header's length or kind.
            match next(&mut state) % 8 {
                0 => {
                    let at = 16 + (next(&mut state) % 4) as usize;
                    m[at] = m[at].wrapping_add(1 + (next(&mut state) % 3) as u8);
                }
                1 => m[4] = (next(&mut state) % 7) as u8,
                2 => {
                    m.truncate(
                        HEADER_LEN + (next(&mut state) as usize % (m.len() - HEADER_LEN + 1)),
                    );
                    let len = (m.len() - HEADER_LEN) as u32;
                    m[16..20].copy_from_slice(&len.to_be_bytes());
                }
                _ if m.len() > HEADER_LEN => {
                    for _ in 0..1 + next(&mut state) % 3 {
                        let at = HEADER_LEN + (next(&mut state) as usize % (m.len() - HEADER_LEN));
                        m[at] = match next(&mut state) % 3 {
                            0 => 0xff,
                            1 => 0,
                            _ => next(&mut state) as u8,
                        };
                    }
                }
                _ => m.push(1),
            }
            accepted.push(Packet::decode(&m).is_ok());
            captured.push(Captured {
                port: 5000,
                payload: m,
            });
        }
    }
    let pcap = dir.path().join("mutated.pcap");
    write_pcap(&pcap, &captured);
    let shown = tshark(&pcap, &["rmcast.magic".to_string()], &[]);
    assert_eq!(shown.len(), captured.len());
    let mut disagree = Vec::new();
    let (mut refused, mut flagged) = (0, 0);
    for (i, (ok, s)) in accepted.iter().zip(&shown).enumerate() {
        let as_rmcast = !s.fields["rmcast.magic"].is_empty();
        let flags = !s.problems.is_empty();
        refused += usize::from(!ok);
        flagged += usize::from(flags);
        // Accepted: shown as rmcast without a problem. Refused: flagged, or not taken for
        // rmcast at all (the heuristic refuses a header the wire crate refuses).
        if *ok != (as_rmcast && !flags) {
            let p = &captured[i].payload;
            disagree.push(format!(
                "frame {}: wire crate {}, dissector {} {:?}: {}",
                i + 1,
                match Packet::decode(p) {
                    Ok(_) => "accepts".to_string(),
                    Err(e) => format!("refuses ({e})"),
                },
                if as_rmcast { "shows" } else { "does not take" },
                s.problems,
                hex(p)
            ));
        }
    }
    assert!(
        disagree.is_empty(),
        "{} of {} disagree:\n{}",
        disagree.len(),
        captured.len(),
        disagree[..disagree.len().min(15)].join("\n")
    );
    assert!(refused > captured.len() / 4, "only {refused} refused");
    eprintln!(
        "dissector: {} mutated datagrams, {refused} refused by the wire crate, {flagged} flagged \
         by the dissector, no disagreement",
        captured.len()
    );
}

// ---------------------------------------------------------------------------- simulator

/// A small scenario of `protocol`: a binary tree of height 2 behind a source link, 5 % loss
/// at every member's interface, 30 messages.
fn scenario(protocol: &str, extra: &str) -> String {
    let topology = if protocol == "xtp" {
        "kind = \"bus\"\nreceivers = 3\n".to_string()
    } else {
        "kind = \"binary_tree\"\nheight = 2\nsource_link = true\nbandwidth_bps = 1500000\n\
         delay_ms = 10\n"
            .to_string()
    };
    format!(
        "name = \"dissector {protocol}\"\nseed = 3\n\n[topology]\n{topology}\n[protocol]\n\
         name = \"{protocol}\"\n{extra}\n[traffic]\nmessages = 30\nsize = 200\ninterval_ms = 20\n\n\
         [[loss]]\nmodel = \"bernoulli\"\np = 0.05\nat = \"interface\"\nnodes = \"members\"\n\n\
         [stop]\ntime_limit_s = 30\n"
    )
}

#[test]
fn simulator_captures_of_every_protocol_decode_as_the_wire_crate_wrote_them() {
    if !tshark::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut summary = Vec::new();
    for (protocol, extra) in [
        ("saw", ""),
        ("bap", ""),
        ("rra", ""),
        ("dsp", ""),
        ("csp", ""),
        ("cp", ""),
        ("prmp", ""),
        ("srm", ""),
        ("lms", "replier = \"adaptive\"\n"),
        ("ff", ""),
        ("xtp", ""),
    ] {
        let file = dir.path().join(format!("{protocol}.toml"));
        std::fs::write(&file, scenario(protocol, extra)).unwrap();
        let pcap = dir.path().join(format!("{protocol}.pcap"));
        let out = common::rmcast(&[
            "sim".as_ref(),
            file.as_os_str(),
            "--out".as_ref(),
            dir.path().join(protocol).as_os_str(),
            "--pcap".as_ref(),
            pcap.as_os_str(),
            "--quiet".as_ref(),
        ]);
        assert!(
            out.status.success(),
            "{protocol}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let captured = read_pcap(&pcap);
        let mut kinds = BTreeMap::<String, usize>::new();
        let expected: Vec<Expect> = captured
            .iter()
            .map(|c| {
                let p = Packet::decode(&c.payload)
                    .unwrap_or_else(|e| panic!("{protocol}: the simulator wrote {e}"));
                *kinds.entry(kind_name(&p.message)).or_default() += 1;
                expect(&c.payload, None, false)
            })
            .collect();
        assert!(
            kinds.len() >= 2,
            "{protocol}: only {kinds:?}: the scenario shows no feedback"
        );
        let n = compare(
            protocol,
            &expected,
            &tshark(&pcap, &columns_of(&expected), &[]),
        );
        summary.push(format!("{protocol} {n} ({kinds:?})"));
    }
    eprintln!(
        "dissector: simulator captures decoded field for field:\n  {}",
        summary.join("\n  ")
    );
}

// ------------------------------------------------------------------------ real sockets

/// The UDP payloads of a Linux loopback capture (Ethernet framing), IPv4 only; other
/// frames are skipped.
fn read_loopback(path: &Path) -> Vec<(usize, Vec<u8>)> {
    let b = std::fs::read(path).unwrap();
    let mut at = 24;
    let mut out = Vec::new();
    let mut frame = 0;
    while at + 16 <= b.len() {
        let incl = u32::from_le_bytes(b[at + 8..at + 12].try_into().unwrap()) as usize;
        let f = &b[at + 16..(at + 16 + incl).min(b.len())];
        at += 16 + incl;
        frame += 1;
        if f.len() < 34 || f[12..14] != [0x08, 0x00] || f[23] != 17 {
            continue;
        }
        let ihl = usize::from(f[14] & 0x0f) * 4;
        let Some(udp) = f.get(14 + ihl..) else {
            continue;
        };
        if udp.len() >= 8 {
            out.push((frame - 1, udp[8..].to_vec()));
        }
    }
    out
}

/// A plain datagram and, when sealed, its trailer.
type Datagram<'a> = (&'a [u8], Option<&'a [u8]>);

/// The datagrams of one captured UDP payload (a GSO send on loopback is captured as one
/// payload holding several), each with its trailer when `sealed`.
fn datagrams(payload: &[u8], sealed: bool) -> Option<Vec<Datagram<'_>>> {
    let mut out = Vec::new();
    let mut at = 0;
    while at < payload.len() {
        let plen = u32::from_be_bytes(payload.get(at + 16..at + 20)?.try_into().ok()?) as usize;
        let end = at + HEADER_LEN + plen;
        let d = payload.get(at..end)?;
        Packet::decode(d).ok()?;
        let t = if sealed {
            Some(payload.get(end..end + 24)?)
        } else {
            None
        };
        out.push((d, t));
        at = end + if sealed { 24 } else { 0 };
    }
    Some(out)
}

/// Stops a capture when dropped (SIGINT, so it writes out what it has).
struct Capture(std::process::Child);

impl Drop for Capture {
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-INT", &self.0.id().to_string()])
            .status();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Start `tshark -i lo` writing `pcap`; `None` (with a note) when it cannot capture
/// (no permission) within 10 s.
fn capture_loopback(pcap: &Path) -> Option<Capture> {
    use std::io::BufRead;
    let mut child = Command::new("tshark")
        .args([
            "-n",
            "-i",
            "lo",
            "-f",
            "udp",
            "-F",
            "pcap",
            "-a",
            "duration:120",
            "-w",
        ])
        .arg(pcap)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .ok()?;
    let stderr = child.stderr.take()?;
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // Read to the end (a closed pipe would stop tshark), passing on what is wanted.
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line);
        }
    });
    let mut cap = Capture(child);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut said = Vec::new();
    while let Some(left) = deadline.checked_duration_since(std::time::Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(line) if line.contains("Capturing on") => {
                // tshark says so a moment before the first packets reach the file.
                std::thread::sleep(std::time::Duration::from_secs(1));
                // It may say so and then fail (no permission to capture).
                if matches!(cap.0.try_wait(), Ok(None)) && pcap.exists() {
                    return Some(cap);
                }
                said.push(line);
                break;
            }
            Ok(line) => said.push(line),
            Err(_) => break,
        }
    }
    eprintln!("skipped: tshark cannot capture on lo: {}", said.join(" / "));
    None
}

/// A real transfer on loopback for each protocol the simulator does not run from a scenario
/// (bap, rra) and one sealed (srm with --key-file), captured by tshark: every datagram of
/// those sessions (the session layer's included) decodes as the wire crate reads it.
#[test]
fn loopback_transfers_captured_by_tshark_decode_as_the_wire_crate_reads_them() {
    if !tshark::available() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let pcap = dir.path().join("lo.pcap");
    let key = dir.path().join("k.key");
    let key_s = key.to_str().unwrap().to_string();
    assert!(common::rmcast(&["keygen", &key_s]).status.success());
    let mut sessions = Vec::new();
    {
        let Some(_capture) = capture_loopback(&pcap) else {
            return;
        };
        for (group, extra, sealed) in [
            ("239.255.79.31:28391", vec!["--protocol", "bap"], false),
            ("239.255.79.32:28392", vec!["--protocol", "rra"], false),
            (
                "239.255.79.33:28393",
                vec!["--protocol", "srm", "--key-file", &key_s],
                true,
            ),
        ] {
            let recv: Vec<&str> = if sealed {
                vec!["--key-file", &key_s]
            } else {
                vec![]
            };
            let run = common::transfer(group, 60_000, &extra, &[recv.clone(), recv]);
            let session = run.sender["session"].as_u64().unwrap() as u32;
            sessions.push((extra[1].to_string(), session, sealed));
        }
        // Let the last datagrams reach the capture file before it is stopped.
        std::thread::sleep(std::time::Duration::from_millis(500));
    }
    let mut ours = Vec::new();
    let mut expected = Vec::new();
    let mut counts = BTreeMap::<String, usize>::new();
    for (frame, payload) in read_loopback(&pcap) {
        if payload.len() < HEADER_LEN || payload[..3] != [b'R', b'M', 1] {
            continue;
        }
        let session = u32::from_be_bytes(payload[8..12].try_into().unwrap());
        let Some((name, _, sealed)) = sessions.iter().find(|s| s.1 == session) else {
            continue;
        };
        let ds = datagrams(&payload, *sealed).unwrap_or_else(|| {
            panic!(
                "{name}: a datagram the wire crate refuses: {}",
                hex(&payload)
            )
        });
        let mut e = Expect::default();
        for (d, t) in ds {
            for (k, v) in expect(d, t, false).0 {
                e.0.entry(k).or_default().extend(v);
            }
            *counts.entry(name.clone()).or_default() += 1;
        }
        expected.push(e);
        ours.push(frame);
    }
    for (name, _, _) in &sessions {
        assert!(
            counts.get(name).copied().unwrap_or(0) > 10,
            "{name}: the capture holds {counts:?}"
        );
    }
    // The capture may hold other tests' traffic: the -V check covers these sessions.
    let filter = format!(
        "rmcast.session in {{{}}}",
        sessions
            .iter()
            .map(|s| s.1.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let shown = tshark_filtered(&pcap, &columns_of(&expected), &[], Some(&filter));
    let shown: Vec<Shown> = ours.iter().map(|&f| shown[f].clone()).collect();
    let n = compare("loopback capture", &expected, &shown);
    eprintln!(
        "dissector: loopback capture, {n} UDP payloads (GSO sends hold several datagrams) \
         decoded field for field; datagrams per session: {counts:?}"
    );
}
