//! Multi-host tests with loss per Ethernet frame: `rmcast send` and `rmcast recv` (this
//! build's binary), each in its own network namespace of an `rmcast_lab::netns::Segment`, and
//! the bridge — in the switch's namespace — dropping frames on their way to the receivers
//! (`Segment::frame_loss`), where a switch or NIC drops them, before IP reassembly.
//!
//! * every protocol that runs on sockets moves a file to 3 receivers with 10 % of the frames
//!   dropped, byte-exact at every receiver; datagrams of 1,472 bytes (`--datagram-size`), one
//!   frame each on the 1,500-byte MTU — a datagram of 41 fragments would almost never arrive
//!   whole (0.9^41 = 1.3 %);
//! * a receiver killed (SIGKILL) mid-transfer: the sender evicts it, names it `evicted` in its
//!   summary and exits with status 1 (`rmcast send`: 0 every expected receiver completed, 1
//!   the transfer ran but some receiver did not, 2 usage or setup error); the others complete
//!   byte-exact;
//! * `dsp`'s designated receiver killed mid-transfer: the next lowest node id is elected, the
//!   other members complete byte-exact and the summary lists the re-election;
//! * a flood of random datagrams (some with an rmcast-looking header) at one receiver's UDP
//!   ports and at the group during a transfer: every receiver completes byte-exact and the
//!   flooded one counts the rejects.
//!
//! Needs Linux, root, iproute2 and nftables; otherwise each test prints why it did not run.
//! The tests take a lock so they run one after the other (two cores; they time transfers).

mod common;

use common::{explain, in_netns, strings, Bed, Proc};

use rmcast_lab::netns::{self, Segment};
use rmcast_proto::rng::AgentRng;
use serde_json::Value;
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A transfer that takes longer fails the test (instead of hanging CI).
const DEADLINE: Duration = Duration::from_secs(240);
static SERIAL: Mutex<()> = Mutex::new(());

macro_rules! need_netns {
    () => {
        if let Some(why) = common::cannot_run_netns_nft() {
            eprintln!("skipped: multi-host frame-loss tests: {why} (CI runs them as root)");
            return;
        }
    };
}

/// `rmcast ARGS` on host `h` of `seg`, output piped.
fn rmcast(seg: &Segment, h: usize, args: &[String]) -> Proc {
    in_netns(&seg.host(h), args)
}

/// Pseudo-random file content from a seed.
fn content(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = AgentRng::from_seed(seed);
    let mut v = Vec::with_capacity(len + 8);
    while v.len() < len {
        v.extend_from_slice(&rng.range_inclusive(0, u64::MAX).to_le_bytes());
    }
    v.truncate(len);
    v
}

/// One transfer: receivers on hosts `1..=n`, their output directories and processes.
struct Transfer {
    group: String,
    dirs: Vec<PathBuf>,
    receivers: Vec<Proc>,
    /// What each receiver printed once it ended (kept for the failure messages).
    ended: Vec<Option<Output>>,
}

impl Transfer {
    /// Start `rmcast recv` on hosts 1..=n (node ids 1001..), each with `extra` options.
    fn start(seg: &Segment, work: &Path, group: &str, n: usize, extra: &[&str]) -> Transfer {
        let mut dirs = Vec::new();
        let mut receivers = Vec::new();
        for r in 1..=n {
            let dir = work.join(format!("{}-r{r}", group.replace([':', '.'], "_")));
            std::fs::create_dir_all(&dir).unwrap();
            let mut args = strings(&["recv", "--group", group, "--interface", netns::IFACE]);
            args.extend(strings(&["--node-id", &(1000 + r).to_string()]));
            args.extend(strings(&["--json", "--quiet", "--wait", "60", "--dir"]));
            args.push(dir.display().to_string());
            args.extend(strings(extra));
            receivers.push(rmcast(seg, r, &args));
            dirs.push(dir);
        }
        // Let them join the group before the sender announces.
        std::thread::sleep(Duration::from_millis(500));
        Transfer {
            group: group.into(),
            ended: vec![None; receivers.len()],
            dirs,
            receivers,
        }
    }

    /// Run `rmcast send` on host 0 to the receivers: its output (None: past the deadline).
    fn send(&self, seg: &Segment, file: &Path, extra: &[&str]) -> Option<Output> {
        let n = self.receivers.len().to_string();
        let mut args = strings(&["send", "--group", &self.group, "--interface", netns::IFACE]);
        args.extend(strings(&["--receivers", &n, "--json", "--quiet"]));
        args.extend(strings(extra));
        args.push(file.display().to_string());
        rmcast(seg, 0, &args).finish(Instant::now() + DEADLINE)
    }

    /// Wait for receiver `r` (1-based): its output, None if it had to be stopped.
    fn wait(&mut self, r: usize) -> Option<Output> {
        if self.ended[r - 1].is_none() {
            self.ended[r - 1] =
                self.receivers[r - 1].finish(Instant::now() + Duration::from_secs(30));
        }
        self.ended[r - 1].clone()
    }

    /// What receivers `rs` printed (each waited for), for a failure message.
    fn said(&mut self, rs: &[usize]) -> String {
        rs.iter()
            .map(|&r| match self.wait(r) {
                Some(o) => format!(
                    "receiver {r}: {}; stdout: {}",
                    explain(&o),
                    String::from_utf8_lossy(&o.stdout).trim()
                ),
                None => format!("receiver {r}: did not end"),
            })
            .collect::<Vec<_>>()
            .join("\n")
    }
}

fn json(o: &Output) -> Value {
    common::json_of(o)
}

/// Receiver `r` ended with status 0 and holds exactly `data` under `name`.
fn assert_byte_exact(t: &mut Transfer, r: usize, name: &str, data: &[u8], what: &str) -> Value {
    let out = t
        .wait(r)
        .unwrap_or_else(|| panic!("{what}: receiver {r} did not end"));
    assert!(
        out.status.success(),
        "{what}: receiver {r}: {}",
        explain(&out)
    );
    let got = std::fs::read(t.dirs[r - 1].join(name))
        .unwrap_or_else(|e| panic!("{what}: receiver {r} has no {name}: {e}"));
    assert!(
        got == data,
        "{what}: receiver {r}: {} bytes, not byte-exact ({} sent)",
        got.len(),
        data.len()
    );
    json(&out)
}

/// A bed of `hosts` hosts and a file `name` of `len` pseudo-random bytes (from `seed`) in its
/// work folder: the bed, the file's content and its path.
fn bed(hosts: usize, name: &str, len: usize, seed: u64) -> (Bed, Vec<u8>, PathBuf) {
    let b = Bed::new(&SERIAL, hosts);
    let data = content(len, seed);
    let file = b.file(name, &data);
    (b, data, file)
}

/// 10 % of the frames to the receivers dropped: every protocol on sockets that runs on one LAN
/// (all but csp and cp) completes (pgm also
/// with `--fec-k 16`, with two proactive parity packets a block and with `--rate auto`), every
/// file byte-exact, with at most 1.2 repairs a dropped frame (bap, go-back-N, excepted).
#[test]
fn ten_percent_frame_loss_every_protocol() {
    need_netns!();
    let (b, data, file) = bed(4, "f.bin", 2_000_000, 17);
    let mut failures = Vec::new();
    // Every protocol, and pgm with FEC repair (on demand, and with proactive parity) and with
    // congestion control (`--rate auto` stalled in 4 of 13 runs by hand until TFMCC's slow
    // start and lossless receivers were mended: see `rmcast_proto::tfmcc`).
    // csp and cp need their local exchange inside the network (`rmcast relay --region`):
    // netns_relay.rs runs them through relays with loss per frame on every bridge.
    let mut runs: Vec<(String, Vec<&str>)> = rmcast_net::agents::PROTOCOLS
        .iter()
        .filter(|p| !matches!(p.name(), "csp" | "cp"))
        .map(|p| (p.name().to_string(), vec!["--protocol", p.name()]))
        .collect();
    runs.push((
        "pgm --fec-k 16".into(),
        vec!["--protocol", "pgm", "--fec-k", "16"],
    ));
    runs.push((
        "pgm --fec-k 16 --fec-proactive 2".into(),
        vec!["--protocol", "pgm", "--fec-k", "16", "--fec-proactive", "2"],
    ));
    runs.push((
        "pgm --rate auto".into(),
        vec!["--protocol", "pgm", "--rate", "auto"],
    ));
    for (i, (proto, args)) in runs.iter().enumerate() {
        let proto = proto.as_str();
        b.seg.frame_loss(0.10, Some(0)).unwrap();
        let group = format!("239.77.1.{}:{}", i + 1, 6100 + 10 * i);
        let mut t = Transfer::start(&b.seg, b.work.path(), &group, 3, &[]);
        let t0 = Instant::now();
        let mut args = args.clone();
        args.extend(["--datagram-size", "1472"]);
        let Some(s) = t.send(&b.seg, &file, &args) else {
            failures.push(format!(
                "{proto}: the sender did not finish in {DEADLINE:?}"
            ));
            continue;
        };
        let secs = t0.elapsed().as_secs_f64();
        let frames = b.seg.frames_dropped();
        eprintln!(
            "{proto}: 2 MB to 3 receivers at 10 % frame loss in {secs:.1} s, {frames} frames dropped"
        );
        if !s.status.success() {
            // The sender's summary says which receiver it gave up on, and what it held.
            failures.push(format!(
                "{proto}: sender {}; stdout {}",
                explain(&s),
                String::from_utf8_lossy(&s.stdout)
            ));
            continue;
        }
        assert!(frames > 0, "{proto}: the bridge dropped no frame");
        assert_eq!(json(&s)["all_completed"], true, "{proto}");
        let mut repairs = json(&s)["agent"]["repairs_sent"].as_u64().unwrap_or(0);
        for r in 1..=3 {
            let v = assert_byte_exact(&mut t, r, "f.bin", &data, proto);
            repairs += v["repairs_sent"].as_u64().unwrap_or(0);
            // Every datagram one frame: a repair with more fields than the data it carries
            // (srm's and lms's REPAIR, pgm's PARITY) must still fit --datagram-size.
            let big = v["driver"]["reassembled"].as_u64();
            if big != Some(0) {
                failures.push(format!(
                    "{proto}: receiver {r} got {big:?} datagrams of more than one frame"
                ));
            }
        }
        // Repairs (the sender's and the receivers': srm's and lms's members, dsp's designated
        // receiver) against the frames the bridge dropped to the receivers: a multicast
        // repair serves every receiver that lost the packet, so a protocol that repairs what
        // was lost sends at most about one a dropped frame (0.43-0.82 seen). bap is
        // go-back-N (seed 000 §2.6): a loss resends the rest of its window (2.3 seen).
        let per_frame = repairs as f64 / frames as f64;
        eprintln!(
            "{proto}: {repairs} repairs for {frames} frames dropped ({per_frame:.2} a frame)"
        );
        if proto != "bap" && per_frame > 1.2 {
            failures.push(format!(
                "{proto}: {repairs} repairs for {frames} dropped frames ({per_frame:.2} a frame)"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn kill_when_holding(dir: &Path, pid: u32, bytes: u64) -> Option<u64> {
    common::kill_when_holding(dir, pid, bytes, DEADLINE)
}

/// Send `file` with `args` to the receivers of `t` while receiver `victim` (1-based) is
/// killed (SIGKILL) once its temporary file holds `at` bytes, before it held the whole file;
/// the sender's output.
fn send_killing(
    b: &Bed,
    t: &Transfer,
    file: &Path,
    args: &[&str],
    victim: usize,
    at: u64,
) -> Output {
    let dir = &t.dirs[victim - 1];
    let pid = t.receivers[victim - 1].id().unwrap();
    let (killed_at, s) = std::thread::scope(|sc| {
        let watch = sc.spawn(|| kill_when_holding(dir, pid, at));
        let s = t.send(&b.seg, file, args);
        (watch.join().unwrap(), s)
    });
    let s = s.expect("the sender did not finish");
    let held = killed_at.unwrap_or_else(|| panic!("receiver {victim} never held {at} bytes"));
    let total = std::fs::metadata(file).unwrap().len();
    assert!(
        held < total,
        "receiver {victim} was killed only after it held the whole file"
    );
    eprintln!(
        "killed receiver {victim} at {held} of {total} bytes; {} frames dropped",
        b.seg.frames_dropped()
    );
    s
}

/// A receiver killed halfway through: evicted, reported, sender exit status 1; the other
/// receivers complete byte-exact. With the default (pgm) and a 256-packet transmit window
/// (65,536 would hold the whole 6 MB) the sender stays near the slowest receiver, so the
/// victim's file grows steadily rather than all at once after a repair, and the killed
/// receiver holds the window until it is evicted.
#[test]
fn receiver_killed_mid_transfer_is_reported() {
    need_netns!();
    kill_one_receiver("239.77.2.1:6200", &["--txw", "256"]);
}

/// xtp's sender runs at the pace of its slowest receiver (its window closes on the lowest
/// acknowledged sequence): the killed receiver becomes the slowest, holds the window until it
/// is evicted, and the others then finish byte-exact (issue 24: every role that stands for
/// others, killed mid-transfer).
#[test]
fn slowest_xtp_receiver_killed_mid_transfer_is_reported() {
    need_netns!();
    kill_one_receiver("239.77.2.2:6210", &["--protocol", "xtp", "--window", "64"]);
}

/// The protocols that joined the socket driver last: for rra and ff the killed receiver's
/// missing acknowledgments hold the sender's window until it is evicted; srm (no
/// acknowledgments) ends when every live receiver reported and the silent one is evicted.
#[test]
fn rra_ff_and_srm_receiver_killed_mid_transfer_is_reported() {
    need_netns!();
    kill_one_receiver("239.77.2.3:6220", &["--protocol", "rra"]);
    kill_one_receiver("239.77.2.4:6230", &["--protocol", "ff"]);
    kill_one_receiver("239.77.2.5:6240", &["--protocol", "srm"]);
}

/// Start 4 receivers and a sender with `protocol` args at 10 % frame loss, SIGKILL receiver 3
/// once it holds half the file, and check the outcome.
fn kill_one_receiver(group: &str, protocol: &[&str]) {
    let (b, data, file) = bed(5, "k.bin", 6_000_000, 29);
    b.seg.frame_loss(0.10, Some(0)).unwrap();
    let mut t = Transfer::start(&b.seg, b.work.path(), group, 4, &[]);
    let victim = 3;
    let mut args = vec![
        "--datagram-size",
        "1472",
        "--rate",
        "40M",
        "--evict-after",
        "2",
    ];
    args.extend_from_slice(protocol);
    // The victim is killed once its temporary file holds half of the data.
    let s = send_killing(&b, &t, &file, &args, victim, data.len() as u64 / 2);
    assert_eq!(
        s.status.code(),
        Some(1),
        "sender exit status 1 (a receiver did not complete); {}",
        explain(&s)
    );
    let v = json(&s);
    let outcome = |node: u64| {
        v["receivers"]
            .as_array()
            .and_then(|a| a.iter().find(|r| r["node"] == node))
            .map(|r| r["outcome"].as_str().unwrap_or("").to_string())
    };
    assert_eq!(
        outcome(1000 + victim as u64).as_deref(),
        Some("evicted"),
        "the summary names the killed receiver evicted: {v}"
    );
    assert_eq!(v["all_completed"], false);
    for r in [1, 2, 4] {
        assert_eq!(
            outcome(1000 + r as u64).as_deref(),
            Some("completed"),
            "{v}"
        );
        assert_byte_exact(&mut t, r, "k.bin", &data, "kill");
    }
    assert!(
        !t.dirs[victim - 1].join("k.bin").exists(),
        "the killed receiver left a file under the final name"
    );
}

/// Random datagrams flooded at one receiver's UDP ports (and the group) during a transfer
/// with 10 % frame loss, with the default protocol (pgm) and the ones that joined the socket
/// driver last (rra, ff, srm): every receiver completes byte-exact, the flooded one counts
/// rejects.
#[test]
fn flood_at_one_receiver() {
    need_netns!();
    let (b, data, file) = bed(5, "g.bin", 2_000_000, 41);
    b.seg.frame_loss(0.10, Some(0)).unwrap();
    let protocols = [
        &[][..],
        &["--protocol", "rra"],
        &["--protocol", "ff"],
        &["--protocol", "srm"],
    ];
    for (i, args) in protocols.into_iter().enumerate() {
        let group: SocketAddr = format!("239.77.3.{}:{}", i + 1, 6300 + 10 * i)
            .parse()
            .unwrap();
        flood_during(&b, &data, &file, group, args);
    }
}

fn flood_during(b: &Bed, data: &[u8], file: &Path, group: SocketAddr, args: &[&str]) {
    let mut t = Transfer::start(&b.seg, b.work.path(), &group.to_string(), 3, &[]);
    // Every UDP port open on receiver 1's host is receiver 1's (it is alone there).
    let ports = udp_ports(&b.seg, 1);
    assert!(!ports.is_empty(), "receiver 1 has no UDP socket");
    let target = b.seg.addr(1);
    let stop = AtomicBool::new(false);
    let flooded = AtomicU64::new(0);
    let seg = &b.seg;
    let s = std::thread::scope(|sc| {
        sc.spawn(|| {
            seg.enter(4).unwrap();
            let sock = UdpSocket::bind((seg.addr(4), 0)).unwrap();
            sock.set_multicast_ttl_v4(1).unwrap();
            let mut rng = AgentRng::from_seed(5);
            let mut dests: Vec<SocketAddr> = ports
                .iter()
                .map(|p| SocketAddr::from((target, *p)))
                .collect();
            dests.push(group);
            // A valid-looking header (magic, version 1, family 1, kind 1) over random bytes.
            let header = [b'R', b'M', 1, 1, 1, 0, 0, 0];
            while !stop.load(Ordering::Relaxed) {
                for d in &dests {
                    let len = rng.range_inclusive(1, 1472) as usize;
                    let mut dgram = content(len, rng.range_inclusive(0, u64::MAX));
                    if rng.chance(0.5) && len >= header.len() {
                        dgram[..header.len()].copy_from_slice(&header);
                    }
                    if sock.send_to(&dgram, d).is_ok() {
                        flooded.fetch_add(1, Ordering::Relaxed);
                    }
                }
                std::thread::sleep(Duration::from_micros(200));
            }
        });
        let mut a = vec!["--datagram-size", "1472"];
        a.extend_from_slice(args);
        let s = t.send(seg, file, &a);
        stop.store(true, Ordering::Relaxed);
        s
    });
    let s = s.expect("the sender did not finish");
    let flooded = flooded.into_inner();
    assert!(flooded > 0, "no flood datagram left");
    assert!(s.status.success(), "sender: {}", explain(&s));
    let mut rejected = 0;
    for r in 1..=3 {
        let v = assert_byte_exact(&mut t, r, "g.bin", data, "flood");
        if r == 1 {
            rejected = v["driver"]["rejected_malformed"].as_u64().unwrap_or(0)
                + v["driver"]["rejected_stranger"].as_u64().unwrap_or(0);
        }
    }
    eprintln!("{args:?}: flooded {flooded} datagrams; receiver 1 rejected {rejected}");
    assert!(rejected > 0, "receiver 1 counted no rejected datagram");
}

/// `dsp` (issue 24): the designated receiver of a region of 3 — the lowest node id — killed
/// (SIGKILL) mid-transfer with 10 % frame loss: the sender evicts it, elects the next lowest
/// id and announces it; the two others complete byte-exact, the sender exits 1, names the
/// killed one `evicted` and lists the re-election; no summary line says "acknowledged" for a
/// receiver whose own status the sender did not hear.
#[test]
fn designated_receiver_killed_mid_transfer_is_replaced() {
    need_netns!();
    let (b, data, file) = bed(4, "d.bin", 4_000_000, 24);
    b.seg.frame_loss(0.10, Some(0)).unwrap();
    // Node ids 1001 (host 1, the region's lowest: designated), 1002, 1003; all region 0.
    let mut t = Transfer::start(
        &b.seg,
        b.work.path(),
        "239.77.24.1:6400",
        3,
        &["--region", "0"],
    );
    // Receiver 1, the designated one, is killed once it holds a third of the file.
    let dsp = [
        "--protocol",
        "dsp",
        "--datagram-size",
        "1400",
        "--rate",
        "0",
        "--evict-after",
        "2",
    ];
    let s = send_killing(&b, &t, &file, &dsp, 1, data.len() as u64 / 3);
    // What the two survivors printed, for every failure message below.
    let said = t.said(&[2, 3]);
    assert_eq!(s.status.code(), Some(1), "sender: {}\n{said}", explain(&s));
    let v: Value = serde_json::from_slice(&s.stdout).unwrap_or(Value::Null);
    let rx = v["receivers"].as_array().cloned().unwrap_or_default();
    let find = |node: u64| rx.iter().find(|r| r["node"] == node).cloned();
    let victim = find(1001).unwrap_or_else(|| panic!("no receiver 1001 in {v}\n{said}"));
    assert_eq!(victim["outcome"], "evicted", "{v}\n{said}");
    assert_eq!(victim["role"], "former designated", "{v}\n{said}");
    assert_eq!(
        find(1002).map(|r| r["role"].clone()),
        Some(Value::from("designated")),
        "the next lowest id is designated: {v}\n{said}"
    );
    let changes: Vec<String> = v["role_changes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.as_str().map(str::to_string))
        .collect();
    assert!(
        changes
            .iter()
            .any(|c| c.contains("000003e9 evicted") && c.contains("000003ea elected")),
        "the summary lists the re-election: {changes:?}\n{said}"
    );
    for r in &rx {
        let reason = r["reason"].as_str().unwrap_or("");
        assert!(
            !reason.contains("acknowledged") || r["role"] == "designated",
            "only a receiver whose own status the sender heard acknowledged: {r}"
        );
    }
    for r in [2usize, 3] {
        let node = 1000 + r as u64;
        assert_eq!(
            find(node).map(|x| x["outcome"].clone()),
            Some(Value::from("completed")),
            "{v}\n{said}"
        );
        assert_byte_exact(&mut t, r, "d.bin", &data, "dsp fail-over");
    }
    assert!(
        !t.dirs[0].join("d.bin").exists(),
        "the killed receiver left a file under the final name"
    );
}

/// The local UDP ports open in host `h`'s namespace (`ss -uan`).
fn udp_ports(seg: &Segment, h: usize) -> Vec<u16> {
    common::udp_ports_in(&seg.host(h))
}
