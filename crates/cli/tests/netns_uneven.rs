//! Multi-host tests of an uneven LAN (issue 59): `rmcast send` and `rmcast recv` (this
//! build's binary), each in its own network namespace of an `rmcast_lab::netns::Segment`.
//!
//! * one receiver's bridge port is a 50 Mbit/s link behind a 50 ms drop-tail queue (`tc tbf`
//!   in the bridge's namespace, `Segment::queue_bottleneck`), the others run at bridge
//!   speed: with the defaults (and `--final-wait 1`, shorter than the slow receiver needs) every
//!   receiver completes byte-exact and the sender exits 0, its summary giving each receiver's own
//!   completion time and rate (the slow one was given up while it still made progress before:
//!   "unconfirmed");
//! * a receiver stopped (SIGSTOP) for 3 s mid-transfer, then continued: it completes
//!   byte-exact and is not evicted (the stall is shorter than `--evict-after`);
//! * a forged gathering ANNOUNCE that nobody serves, multicast before the real sender
//!   starts: the receivers that JOIN it go back to listening within a bounded time and
//!   complete the real session byte-exact;
//! * `rmcast recv --keep`: three receivers that stay receive three transfers in a row, each
//!   byte-exact, a JSON line per session, and end with status 130 on SIGTERM;
//! * a receiver killed (SIGKILL) 1 s into the transfer and started again at 2 s with the same
//!   `--dir` and node id rejoins the running session and completes byte-exact;
//! * restart mode: two receivers left with partial copies by a stopped session get the file
//!   from the next `rmcast send` of it, which sends only what the shorter copy lacks.
//!
//! Needs Linux, root, iproute2, nftables and tc; otherwise each test prints why it did not
//! run. The tests take a lock so they run one after the other (two cores).

mod common;

use common::{explain, in_netns, json_of, pseudo_random, strings, Bed, Proc};
use rmcast_lab::netns::{self, Segment};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;
use std::time::{Duration, Instant};

static SERIAL: Mutex<()> = Mutex::new(());
const DEADLINE: Duration = Duration::from_secs(180);

/// Start `rmcast recv` with `extra` flags on host `r` (node id 1000 + r) into `work/r<r>`:
/// its process and directory.
fn receiver(seg: &Segment, work: &Path, group: &str, r: usize, extra: &[&str]) -> (Proc, PathBuf) {
    let dir = work.join(format!("r{r}"));
    std::fs::create_dir_all(&dir).unwrap();
    let mut args = strings(&["recv", "--group", group, "--interface", netns::IFACE]);
    args.extend(strings(&["--node-id", &(1000 + r).to_string()]));
    args.extend(strings(&["--json", "--quiet", "--dir"]));
    args.push(dir.display().to_string());
    args.extend(strings(extra));
    (in_netns(&seg.host(r), &args), dir)
}

/// Start `rmcast recv` with `extra` flags on hosts 1..=n (node ids 1001..): their processes
/// and directories.
fn receivers(
    seg: &Segment,
    work: &Path,
    group: &str,
    n: usize,
    extra: &[&str],
) -> (Vec<Proc>, Vec<PathBuf>) {
    let (procs, dirs) = (1..=n)
        .map(|r| receiver(seg, work, group, r, extra))
        .unzip();
    std::thread::sleep(Duration::from_millis(500));
    (procs, dirs)
}

/// A receiver that ends after one session: it gives up if none is announced within 60 s.
const ONE_SESSION: &[&str] = &["--wait", "60"];

/// `rmcast send` of `file` on host 0 to `n` receivers with `extra` flags.
fn send(seg: &Segment, group: &str, n: usize, file: &Path, extra: &[&str]) -> Proc {
    let mut args = strings(&["send", "--group", group, "--interface", netns::IFACE]);
    args.extend(strings(&[
        "--receivers",
        &n.to_string(),
        "--json",
        "--quiet",
    ]));
    args.extend(strings(extra));
    args.push(file.display().to_string());
    in_netns(&seg.host(0), &args)
}

/// Every receiver ended with status 0 holding exactly `data` as `name`: their summaries.
fn all_byte_exact(procs: &mut [Proc], dirs: &[PathBuf], name: &str, data: &[u8]) -> Vec<Value> {
    let mut summaries = Vec::new();
    for (i, p) in procs.iter_mut().enumerate() {
        let out = p
            .finish(Instant::now() + Duration::from_secs(30))
            .unwrap_or_else(|| panic!("receiver {} did not end", i + 1));
        assert!(
            out.status.success(),
            "receiver {}: {}",
            i + 1,
            explain(&out)
        );
        let got = std::fs::read(dirs[i].join(name)).unwrap_or_default();
        assert!(got == data, "receiver {}: not byte-exact", i + 1);
        summaries.push(json_of(&out));
    }
    summaries
}

/// The sender's summary after status 0, with every receiver `completed` and its own time
/// and rate.
fn completed_summary(out: &Output) -> Vec<Value> {
    assert!(out.status.success(), "sender: {}", explain(out));
    let v = json_of(out);
    let rs = v["receivers"].as_array().cloned().unwrap_or_default();
    for r in &rs {
        assert_eq!(r["outcome"], "completed", "{r}");
        assert!(r["seconds"].as_f64().is_some_and(|s| s > 0.0), "{r}");
        assert!(r["mbit_s"].as_f64().is_some_and(|s| s > 0.0), "{r}");
    }
    rs
}

macro_rules! need_netns {
    () => {
        if let Some(why) = common::cannot_run_netns_nft() {
            eprintln!("skipped: multi-host uneven-LAN tests: {why} (CI runs them as root)");
            return;
        }
    };
}

#[test]
fn a_receiver_behind_a_slow_port_is_served_while_it_makes_progress() {
    need_netns!();
    let b = Bed::new(&SERIAL, 4);
    let seg = &b.seg;
    seg.queue_bottleneck(3, 50_000_000, Duration::from_millis(50), &[])
        .expect("a 50 Mbit/s port (tc tbf)");
    let data = pseudo_random(10_000_000, 59);
    let file = b.file("f.bin", &data);
    let group = "239.77.59.1:6590";
    let (mut procs, dirs) = receivers(seg, b.work.path(), group, 3, ONE_SESSION);
    // --final-wait 1: the slow receiver needs about 2.5 s, the fast ones 0.2 s; counted from
    // the last data instead of the last progress, the wait would give it up.
    let out = send(seg, group, 3, &file, &["--final-wait", "1"])
        .finish(Instant::now() + DEADLINE)
        .expect("the sender did not finish");
    let rs = completed_summary(&out);
    all_byte_exact(&mut procs, &dirs, "f.bin", &data);
    let secs = |node: u64| {
        rs.iter()
            .find(|r| r["node"] == node)
            .and_then(|r| r["seconds"].as_f64())
            .unwrap()
    };
    eprintln!(
        "completion: fast {:.2} s and {:.2} s, slow {:.2} s",
        secs(1001),
        secs(1002),
        secs(1003)
    );
    // 10 MB through 50 Mbit/s take at least 1.6 s; the fast ports finish sooner.
    assert!(secs(1003) >= 1.6, "the slow receiver cannot beat its port");
    assert!(secs(1001) < secs(1003) && secs(1002) < secs(1003));
}

#[test]
fn a_receiver_stopped_for_3_s_recovers_and_is_not_evicted() {
    need_netns!();
    let b = Bed::new(&SERIAL, 4);
    let seg = &b.seg;
    let data = pseudo_random(20_000_000, 60);
    let file = b.file("f.bin", &data);
    let group = "239.77.59.2:6600";
    let (mut procs, dirs) = receivers(seg, b.work.path(), group, 3, ONE_SESSION);
    // 20 MB at 50 Mbit/s: 3.2 s of new data; receiver 2 stops at 1 s for 3 s.
    let mut sender = send(seg, group, 3, &file, &["--rate", "50M"]);
    let victim = procs[1].id().unwrap();
    std::thread::sleep(Duration::from_secs(1));
    let signal = |s: &str| {
        // `ip netns exec` execs rmcast: the child's pid is rmcast's.
        let ok = Command::new("kill").args([s, &victim.to_string()]).status();
        assert!(ok.is_ok_and(|s| s.success()), "kill {s}");
    };
    signal("-STOP");
    std::thread::sleep(Duration::from_secs(3));
    signal("-CONT");
    let out = sender
        .finish(Instant::now() + DEADLINE)
        .expect("the sender did not finish");
    let rs = completed_summary(&out);
    assert_eq!(rs.len(), 3);
    all_byte_exact(&mut procs, &dirs, "f.bin", &data);
}

#[test]
fn receivers_that_keep_receive_three_transfers_in_a_row() {
    need_netns!();
    let b = Bed::new(&SERIAL, 4);
    let seg = &b.seg;
    let group = "239.77.59.3:6610";
    let (mut procs, dirs) = receivers(seg, b.work.path(), group, 3, &["--keep"]);
    let mut sent = Vec::new();
    for k in 0..3u64 {
        let data = pseudo_random(1_000_000 + 1000 * k as usize, 70 + k);
        let name = format!("f{k}.bin");
        let file = b.file(&name, &data);
        let out = send(seg, group, 3, &file, &[])
            .finish(Instant::now() + DEADLINE)
            .unwrap_or_else(|| panic!("transfer {k}: the sender did not finish"));
        assert_eq!(completed_summary(&out).len(), 3, "transfer {k}");
        sent.push((name, data));
    }
    for (i, p) in procs.iter_mut().enumerate() {
        let pid = p.id().unwrap();
        let ok = Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status();
        assert!(ok.is_ok_and(|s| s.success()));
        let out = p
            .finish(Instant::now() + Duration::from_secs(10))
            .unwrap_or_else(|| panic!("receiver {} did not end on SIGTERM", i + 1));
        assert_eq!(
            out.status.code(),
            Some(130),
            "receiver {}: {}",
            i + 1,
            explain(&out)
        );
        let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| serde_json::from_str(l).expect("a JSON line per session"))
            .collect();
        assert_eq!(lines.len(), 3, "receiver {}: {lines:?}", i + 1);
        for (l, (name, data)) in lines.iter().zip(&sent) {
            assert_eq!(l["outcome"], "completed", "{l}");
            let got = std::fs::read(dirs[i].join(name)).unwrap_or_default();
            assert!(&got == data, "receiver {}: {name} not byte-exact", i + 1);
        }
    }
}

/// A gathering ANNOUNCE of pgm under a session and a sender nobody runs.
fn forged_announce() -> Vec<u8> {
    use rmcast_wire::session::{Message as S, Phase};
    rmcast_wire::Packet::to_vec(
        rmcast_wire::Envelope {
            session: 0x5eed_0059,
            source: 0x0bad_0059,
            flags: 0,
        },
        &rmcast_wire::Message::Session(S::Announce {
            protocol: rmcast_wire::Family::Pgm as u8,
            phase: Phase::Gathering,
            security: 0,
            ack_delay_us: 0,
            window: 0,
            ack_timeout_us: 5_000,
            members: &[],
            params: &[],
        }),
    )
    .unwrap()
}

#[test]
fn receivers_behind_a_forged_unanswered_announce_join_the_next_session() {
    need_netns!();
    let b = Bed::new(&SERIAL, 5);
    let seg = &b.seg;
    let data = pseudo_random(2_000_000, 61);
    let file = b.file("f.bin", &data);
    let group: std::net::SocketAddr = "239.77.59.4:6620".parse().unwrap();
    let (mut procs, dirs) = receivers(seg, b.work.path(), &group.to_string(), 3, ONE_SESSION);
    // Host 4 announces a session nobody serves for 1 s; the receivers JOIN it and hear
    // nothing back.
    let forger = std::thread::scope(|sc| {
        sc.spawn(|| {
            seg.enter(4).unwrap();
            let sock = std::net::UdpSocket::bind((seg.addr(4), 0)).unwrap();
            sock.set_multicast_ttl_v4(1).unwrap();
            let announce = forged_announce();
            let mut sent = 0;
            for _ in 0..10 {
                if sock.send_to(&announce, group).is_ok() {
                    sent += 1;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            sent
        })
        .join()
        .unwrap()
    });
    assert!(forger > 0, "no forged ANNOUNCE left host 4");
    let started = Instant::now();
    let out = send(seg, &group.to_string(), 3, &file, &[])
        .finish(Instant::now() + DEADLINE)
        .expect("the sender did not finish");
    completed_summary(&out);
    all_byte_exact(&mut procs, &dirs, "f.bin", &data);
    eprintln!(
        "after a forged ANNOUNCE the real session took {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Issue 59, item 4: receiver 2 is killed (SIGKILL) 1 s into a 3.2-s transfer and started
/// again at 2 s with the same `--dir` and node id. The sender takes the member back at its
/// new port (`restarts: 1`), its fresh agent NAKs everything from sequence 0, the source
/// still holds it (the newest `--txw` packets are kept, delivered or not), and it completes
/// byte-exact; so do the others, and the sender exits 0. Without the restart handling the
/// new process's NAKs and reports came from an address no member had: it never completed and
/// the sender evicted node 1002 after `--evict-after`.
#[test]
fn a_receiver_killed_and_restarted_mid_transfer_completes() {
    need_netns!();
    let b = Bed::new(&SERIAL, 4);
    let seg = &b.seg;
    let data = pseudo_random(20_000_000, 62);
    let file = b.file("f.bin", &data);
    let group = "239.77.59.5:6630";
    let (mut procs, dirs) = receivers(seg, b.work.path(), group, 3, ONE_SESSION);
    let started = Instant::now();
    let mut sender = send(seg, group, 3, &file, &["--rate", "50M"]);
    std::thread::sleep(Duration::from_secs(1));
    procs[1].kill();
    let held = std::fs::read_dir(&dirs[1])
        .unwrap()
        .flatten()
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .max()
        .unwrap_or(0);
    std::thread::sleep(Duration::from_secs(1));
    let restarted = Instant::now();
    procs[1] = receiver(seg, b.work.path(), group, 2, ONE_SESSION).0;
    let out = sender
        .finish(Instant::now() + DEADLINE)
        .expect("the sender did not finish");
    let rs = completed_summary(&out);
    let again = rs.iter().find(|r| r["node"] == 1002).unwrap();
    assert_eq!(again["restarts"], 1, "{again}");
    let outs = all_byte_exact(&mut procs, &dirs, "f.bin", &data);
    // The killed process's partial copy was taken over, not left behind.
    assert_eq!(names_in(&dirs[1]), ["f.bin"]);
    eprintln!(
        "killed at 1 s holding {held} bytes, restarted at {:.1} s; the new process took {:.2} s \
         from its first data to the last byte ({} repairs), the sender {:.2} s in all",
        restarted.duration_since(started).as_secs_f64(),
        outs[1]["seconds"].as_f64().unwrap_or(0.0),
        outs[1]["repairs_received"],
        started.elapsed().as_secs_f64()
    );
}

/// The names in `dir`.
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Issue 59, item 4, restart mode: a session ends before two receivers have the file
/// (receiver 1 is killed at 1 s, the sender is stopped with SIGTERM just after, receiver 2
/// ends `failed`); each keeps its partial copy as `.f.bin.rmcast-<digest>.part` beside a
/// `.meta` sidecar, never as `f.bin`. A new `rmcast send` of the same file learns from their
/// HAVEs what they hold, sends the file only from the shorter of their prefixes on, and both
/// end byte-exact with nothing partial left. Without restart mode the second session sent
/// all 20 MB (and the unfinished files were deleted).
#[test]
fn a_new_session_of_the_same_file_sends_only_what_is_missing() {
    need_netns!();
    let b = Bed::new(&SERIAL, 3);
    let seg = &b.seg;
    let size = 20_000_000;
    let data = pseudo_random(size, 63);
    let file = b.file("f.bin", &data);
    let group = "239.77.59.6:6640";
    let (mut procs, dirs) = receivers(seg, b.work.path(), group, 2, ONE_SESSION);
    let mut sender = send(seg, group, 2, &file, &["--rate", "50M"]);
    std::thread::sleep(Duration::from_secs(1));
    procs[0].kill();
    std::thread::sleep(Duration::from_millis(300));
    let pid = sender.id().unwrap();
    let ok = Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status();
    assert!(ok.is_ok_and(|s| s.success()));
    let first = sender.finish(Instant::now() + DEADLINE).unwrap();
    assert_eq!(first.status.code(), Some(130), "{}", explain(&first));
    let out = procs[1]
        .finish(Instant::now() + Duration::from_secs(30))
        .unwrap();
    assert!(!out.status.success(), "receiver 2 cannot have completed");
    let mut held = Vec::new();
    for d in &dirs {
        let names = names_in(d);
        let part = names.iter().find(|n| n.ends_with(".part")).unwrap();
        assert!(part.starts_with(".f.bin.rmcast-"), "{names:?}");
        assert!(names.iter().any(|n| n.ends_with(".meta")), "{names:?}");
        assert!(!names.contains(&"f.bin".to_string()), "{names:?}");
        held.push(std::fs::metadata(d.join(part)).unwrap().len());
    }
    let from = *held.iter().min().unwrap();
    assert!(from > 0 && from < size as u64, "held {held:?}");
    // The next session of the same file.
    let (mut procs, dirs) = receivers(seg, b.work.path(), group, 2, ONE_SESSION);
    let out = send(seg, group, 2, &file, &[])
        .finish(Instant::now() + DEADLINE)
        .expect("the second sender did not finish");
    completed_summary(&out);
    let v = json_of(&out);
    assert_eq!(v["files"][0]["resumed_from"], from, "{}", v["files"]);
    assert_eq!(v["bytes"], size as u64 - from);
    let outs = all_byte_exact(&mut procs, &dirs, "f.bin", &data);
    for (o, d) in outs.iter().zip(&dirs) {
        assert_eq!(o["files"][0]["resumed_from"], from, "{o}");
        assert_eq!(names_in(d), ["f.bin"], "nothing partial is left");
    }
    eprintln!(
        "partial copies held {held:?} of {size} bytes; the second session sent {} bytes \
         ({} data packets, {:.0} % of the file)",
        v["bytes"],
        v["agent"]["data_sent"],
        100.0 * (size as u64 - from) as f64 / size as f64
    );
}
