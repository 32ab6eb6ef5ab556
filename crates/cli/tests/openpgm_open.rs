//! Interop of `rmcast send|recv --protocol pgm --open` with OpenPGM (libpgm 5.3) across a
//! lossy bridge (issue 62, item 2): two network namespaces of an
//! `rmcast_lab::netns::Segment`, the bridge dropping P % of the Ethernet frames it forwards,
//! both ways (`Segment::frame_loss`: nftables, `bridge` family, `forward` hook, `numgen
//! random`), so NAK, NCF and RDATA cross between the implementations.
//!
//! * OpenPGM sends (`openpgm_peer sendn`: 300 APDUs of 1,400 bytes, one TPDU each) →
//!   `rmcast recv --open` writes them byte-exact, in order, and ends on OPenPGM's OPT_FIN or
//!   its idle time;
//! * `rmcast send --open` sends a 400,000-byte file → `openpgm_peer sink` (an OpenPGM
//!   receiver) hands over its APDUs, whose concatenation is the file.
//!
//! at 0, 1 and 10 % frame loss. APDUs stay within one TPDU in both directions: libpgm
//! 5.3.128's `pgm_send` crashed on a 3,000-byte APDU (`crates/wire/tests/openpgm.rs`), and
//! rmcast's open-mode sender sends one APDU per ODATA.
//!
//! Needs root, iproute2, nftables, `cc`, `pkg-config` and libpgm-dev: skipped with a note
//! otherwise, except under CI (env `CI` set), where a missing part other than root fails.

mod common;
#[path = "../../../bench/pgm/peer.rs"]
mod peer;
#[path = "../../../tools/wireshark/tshark.rs"]
mod tshark;

use common::{explain, in_netns, json_of, strings, Bed, Proc};
use rmcast_lab::proc::in_netns as command_in;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());
const DEADLINE: Duration = Duration::from_secs(60);
/// The encapsulation port (one, both ways) and OpenPGM's data-destination port.
const UDP_PORT: &str = "7600";
const DPORT: &str = "7500";
const GROUP: &str = "239.62.0.1";

/// Why the test cannot run here, if it cannot; under CI only "not root" is a skip.
fn cannot_run() -> Option<String> {
    common::skip_unless_ci(
        common::cannot_run_netns_nft().or_else(|| peer::missing_tools().map(String::from)),
    )
}

/// Two hosts on a bridge dropping `loss` of the frames both ways, and the peer built;
/// `None` (said on standard error) where the test cannot run.
fn bed(loss: f64) -> Option<(Bed, PathBuf)> {
    if let Some(why) = cannot_run() {
        eprintln!("skipped: OpenPGM interop over a lossy bridge: {why}");
        return None;
    }
    let bed = Bed::new(&SERIAL, 2);
    bed.seg.frame_loss(loss, None).expect("frame loss");
    let bin = peer::build(bed.work.path());
    Some((bed, bin))
}

/// `rmcast CMD --protocol pgm --open` on the test's group and interface, then `extra`.
fn open_args(cmd: &str, extra: &[&str]) -> Vec<String> {
    let group = format!("{GROUP}:{UDP_PORT}");
    let mut v = strings(&[
        cmd,
        "--protocol",
        "pgm",
        "--open",
        "-g",
        &group,
        "-i",
        "eth0",
    ]);
    v.extend(strings(extra));
    v
}

/// The peer with `args` in host `h`'s namespace, output piped.
fn peer(bed: &Bed, h: usize, bin: &Path, args: &[String]) -> Proc {
    Proc::spawn(
        command_in(&bed.seg.host(h), bin)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped()),
    )
    .expect("start openpgm_peer")
}

/// APDU `i` of `openpgm_peer send`/`sendn`: byte j is (31·i + j) mod 251.
fn apdu(i: usize, len: usize) -> Vec<u8> {
    (0..len).map(|j| ((31 * i + j) % 251) as u8).collect()
}

/// OpenPGM sends `n` APDUs of `len` bytes; `rmcast recv --open` must write them all.
fn openpgm_to_rmcast(loss: f64) {
    let Some((bed, bin)) = bed(loss) else {
        return;
    };
    let out = bed.work.path().join("out");
    let o = out.to_string_lossy().into_owned();
    let recv_args = open_args(
        "recv",
        &[
            "--dir",
            &o,
            "--sender-timeout",
            "4",
            "--wait",
            "30",
            "--json",
        ],
    );
    let mut recv = in_netns(&bed.seg.host(1), &recv_args);
    std::thread::sleep(Duration::from_millis(300));
    let (n, len) = (300, 1400);
    let sender = bed.seg.addr(0).to_string();
    let send_args = [
        "sendn",
        &sender,
        GROUP,
        UDP_PORT,
        DPORT,
        "4000",
        &n.to_string(),
        &len.to_string(),
    ];
    let mut send = peer(&bed, 0, &bin, &strings(&send_args));
    let deadline = Instant::now() + DEADLINE;
    let s = send.finish(deadline).expect("openpgm_peer sendn ends");
    assert!(s.status.success(), "openpgm_peer sendn: {}", explain(&s));
    let r = recv.finish(deadline).expect("rmcast recv --open ends");
    assert!(r.status.success(), "rmcast recv --open: {}", explain(&r));
    let j = json_of(&r);
    let want: Vec<u8> = (0..n).flat_map(|i| apdu(i, len)).collect();
    let files: Vec<PathBuf> = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(files.len(), 1, "one output file: {files:?}");
    let got = std::fs::read(&files[0]).unwrap();
    let dropped = bed.seg.frames_dropped();
    eprintln!(
        "OpenPGM -> rmcast at {}% frame loss: {} frames dropped, report {j}",
        loss * 100.0,
        dropped
    );
    assert_eq!(j["tsdus"], n as u64, "{j}");
    assert!(
        got == want,
        "{} bytes received, {} sent, not the same",
        got.len(),
        want.len()
    );
    assert_eq!(j["mode"], "open");
    assert!(j["unknown"].as_array().is_some_and(|u| !u.is_empty()));
    if loss >= 0.05 {
        assert!(dropped > 0 && j["naks_sent"].as_u64() > Some(0), "{j}");
    }
}

/// `rmcast send --open` sends a file; OpenPGM's receiver must hand it over whole.
fn rmcast_to_openpgm(loss: f64) {
    rmcast_to_openpgm_with(loss, |_| {});
}

/// [`rmcast_to_openpgm`] with `setup` run on the bed first; the bed and the sender's report
/// (`None`: the test cannot run here).
fn rmcast_to_openpgm_with(loss: f64, setup: impl FnOnce(&Bed)) -> Option<(Bed, serde_json::Value)> {
    let (bed, bin) = bed(loss)?;
    setup(&bed);
    let data: Vec<u8> = (0..400_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let file = bed.file("data.bin", &data);
    let sink = bed.work.path().join("sink.bin");
    // 1,448-byte APDUs: 277 of them.
    let apdus = data.len().div_ceil(1448);
    let receiver = bed.seg.addr(1).to_string();
    let sink_args = [
        "sink",
        &receiver,
        GROUP,
        UDP_PORT,
        DPORT,
        &apdus.to_string(),
        "40000",
        &sink.to_string_lossy(),
    ];
    let mut recv = peer(&bed, 1, &bin, &strings(&sink_args));
    std::thread::sleep(Duration::from_millis(300));
    let f = file.to_string_lossy().into_owned();
    let send_args = open_args(
        "send",
        &["--rate", "20M", "--final-wait", "3", "--json", &f],
    );
    let mut send = in_netns(&bed.seg.host(0), &send_args);
    let deadline = Instant::now() + DEADLINE;
    let s = send.finish(deadline).expect("rmcast send --open ends");
    assert!(s.status.success(), "rmcast send --open: {}", explain(&s));
    let r = recv.finish(deadline).expect("openpgm_peer sink ends");
    let j = json_of(&s);
    let dropped = bed.seg.frames_dropped();
    eprintln!(
        "rmcast -> OpenPGM at {}% frame loss: {} frames dropped, report {j}",
        loss * 100.0,
        dropped
    );
    assert!(r.status.success(), "openpgm_peer sink: {}", explain(&r));
    let got = std::fs::read(&sink).unwrap();
    assert!(
        got == data,
        "{} bytes received, {} sent, not the same",
        got.len(),
        data.len()
    );
    assert_eq!(j["odata"], apdus as u64, "{j}");
    if loss >= 0.05 {
        assert!(dropped > 0 && j["rdata"].as_u64() > Some(0), "{j}");
    }
    Some((bed, j))
}

#[test]
fn openpgm_sends_to_rmcast_open_without_loss() {
    openpgm_to_rmcast(0.0);
}

#[test]
fn openpgm_sends_to_rmcast_open_at_1_percent_frame_loss() {
    openpgm_to_rmcast(0.01);
}

#[test]
fn openpgm_sends_to_rmcast_open_at_10_percent_frame_loss() {
    openpgm_to_rmcast(0.10);
}

#[test]
fn rmcast_open_sends_to_openpgm_without_loss() {
    rmcast_to_openpgm(0.0);
}

#[test]
fn rmcast_open_sends_to_openpgm_at_1_percent_frame_loss() {
    rmcast_to_openpgm(0.01);
}

#[test]
fn rmcast_open_sends_to_openpgm_at_10_percent_frame_loss() {
    rmcast_to_openpgm(0.10);
}

/// The table of [`lose_the_first_two_spms_and_odata_5`].
const FIRST_SPMS: &str = "rmcast_first_spms";

/// The bridge drops the first two SPMs host 0 sends (an IPv4 SPM is a 64-byte IP packet, and
/// nftables' quota counts IP bytes: `until 129 bytes` takes two) and its ODATA with sequence
/// number 5 (not the RDATA), counted in the named counters `spms` and `odata`.
fn lose_the_first_two_spms_and_odata_5(bed: &Bed) {
    let port = bed.seg.port(0);
    // The UDP payload begins 64 bits into the transport header: PGM's type is its byte 4,
    // ODATA's sequence number its bytes 16 to 19.
    let pgm = format!("iifname {port} udp dport {UDP_PORT}");
    for rule in [
        format!("add table bridge {FIRST_SPMS}"),
        format!("add counter bridge {FIRST_SPMS} spms"),
        format!("add counter bridge {FIRST_SPMS} odata"),
        format!("add chain bridge {FIRST_SPMS} f {{ type filter hook forward priority -10 ; }}"),
        format!(
            "add rule bridge {FIRST_SPMS} f {pgm} @th,96,8 0 quota until 129 bytes \
             counter name spms drop"
        ),
        format!(
            "add rule bridge {FIRST_SPMS} f {pgm} @th,96,8 4 @th,192,32 5 counter name odata drop"
        ),
    ] {
        let out = Command::new("ip")
            .args(["netns", "exec", &bed.seg.switch(), "nft"])
            .args(rule.split_whitespace())
            .output()
            .expect("nft runs");
        assert!(out.status.success(), "nft {rule}: {}", explain(&out));
    }
}

/// An OpenPGM receiver NAKs nothing before an SPM has told it the source's address, and gives
/// up a loss whose NAK back-off ends first (issue 62: "Dropped N messages due to invalid NLA",
/// a session reset). rmcast's open sender announces itself with three SPMs before any data, as
/// OpenPGM's sources do: with the first two lost and an early ODATA lost, the third still
/// comes before the loss's back-off ends, and the loss is repaired.
#[test]
fn rmcast_open_sends_to_openpgm_with_its_first_two_spms_lost() {
    let Some((bed, j)) = rmcast_to_openpgm_with(0.0, lose_the_first_two_spms_and_odata_5) else {
        return;
    };
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            &bed.seg.switch(),
            "nft",
            "list",
            "counters",
        ])
        .args(["table", "bridge", FIRST_SPMS])
        .output()
        .expect("nft runs");
    let counts = rmcast_lab::netns::parse_nft_counters(&String::from_utf8_lossy(&out.stdout))
        .expect("nft counters");
    let lost = |name: &str| counts.get(name).map(|c| c.packets);
    assert_eq!(
        (lost("spms"), lost("odata")),
        (Some(2), Some(1)),
        "{counts:?}"
    );
    assert!(j["rdata"].as_u64() >= Some(1), "{j}");
}

#[test]
fn open_mode_refuses_what_plain_pgm_cannot_do() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("f");
    std::fs::write(&f, b"x").unwrap();
    let f = f.to_string_lossy().into_owned();
    let g = "239.62.0.9:7600";
    for (args, says) in [
        (
            vec!["send", "--open", "--protocol", "saw", "-g", g, &f],
            "give --protocol pgm",
        ),
        (
            vec![
                "send",
                "--open",
                "--protocol",
                "pgm",
                "--rate",
                "auto",
                "-g",
                g,
                &f,
            ],
            "TFMCC",
        ),
        (
            vec!["send", "--open", "--protocol", "pgm", "-g", g, &f, &f],
            "one file",
        ),
        (
            vec!["recv", "--open", "--protocol", "srm", "-g", g, "--stdout"],
            "give --protocol pgm",
        ),
    ] {
        let out = common::rmcast(&args);
        common::assert_refused(&out, says, &args.join(" "));
    }
    // --open needs --protocol on recv (it has no default there), and --pgm-dport needs --open.
    let out = common::rmcast(&["recv", "--open", "-g", g, "--stdout"]);
    assert_eq!(out.status.code(), Some(2), "{}", explain(&out));
    let out = common::rmcast(&["send", "--pgm-dport", "7", "-g", g, &f]);
    assert_eq!(out.status.code(), Some(2), "{}", explain(&out));
}

/// tshark 4's own PGM dissector reads a capture of an open-mode transfer between two rmcast
/// processes at 10 % frame loss (`-d udp.port==PORT,pgm`): every datagram on the port is
/// PGM, none with a bad checksum (checked: `pgm.check_checksum`) and none malformed, and SPM,
/// ODATA, NAK, NCF and RDATA all occur. The one exception is SPMR, which tshark 4.0 has no
/// dissector for: the frames it leaves as plain data must be the receiver's SPMRs (two per SPMR:
/// unicast and group).
#[test]
fn tshark_reads_an_open_mode_transfer_as_pgm_with_nothing_malformed() {
    if !tshark::available() || !peer::ok(Command::new("dumpcap").arg("-v")) {
        assert!(
            std::env::var_os("CI").is_none(),
            "under CI: no tshark/dumpcap"
        );
        eprintln!("skipped: dumpcap is not installed");
        return;
    }
    let Some((bed, _)) = bed(0.10) else {
        return;
    };
    let data: Vec<u8> = (0..300_000u32)
        .map(|i| (i.wrapping_mul(40_503) >> 7) as u8)
        .collect();
    let file = bed.file("data.bin", &data);
    let cap = bed.work.path().join("open.pcap");
    let mut dumpcap = Proc::spawn(
        command_in(&bed.seg.host(1), "dumpcap")
            .args(["-i", "eth0", "-P", "-q", "-a", "duration:10", "-w"])
            .arg(&cap)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    )
    .expect("start dumpcap");
    for _ in 0..50 {
        if cap.exists() {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    std::thread::sleep(Duration::from_millis(300));
    let out = bed.work.path().join("out");
    let o = out.to_string_lossy().into_owned();
    let recv_args = open_args("recv", &["--dir", &o, "--sender-timeout", "3", "--json"]);
    let mut recv = in_netns(&bed.seg.host(1), &recv_args);
    std::thread::sleep(Duration::from_millis(300));
    let f = file.to_string_lossy().into_owned();
    // The default --final-wait: the bridge drops ARP frames as it drops any, and a lost ARP
    // exchange holds the receiver's first NAKs for the kernel's 1-s retry, past a 1-s linger
    // (5 of 26 runs failed with --final-wait 1).
    let send_args = open_args("send", &["--rate", "20M", "--json", &f]);
    let mut send = in_netns(&bed.seg.host(0), &send_args);
    let deadline = Instant::now() + DEADLINE;
    let s = send.finish(deadline).expect("rmcast send --open ends");
    assert!(s.status.success(), "rmcast send --open: {}", explain(&s));
    let r = recv.finish(deadline).expect("rmcast recv --open ends");
    assert!(r.status.success(), "rmcast recv --open: {}", explain(&r));
    let _ = dumpcap.finish(deadline);
    let j = json_of(&r);
    let got = std::fs::read_dir(&out)
        .unwrap()
        .flatten()
        .map(|e| std::fs::read(e.path()).unwrap())
        .next();
    assert!(
        got.as_deref() == Some(&data[..]),
        "rmcast -> rmcast open, byte-exact: {j}"
    );
    let t = Command::new("tshark")
        .arg("-r")
        .arg(&cap)
        .args([
            "-d",
            &format!("udp.port=={UDP_PORT},pgm"),
            "-Y",
            &format!("udp.port=={UDP_PORT}"),
        ])
        .args([
            "-o",
            "pgm.check_checksum:TRUE",
            "-T",
            "fields",
            "-E",
            "separator=|",
        ])
        .args([
            "-e",
            "frame.protocols",
            "-e",
            "_ws.malformed",
            "-e",
            "pgm.bad_checksum",
        ])
        .args(["-e", "pgm.hdr.type"])
        .output()
        .expect("tshark runs");
    assert!(t.status.success(), "tshark: {}", explain(&t));
    let text = String::from_utf8_lossy(&t.stdout);
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('|').collect()).collect();
    let mut types = std::collections::BTreeMap::new();
    let mut plain = 0;
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row.len(), 4, "row {i}: {row:?}");
        assert_eq!(
            (row[1], row[2]),
            ("", ""),
            "row {i} malformed or bad checksum: {row:?}"
        );
        if !row[0].split(':').any(|p| p == "pgm") {
            plain += 1;
            continue;
        }
        *types.entry(row[3].to_string()).or_insert(0u64) += 1;
    }
    eprintln!(
        "tshark: {} datagrams on port {UDP_PORT}, PGM types {types:?}, {plain} left as data; \
         receiver {j}",
        rows.len()
    );
    assert_eq!(
        plain,
        2 * j["spmrs_sent"].as_u64().unwrap(),
        "only SPMRs are not PGM to tshark"
    );
    for (kind, name) in [
        ("0x00", "SPM"),
        ("0x04", "ODATA"),
        ("0x05", "RDATA"),
        ("0x08", "NAK"),
        ("0x0a", "NCF"),
    ] {
        assert!(types.contains_key(kind), "no {name} among {types:?}");
    }
}
