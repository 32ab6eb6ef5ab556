//! `rmcast_wire::rfc3208` against OpenPGM (issue 62), both ways at the codec level.
//!
//! OpenPGM accepts what the codec writes: `bench/pgm/openpgm_peer.c`
//! (`recv`), built here against Debian's libpgm 5.3 (`libpgm-dev`), receives with a real OpenPGM
//! socket (UDP encapsulation) in a network namespace of its own, on its loopback, while the
//! datagrams the codec wrote are replayed to the group: an SPM, ODATA, an APDU in three fragments
//! (OPT_FRAGMENT), a gap repaired by RDATA, and a corrupted copy of an ODATA that OpenPGM must drop
//! on its checksum. Every APDU must come out of `pgm_recv` intact and in order.
//!
//! The codec reads what OpenPGM sends: `openpgm_peer send` sends APDUs with a real
//! OpenPGM socket (on-demand FEC announced), `dumpcap` captures the namespace's loopback,
//! and every datagram to the encapsulation port must decode, with the SPMs' OPT_PARITY_PRM,
//! the TSI and the APDUs as sent.
//!
//! Skipped (with a note) unless run as root with `ip`, `cc`, `pkg-config` and libpgm-dev
//! (`apt-get install libpgm-dev`), and for the second test `dumpcap` (tshark's).

use rmcast_wire::rfc3208::{Body, Data, Flags, Gsi, Opt, Packet};
use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;
use std::process::{Command, Stdio};

#[path = "support/pcap.rs"]
mod pcap;
#[path = "../../../bench/pgm/peer.rs"]
mod peer;
use pcap::udp_payloads;
use peer::{build, ok};

const GROUP: &str = "239.192.0.1";
const UDP_PORT: u16 = 7510;
const DPORT: u16 = 7500;
const SPORT: u16 = 40_000;

/// Why this machine cannot run the test, if it cannot.
fn cannot_run() -> Option<&'static str> {
    let why = why_not();
    // CI runs as root and installs cc, pkg-config and libpgm-dev (.ci/run): there a
    // missing part is a failure, not a skip.
    if let (Some(why), Some(_)) = (why, std::env::var_os("CI")) {
        if why != "not root (a network namespace is needed)" {
            panic!("under CI: {why}");
        }
    }
    why
}

fn why_not() -> Option<&'static str> {
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"));
    if !root {
        return Some("not root (a network namespace is needed)");
    }
    if !ok(Command::new("ip").arg("-V")) {
        return Some("`ip` is not installed");
    }
    peer::missing_tools()
}

/// A network namespace with its loopback up and multicast-capable, deleted when dropped.
struct Netns(String);

impl Netns {
    /// The namespace `rmcast-pgm-TAG-PID` (the tests of this file run in parallel).
    fn new(tag: &str) -> Netns {
        let name = format!("rmcast-pgm-{tag}-{}", std::process::id());
        let _ = Command::new("ip")
            .args(["netns", "del", &name])
            .stderr(Stdio::null())
            .status();
        assert!(ok(Command::new("ip").args(["netns", "add", &name])));
        let ns = Netns(name);
        for args in [
            &["link", "set", "lo", "up"][..],
            &["link", "set", "lo", "multicast", "on"],
        ] {
            assert!(
                ok(Command::new("ip").args(["-n", &ns.0]).args(args)),
                "ip {args:?}"
            );
        }
        ns
    }
}

impl Netns {
    /// `openpgm_peer MODE` in the namespace on its loopback, with the group and ports set.
    fn peer(&self, bin: &Path, mode: &str) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", &self.0])
            .arg(bin)
            .args([mode, "127.0.0.1", GROUP])
            .args([UDP_PORT.to_string(), DPORT.to_string()]);
        c
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = Command::new("ip").args(["netns", "del", &self.0]).status();
    }
}

fn down(body: Body<'_>, options: Vec<Opt<'static>>) -> Vec<u8> {
    Packet {
        sport: SPORT,
        dport: DPORT,
        gsi: Gsi(*b"rmcast"),
        flags: Flags::default(),
        body,
        options,
    }
    .to_vec()
    .expect("encodes")
}

fn odata(sqn: u32, payload: &[u8]) -> Body<'_> {
    Body::Odata(Data {
        sqn,
        trail: 0,
        payload,
    })
}

fn spm(sqn: u32, lead: u32) -> Body<'static> {
    Body::Spm {
        sqn,
        trail: 0,
        lead,
        path: IpAddr::V4(Ipv4Addr::LOCALHOST),
    }
}

/// The datagrams to replay, and the APDUs OpenPGM must deliver, in order.
fn stream() -> (Vec<Vec<u8>>, Vec<Vec<u8>>) {
    let first = b"hello, OpenPGM".to_vec();
    let big: Vec<u8> = (0..3000u32).map(|i| (i * 7 % 251) as u8).collect();
    let fourth = b"the fourth APDU, repaired".to_vec();
    let fifth = b"the fifth APDU".to_vec();
    let mut corrupted = down(odata(0, &first), vec![]);
    *corrupted.last_mut().expect("data") ^= 0x01;
    let mut d = vec![
        down(spm(0, u32::MAX), vec![]), // an empty window: trail = lead + 1
        corrupted,
        down(odata(0, &first), vec![]),
    ];
    for (i, chunk) in big.chunks(1000).enumerate() {
        let frag = Opt::Fragment {
            first_sqn: 1,
            offset: (i * 1000) as u32,
            apdu_len: big.len() as u32,
        };
        d.push(down(odata(1 + i as u32, chunk), vec![frag]));
    }
    // Sequence number 4 is "lost": 5 arrives first, then 4 as repair data.
    d.push(down(odata(5, &fifth), vec![]));
    d.push(down(
        Body::Rdata(Data {
            sqn: 4,
            trail: 0,
            payload: &fourth,
        }),
        vec![],
    ));
    d.push(down(spm(1, 5), vec![]));
    (d, vec![first, big, fourth, fifth])
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[test]
fn openpgm_receives_what_the_codec_writes() {
    if let Some(why) = cannot_run() {
        eprintln!("skipped: {why}");
        return;
    }
    let dir = std::env::temp_dir().join(format!("rmcast-openpgm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bin = build(&dir);
    let (datagrams, apdus) = stream();
    let mut file = Vec::new();
    for d in &datagrams {
        file.extend_from_slice(&(d.len() as u16).to_be_bytes());
        file.extend_from_slice(d);
    }
    let replay = dir.join("replay.bin");
    std::fs::write(&replay, file).expect("write the replay file");
    let ns = Netns::new("recv");
    let out = ns
        .peer(&bin, "recv")
        .args([&apdus.len().to_string(), "10000"])
        .arg(&replay)
        .output()
        .expect("run the receiver");
    drop(ns);
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let got: Vec<&str> = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("apdu "))
        .collect();
    let want: Vec<String> = apdus.iter().map(|a| hex(a)).collect();
    let lens = |v: &[&str]| v.iter().map(|l| l.len() / 2).collect::<Vec<_>>();
    assert_eq!(
        lens(&got),
        apdus.iter().map(Vec::len).collect::<Vec<_>>(),
        "APDU lengths from OpenPGM; its output:\n{stdout}\n{stderr}"
    );
    for (i, (g, w)) in got.iter().zip(&want).enumerate() {
        assert!(g == w, "APDU {i} differs; its log:\n{stderr}");
    }
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

#[test]
fn the_codec_reads_what_openpgm_sends() {
    if let Some(why) = cannot_run() {
        eprintln!("skipped: {why}");
        return;
    }
    if !ok(Command::new("dumpcap").arg("-v")) {
        assert!(std::env::var_os("CI").is_none(), "under CI: no dumpcap");
        eprintln!("skipped: dumpcap is not installed (apt-get install tshark)");
        return;
    }
    let dir = std::env::temp_dir().join(format!("rmcast-openpgm-send-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let bin = build(&dir);
    let sizes = [100usize, 1000, 20, 1];
    let cap = dir.join("cap.pcap");
    let ns = Netns::new("send");
    let mut dumpcap = Command::new("ip")
        .args([
            "netns",
            "exec",
            &ns.0,
            "dumpcap",
            "-i",
            "lo",
            "-P",
            "-q",
            "-a",
            "duration:4",
        ])
        .arg("-w")
        .arg(&cap)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start dumpcap");
    for _ in 0..50 {
        if cap.exists() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_millis(300));
    let out = ns
        .peer(&bin, "send")
        .arg(SPORT.to_string())
        .args(sizes.map(|n| n.to_string()))
        .output()
        .expect("run the sender");
    let _ = dumpcap.wait();
    drop(ns);
    let pcap = std::fs::read(&cap).expect("the capture");
    let _ = std::fs::remove_dir_all(&dir);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "openpgm_peer send: {stderr}");
    let datagrams = udp_payloads(&pcap, UDP_PORT);
    let mut apdus = std::collections::BTreeMap::new();
    let (mut spms, mut gsi) = (0, None);
    for (i, d) in datagrams.iter().enumerate() {
        let p = Packet::decode(d).unwrap_or_else(|e| panic!("datagram {i}: {e}: {d:02x?}"));
        assert_ne!(d[6..8], [0, 0], "OpenPGM sends checksums");
        assert_eq!(*gsi.get_or_insert(p.gsi), p.gsi, "one GSI");
        assert_eq!((p.tsi().sport, p.dport), (SPORT, DPORT), "{p:?}");
        match &p.body {
            Body::Odata(d) => {
                assert!(p.options.is_empty(), "{p:?}");
                apdus.insert(d.sqn, d.payload.to_vec());
            }
            Body::Spm { path, .. } => {
                spms += 1;
                assert_eq!(*path, IpAddr::V4(Ipv4Addr::LOCALHOST));
                let prm = Opt::ParityPrm {
                    proactive: false,
                    on_demand: true,
                    tg_size: 8,
                };
                assert!(
                    p.options.contains(&prm),
                    "OPT_PARITY_PRM on demand, k 8: {p:?}"
                );
                assert!(p.flags.network, "OPT_NETWORK with OPT_PARITY_PRM");
            }
            other => panic!("datagram {i}: an unexpected {other:?}"),
        }
    }
    assert!(spms >= 2, "{spms} SPMs");
    let want: Vec<Vec<u8>> = sizes
        .iter()
        .enumerate()
        .map(|(i, n)| (0..*n).map(|j| ((31 * i + j) % 251) as u8).collect())
        .collect();
    assert_eq!(
        apdus.keys().copied().collect::<Vec<u32>>(),
        vec![0, 1, 2, 3]
    );
    assert!(apdus.into_values().eq(want), "the APDUs OpenPGM sent");
}
