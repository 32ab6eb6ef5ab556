//! `pgm`'s default socket mode speaks RFC 3208 on the wire (issue 62): a transfer on the
//! namespace bed (`rmcast send` on host 0, `rmcast recv` on hosts 1 and 2, 1 % of the frames
//! dropped at the bridge, so NAKs, NCFs and RDATA appear), captured with `dumpcap` on the
//! sender's bridge port and read with tshark 4.0's own PGM dissector
//! (`-d udp.port==DATA,pgm`, the group's port + 1). Every datagram to or from the data
//! port must dissect as PGM with no malformed packet and a good checksum, carry the TSI
//! (`tsi_of` the session and the sender's node id) and sequence numbers of the transfer's
//! range (the first is the session id), and every ODATA the sender sent must be seen. Runs
//! plain, with FEC (`--fec-k 8 --fec-proactive 1`, parity as RDATA/ODATA with OPT_PARITY)
//! and with TFMCC (`--rate auto`, whose CCS and CCFB stay on the session's port).
//!
//! The check must be able to fail: the same transfer with `--rmcast-header` (the agents'
//! own datagrams in rmcast's header, on the group's port) is read the same way, and the
//! check refuses it.
//!
//! `norm`'s default socket mode is checked the same way against tshark's NORM dissector
//! (`tshark_reads_every_norm_datagram_of_a_socket_transfer_as_rfc5740`, module `norm`).
//!
//! Needs Linux, root, iproute2, nftables, tshark and dumpcap; otherwise it prints why it did
//! not run. `RMCAST_PGM_WIRE_KEEP=DIR` keeps the captures there.

mod common;
#[path = "../../../tools/wireshark/tshark.rs"]
mod tshark;

use common::{explain, in_netns, strings, Bed, Proc};
use rmcast_lab::netns::{self, Segment};
use rmcast_proto::pgm::rfc3208::tsi_of;
use rmcast_proto::NodeId;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());
const DEADLINE: Duration = Duration::from_secs(120);
const LEN: usize = 3_000_000;

/// Why the test cannot run here, if it cannot.
fn cannot_run() -> Option<String> {
    if let Some(why) = common::cannot_run_netns_nft() {
        return Some(why);
    }
    if !tshark::available() {
        return Some("tshark is not installed".into());
    }
    let dumpcap = Command::new("dumpcap").arg("-v").output();
    if !dumpcap.is_ok_and(|o| o.status.success()) {
        return Some("dumpcap is not installed".into());
    }
    None
}

/// `dumpcap` on host 0's port of the bridge (every frame the sender sends, every frame the
/// bridge passes to it), writing `file`; returns once the capture runs.
fn capture(seg: &Segment, file: &Path) -> Proc {
    let mut c = rmcast_lab::proc::in_netns(&seg.switch(), "dumpcap");
    c.args(["-i", &seg.port(0), "-q", "-B", "64", "-f", "udp", "-w"])
        .arg(file)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let p = Proc::spawn(&mut c).expect("start dumpcap");
    let until = Instant::now() + Duration::from_secs(10);
    while !file.exists() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(300));
    p
}

/// Stop a capture so that it writes everything it holds (SIGINT), and wait for it. The
/// kernel hands the capture its frames in blocks, the last one once a timeout passed: wait
/// that out first (the last frames of a transfer were missing without it).
fn stop(mut p: Proc) {
    std::thread::sleep(Duration::from_millis(1500));
    if let Some(pid) = p.id() {
        // SAFETY: a plain signal to our own child's pid, which is not reaped yet.
        unsafe { libc::kill(pid as libc::pid_t, libc::SIGINT) };
    }
    let ended = p.wait_until(Instant::now() + Duration::from_secs(10));
    assert!(ended.is_some(), "dumpcap did not stop on SIGINT");
}

/// A pgm transfer of `data` to receivers on hosts 1 and 2, captured into `pcap`: the
/// sender's JSON summary. Every receiver must end with status 0, byte-exact.
fn transfer(b: &Bed, group: &str, data: &[u8], pcap: &Path, extra: &[&str]) -> Value {
    let seg = &b.seg;
    let tag = pcap.file_stem().unwrap().to_string_lossy().into_owned();
    let file = b.file(&format!("{tag}.bin"), data);
    let cap = capture(seg, pcap);
    let mut rx = Vec::new();
    let mut dirs = Vec::new();
    for h in 1..=2 {
        let dir = b.work.path().join(format!("{tag}-r{h}"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut args = strings(&["recv", "--group", group, "--interface", netns::IFACE]);
        args.extend(strings(&["--node-id", &(1000 + h).to_string()]));
        args.extend(strings(&["--json", "--quiet", "--wait", "60", "--dir"]));
        args.push(dir.display().to_string());
        rx.push(in_netns(&seg.host(h), &args));
        dirs.push(dir);
    }
    std::thread::sleep(Duration::from_millis(500));
    let mut args = strings(&["send", "--group", group, "--interface", netns::IFACE]);
    args.extend(strings(&["--receivers", "2", "--json", "--quiet"]));
    if !extra.contains(&"--rate") {
        args.extend(strings(&["--rate", "100M"]));
    }
    args.extend(strings(extra));
    args.push(file.display().to_string());
    let sent = in_netns(&seg.host(0), &args)
        .finish(Instant::now() + DEADLINE)
        .expect("the sender did not end");
    assert!(
        sent.status.success(),
        "{extra:?}: sender: {}",
        explain(&sent)
    );
    for (r, dir) in rx.iter_mut().zip(&dirs) {
        let o = r
            .finish(Instant::now() + Duration::from_secs(30))
            .expect("a receiver did not end");
        assert!(o.status.success(), "{extra:?}: receiver: {}", explain(&o));
        let name = file.file_name().unwrap();
        let got = std::fs::read(dir.join(name)).expect("the received file");
        assert!(got == data, "{extra:?}: not byte-exact");
    }
    stop(cap);
    serde_json::from_slice(&sent.stdout).expect("the sender's JSON")
}

const FIELDS: [&str; 12] = [
    "udp.srcport",
    "udp.dstport",
    "frame.protocols",
    "_ws.malformed",
    "_ws.expert.severity",
    "pgm.hdr.cksum.status",
    "pgm.hdr.type",
    "pgm.hdr.gsi",
    "pgm.hdr.sport",
    "pgm.hdr.dport",
    "pgm.spm.sqn",
    "pgm.nak.sqn",
];

/// What the sender's summary says the packets must carry.
struct Expect {
    /// The data-destination port.
    port: u16,
    /// The session id: the first sequence number.
    base: u32,
    /// The TSI's GSI as tshark shows it, and its source port.
    gsi: String,
    sport: String,
    /// Sequence numbers in use: ODATA sent, rounded up to FEC blocks.
    span: u32,
}

impl Expect {
    fn of(sender: &Value, port: u16, k: u32) -> Expect {
        let session = sender["session"].as_u64().expect("session") as u32;
        let node = sender["node"].as_u64().expect("node") as u32;
        let sent = sender["agent"]["data_sent"].as_u64().expect("data_sent") as u32;
        let tsi = tsi_of(session, NodeId(node));
        Expect {
            port,
            base: session,
            gsi: tsi.gsi.0.iter().map(|b| format!("{b:02x}")).collect(),
            sport: tsi.sport.to_string(),
            span: sent.div_ceil(k.max(1)) * k.max(1),
        }
    }
}

/// Every datagram of `file` to or from the data port checked as PGM: the count of each
/// packet type and the ODATA sequence numbers seen; an error for the first that is not as
/// it must be, or when there is none.
fn check(file: &Path, e: &Expect) -> Result<(BTreeMap<String, u64>, BTreeSet<u32>), String> {
    let args = strings(&[
        "-d",
        &format!("udp.port=={},pgm", e.port),
        "-o",
        "pgm.check_checksum:TRUE",
    ]);
    let rows = tshark::fields(file, &args, &FIELDS);
    let mut kinds = BTreeMap::new();
    let mut odata = BTreeSet::new();
    let port = e.port.to_string();
    for (i, row) in rows.iter().enumerate() {
        let get = |name: &str| {
            let k = FIELDS.iter().position(|f| *f == name).expect("a field");
            row.get(k).map_or("", String::as_str)
        };
        if get("udp.srcport") != port && get("udp.dstport") != port {
            continue;
        }
        let ctx = format!("frame {}: {row:?}", i + 1);
        let sqn = |field: &str| {
            let v = get(field).trim_start_matches("0x");
            u32::from_str_radix(v, 16).map_err(|_| format!("no {field}: {ctx}"))
        };
        let in_span = |s: u32| s.wrapping_sub(e.base) < e.span;
        if !get("frame.protocols").contains(":udp:pgm") {
            return Err(format!("not PGM: {ctx}"));
        }
        if !get("_ws.malformed").is_empty() || !get("_ws.expert.severity").is_empty() {
            return Err(format!("malformed or flagged: {ctx}"));
        }
        if get("pgm.hdr.cksum.status").rsplit(',').next() != Some("1") {
            return Err(format!("checksum not good: {ctx}"));
        }
        if get("pgm.hdr.gsi") != e.gsi {
            return Err(format!("GSI is not {}: {ctx}", e.gsi));
        }
        let ty = get("pgm.hdr.type");
        let tsi_port = if ty == "0x08" {
            "pgm.hdr.dport"
        } else {
            "pgm.hdr.sport"
        };
        if get(tsi_port) != e.sport {
            return Err(format!("TSI port is not {}: {ctx}", e.sport));
        }
        let ok = match ty {
            "0x00" => sqn("pgm.spm.sqn").is_ok(),
            "0x04" => {
                let s = sqn("pgm.spm.sqn")?;
                odata.insert(s.wrapping_sub(e.base));
                in_span(s)
            }
            "0x05" => in_span(sqn("pgm.spm.sqn")?),
            "0x08" | "0x0a" => in_span(sqn("pgm.nak.sqn")?),
            _ => false,
        };
        if !ok {
            return Err(format!(
                "a type or sequence number out of the transfer's: {ctx}"
            ));
        }
        *kinds.entry(ty.to_string()).or_default() += 1;
    }
    if kinds.is_empty() {
        return Err(format!("no datagram to or from port {}", e.port));
    }
    Ok((kinds, odata))
}

#[test]
fn tshark_reads_every_pgm_datagram_of_a_socket_transfer_as_rfc3208() {
    if let Some(why) = common::skip_unless_ci(cannot_run()) {
        eprintln!("skipped: pgm on the wire as RFC 3208: {why}");
        return;
    }
    let b = Bed::new(&SERIAL, 3);
    b.seg.frame_loss(0.01, None).unwrap();
    let data = common::pseudo_random(LEN, 62);
    let group = "239.77.62.1:6200";
    let runs: [(&str, &[&str], u32); 3] = [
        ("plain", &[], 1),
        ("fec", &["--fec-k", "8", "--fec-proactive", "1"], 8),
        ("tfmcc", &["--rate", "auto"], 1),
    ];
    for (tag, extra, k) in runs {
        let pcap = b.work.path().join(format!("{tag}.pcapng"));
        let sender = transfer(&b, group, &data, &pcap, extra);
        let e = Expect::of(&sender, 6201, k);
        let (kinds, odata) = check(&pcap, &e).unwrap_or_else(|why| panic!("{tag}: {why}"));
        eprintln!(
            "{tag}: PGM packets by type {kinds:?}, {} ODATA numbers",
            odata.len()
        );
        // SPM, ODATA, NAK and NCF every time; RDATA (or parity as RDATA) for the repairs.
        for ty in ["0x00", "0x04", "0x05", "0x08", "0x0a"] {
            assert!(
                kinds.get(ty).is_some_and(|&n| n > 0),
                "{tag}: no {ty}: {kinds:?}"
            );
        }
        // Every ODATA the sender sent (parity sent unasked is ODATA too, within the span).
        let sent = sender["agent"]["data_sent"].as_u64().unwrap() as u32;
        let missing: Vec<u32> = (0..sent).filter(|s| !odata.contains(s)).collect();
        if let Some(keep) = std::env::var_os("RMCAST_PGM_WIRE_KEEP") {
            let _ = std::fs::copy(&pcap, Path::new(&keep).join(format!("{tag}.pcapng")));
            eprintln!("{tag}: sender {}", sender["agent"]);
        }
        assert!(
            missing.is_empty(),
            "{tag}: {} of {sent} ODATA numbers seen; missing {missing:?}",
            odata.len()
        );
    }
    // The agents' own datagrams in rmcast's header, read as PGM on the group's port: refused.
    let pcap = b.work.path().join("header.pcapng");
    let sender = transfer(&b, group, &data, &pcap, &["--rmcast-header"]);
    let on_group = check(&pcap, &Expect::of(&sender, 6200, 1));
    assert!(
        on_group.is_err(),
        "rmcast's header passed as PGM: {on_group:?}"
    );
    eprintln!(
        "--rmcast-header on the group's port: {}",
        on_group.unwrap_err()
    );
    let on_data = check(&pcap, &Expect::of(&sender, 6201, 1));
    assert!(on_data.is_err(), "{on_data:?}");
}

/// `norm`'s default socket mode speaks RFC 5740 on the wire (issue 62), the same way: a
/// `--protocol norm` transfer on the bed at 1 % frame loss, read with tshark 4.0's NORM
/// heuristic (`--enable-heuristic rmt_norm_udp`). Every datagram to or from the data port
/// must dissect as NORM, none malformed or flagged, from the sender (NORM_DATA, NORM_CMD:
/// its node id as `source_id`, the session's low 16 bits as `instance_id`) or a receiver
/// (NORM_NACK, NORM_ACK naming the sender); every source segment the sender sent must be
/// seen with the agent's block and symbol (fec_id 5's payload id, blocks of 64), and the
/// loss must bring NACKs, parity repairs, ACKs, FLUSHes and probes (CMD(CC)).
mod norm {
    use super::*;

    const FIELDS: [&str; 12] = [
        "udp.srcport",
        "udp.dstport",
        "frame.protocols",
        "_ws.malformed",
        "_ws.expert.message",
        "norm.type",
        "norm.source_id",
        "norm.instance_id",
        "norm.flavor",
        "norm.nack.server",
        "norm.ack.source",
        "data.data",
    ];

    /// Blocks of the `norm` agent on sockets (the spec's `block_len`).
    const BLOCK: u32 = rmcast_proto::norm::spec::BLOCK_LEN as u32;

    /// An IPv4-looking node id, as tshark shows `source_id`.
    fn node(n: u32) -> String {
        std::net::Ipv4Addr::from(n).to_string()
    }

    /// The count of each kind of message on `port` and the source segments seen (block ×
    /// 64 + symbol); an error for the first datagram that is not as it must be.
    pub fn check(
        file: &Path,
        sender: &Value,
        port: u16,
    ) -> Result<(BTreeMap<&'static str, u64>, BTreeSet<u32>), String> {
        let args = strings(&[
            "--enable-heuristic",
            "rmt_norm_udp",
            "--disable-protocol",
            "rx",
            // Heuristics before port-registered dissectors: an ephemeral source port may be
            // registered to another protocol (ENIP's 44818 …), which would take the datagram.
            "-o",
            "udp.try_heuristic_first:TRUE",
        ]);
        let rows = tshark::fields(file, &args, &FIELDS);
        let session = sender["session"].as_u64().expect("session") as u32;
        let me = node(sender["node"].as_u64().expect("node") as u32);
        let receivers = [node(1001), node(1002)];
        let instance = (session as u16).to_string();
        let port = port.to_string();
        let mut kinds = BTreeMap::new();
        let mut source = BTreeSet::new();
        for (i, row) in rows.iter().enumerate() {
            let get = |name: &str| {
                let k = FIELDS.iter().position(|f| *f == name).expect("a field");
                row.get(k).map_or("", String::as_str)
            };
            if get("udp.srcport") != port && get("udp.dstport") != port {
                continue;
            }
            let ctx = format!("frame {}: {row:?}", i + 1);
            if !get("frame.protocols").contains(":udp:norm") {
                return Err(format!("not NORM: {ctx}"));
            }
            if !get("_ws.malformed").is_empty() || !get("_ws.expert.message").is_empty() {
                return Err(format!("malformed or flagged: {ctx}"));
            }
            let from_sender = get("norm.source_id") == me && get("norm.instance_id") == instance;
            let kind = match (get("norm.type"), get("norm.flavor")) {
                ("2", _) if from_sender => {
                    let id = get("data.data").get(..8).unwrap_or_default();
                    let id = u32::from_str_radix(id, 16).map_err(|_| format!("no id: {ctx}"))?;
                    let (block, symbol) = (id >> 8, id & 0xff);
                    if symbol < BLOCK {
                        source.insert(block * BLOCK + symbol);
                        "data"
                    } else {
                        "parity"
                    }
                }
                ("3", "1") if from_sender => "flush",
                ("3", "3") if from_sender => "squelch",
                ("3", "4") if from_sender => "cc",
                ("4", _) if get("norm.nack.server") == me => "nack",
                ("5", _) if get("norm.ack.source") == me => "ack",
                _ => return Err(format!("not a message of the session: {ctx}")),
            };
            if matches!(kind, "nack" | "ack")
                && !receivers.iter().any(|r| r == get("norm.source_id"))
            {
                return Err(format!("feedback from no receiver: {ctx}"));
            }
            *kinds.entry(kind).or_default() += 1;
        }
        if kinds.is_empty() {
            return Err(format!("no datagram to or from port {port}"));
        }
        Ok((kinds, source))
    }
}

#[test]
fn tshark_reads_every_norm_datagram_of_a_socket_transfer_as_rfc5740() {
    if let Some(why) = common::skip_unless_ci(cannot_run()) {
        eprintln!("skipped: norm on the wire as RFC 5740: {why}");
        return;
    }
    let b = Bed::new(&SERIAL, 3);
    b.seg.frame_loss(0.01, None).unwrap();
    let data = common::pseudo_random(LEN, 5740);
    let group = "239.77.62.2:6300";
    let pcap = b.work.path().join("norm.pcapng");
    let sender = transfer(&b, group, &data, &pcap, &["--protocol", "norm"]);
    if let Some(keep) = std::env::var_os("RMCAST_PGM_WIRE_KEEP") {
        let _ = std::fs::copy(&pcap, Path::new(&keep).join("norm.pcapng"));
        eprintln!("norm: sender {}", sender["agent"]);
    }
    let (kinds, source) = norm::check(&pcap, &sender, 6301).unwrap_or_else(|why| panic!("{why}"));
    eprintln!(
        "norm: NORM messages by kind {kinds:?}, {} source segments",
        source.len()
    );
    for kind in ["data", "parity", "flush", "cc", "nack", "ack"] {
        assert!(
            kinds.get(kind).is_some_and(|&n| n > 0),
            "no {kind}: {kinds:?}"
        );
    }
    let sent = sender["agent"]["data_sent"].as_u64().expect("data_sent") as u32;
    let missing: Vec<u32> = (0..sent).filter(|s| !source.contains(s)).collect();
    assert!(
        missing.is_empty(),
        "{} of {sent} segments seen; missing {missing:?}",
        source.len()
    );
    // The agents' own datagrams in rmcast's header: no NORM on either port.
    let pcap = b.work.path().join("norm-header.pcapng");
    let sender = transfer(
        &b,
        group,
        &data,
        &pcap,
        &["--protocol", "norm", "--rmcast-header"],
    );
    for port in [6300, 6301] {
        let r = norm::check(&pcap, &sender, port);
        assert!(
            r.is_err(),
            "rmcast's header passed as NORM on {port}: {r:?}"
        );
        eprintln!("norm --rmcast-header on {port}: {}", r.unwrap_err());
    }
}
