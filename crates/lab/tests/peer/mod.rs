//! The hostile peer's toolkit, shared by the adversary suites (`hostile.rs`, `adversary.rs`):
//! live senders and receivers, a peer that sniffs the group and sends from its own socket (it
//! does not spoof addresses), and the checks of a transfer's outcome.
//!
//! Where they run: run as root (as CI runs them), every party is a host of its own on one
//! bridge, each in its own network namespace (`rmcast_lab::netns::Segment`): the sender, the
//! peer, and four receiver hosts taken in turn. Without root they fall back to the loopback
//! interface, and say so on stderr once.
#![allow(dead_code)]

use rmcast_lab::netns::{self, Segment, IFACE};
use rmcast_net::endpoint::session_packet;
use rmcast_net::receiver::{self, Output, RecvConfig, RecvReport};
use rmcast_net::secure::Keys;
use rmcast_net::sender::{self, Expect, NoObserver, SendConfig, SendReport, Source};
use rmcast_net::socket::{group_socket, unicast_socket, SocketOpts};
use rmcast_wire::session;
use rmcast_wire::{Header, Message, Packet};
use std::net::{SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

/// The bridge the suites' hosts share, or none (loopback).
struct Lan {
    seg: Mutex<Option<Segment>>,
    next_receiver: AtomicUsize,
}

/// The sender's host.
pub const SENDER: usize = 0;
/// The hostile peer's host.
pub const PEER: usize = 1;
/// The first of the receivers' hosts.
const RECEIVERS: usize = 2;
/// How many receiver hosts there are (receivers take them in turn).
const RECEIVER_HOSTS: usize = 4;

static LAN: OnceLock<Lan> = OnceLock::new();

/// Delete the namespaces when the test binary exits (a static is never dropped).
extern "C" fn tear_down() {
    if let Some(l) = LAN.get() {
        if let Ok(mut seg) = l.seg.lock() {
            seg.take();
        }
    }
}

fn lan() -> &'static Lan {
    LAN.get_or_init(|| {
        let seg = match netns::available() {
            Ok(()) => {
                let seg = Segment::create(RECEIVERS + RECEIVER_HOSTS)
                    .expect("root, but the suite's namespaces could not be made");
                // SAFETY: `tear_down` is an `extern "C" fn()` that only takes the segment out
                // of its mutex and drops it (deleting the namespaces with `ip`).
                unsafe {
                    libc::atexit(tear_down);
                }
                Some(seg)
            }
            Err(why) => {
                eprintln!("adversary suites: on the loopback interface ({why})");
                None
            }
        };
        Lan {
            seg: Mutex::new(seg),
            next_receiver: AtomicUsize::new(0),
        }
    })
}

/// Whether the parties run on namespace hosts (else on loopback).
pub fn on_namespaces() -> bool {
    lan().seg.lock().is_ok_and(|s| s.is_some())
}

/// The interface the parties use.
pub fn iface() -> &'static str {
    if on_namespaces() {
        IFACE
    } else {
        "lo"
    }
}

/// Move the calling thread onto host `h` (nothing on loopback). Sockets it makes afterwards
/// live there, and so do threads it spawns.
pub fn enter(h: usize) {
    if let Some(seg) = lan().seg.lock().unwrap().as_ref() {
        seg.enter(h).unwrap();
    }
}

/// The next receiver host, in turn.
fn receiver_host() -> usize {
    RECEIVERS + lan().next_receiver.fetch_add(1, Ordering::Relaxed) % RECEIVER_HOSTS
}

pub fn group(port: u16) -> SocketAddr {
    format!("239.255.79.{}:{port}", port % 200 + 1)
        .parse()
        .unwrap()
}

pub fn payload(path: &Path, len: usize, seed: u64) -> Vec<u8> {
    let data = sender::pseudo_random(len as u64, seed);
    std::fs::write(path, &data).unwrap();
    data
}

/// A socket of the hostile peer on its host (its own port). The calling thread moves to the
/// peer's host.
pub fn hostile_socket(g: SocketAddr) -> UdpSocket {
    enter(PEER);
    let mut o = SocketOpts::new(g);
    o.interface = Some(iface().into());
    let s = unicast_socket(&o).unwrap();
    s.set_nonblocking(false).unwrap();
    s
}

/// A socket on the peer's host that listens on the group as a receiver would (to learn the
/// session). The calling thread moves to the peer's host.
pub fn sniffer(g: SocketAddr) -> UdpSocket {
    enter(PEER);
    let mut o = SocketOpts::new(g);
    o.interface = Some(iface().into());
    let s = group_socket(&o).unwrap();
    s.set_nonblocking(false).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
    s
}

/// What a live run produced.
pub struct Live {
    pub send: SendReport,
    pub recv: Vec<RecvReport>,
    pub dir: tempfile::TempDir,
    pub data: Vec<u8>,
}

/// The receivers of a live run, started before the sender.
pub struct Receivers {
    pub handles: Vec<thread::JoinHandle<RecvReport>>,
    pub dir: tempfile::TempDir,
}

pub fn out_dir(dir: &Path, r: usize) -> PathBuf {
    dir.join(format!("out{r}"))
}

/// Start receivers with fixed node ids `ids` (so the adversary can "steal" them); `tune`
/// adjusts each configuration.
pub fn start_receivers(g: SocketAddr, ids: &[u32], tune: impl Fn(&mut RecvConfig)) -> Receivers {
    let dir = tempfile::tempdir().unwrap();
    let handles = ids
        .iter()
        .enumerate()
        .map(|(r, &id)| {
            let mut cfg = RecvConfig::new(
                g,
                Output::Dir {
                    path: out_dir(dir.path(), r),
                    force: false,
                },
            );
            cfg.sock.interface = Some(iface().into());
            cfg.wait = Some(Duration::from_secs(30));
            cfg.node_id = Some(id);
            tune(&mut cfg);
            let host = receiver_host();
            thread::spawn(move || {
                enter(host);
                receiver::receive(cfg, &mut receiver::NoObserver).unwrap()
            })
        })
        .collect();
    Receivers { handles, dir }
}

/// The sender's configuration of a live run on `g` to `n` receivers.
pub fn send_config(g: SocketAddr, n: usize) -> SendConfig {
    let mut cfg = SendConfig::new(g);
    cfg.sock.interface = Some(iface().into());
    cfg.expect = Expect::Count(n);
    cfg.join_wait = Duration::from_secs(30);
    cfg.rate_bps = 200_000_000;
    cfg
}

/// Send the file of `size` bytes (seed `seed`) with `cfg` from the sender's host (the calling
/// thread moves there): the sender's report and the data.
pub fn send_file(cfg: SendConfig, size: usize, seed: u64) -> (SendReport, Vec<u8>) {
    enter(SENDER);
    let src_dir = tempfile::tempdir().unwrap();
    let src = src_dir.path().join("payload.bin");
    let data = payload(&src, size, seed);
    let send = sender::send(cfg, Source::Files(vec![src]), &mut NoObserver).unwrap();
    (send, data)
}

/// Send `size` bytes with `cfg` to the receivers `rx`, then collect everyone's report.
pub fn finish(rx: Receivers, cfg: SendConfig, size: usize, seed: u64) -> Live {
    let (send, data) = send_file(cfg, size, seed);
    collect(rx, send, data)
}

/// The run whose sender reported `send` for `data`: every receiver's report, once it ends.
pub fn collect(rx: Receivers, send: SendReport, data: Vec<u8>) -> Live {
    let recv = rx.handles.into_iter().map(|h| h.join().unwrap()).collect();
    Live {
        send,
        recv,
        dir: rx.dir,
        data,
    }
}

/// Every receiver holds the file byte-exact and nothing else, nothing was written beside the
/// output directories, and the sender's summary says what happened: every receiver completed,
/// at the address it really has.
pub fn check(live: &Live) {
    assert!(live.send.all_completed, "{:#?}", live.send);
    assert_eq!(
        live.send.receivers.len(),
        live.recv.len(),
        "{:#?}",
        live.send
    );
    for (r, rep) in live.recv.iter().enumerate() {
        assert!(rep.success, "{rep:#?}");
        assert_eq!(rep.outcome, "completed");
        let out = out_dir(live.dir.path(), r);
        let got = std::fs::read(out.join("payload.bin")).unwrap();
        assert!(got == live.data, "receiver {r}: the file differs");
        let names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(names, vec!["payload.bin".to_string()]);
        let s = live
            .send
            .receivers
            .iter()
            .find(|s| s.node == rep.node)
            .unwrap_or_else(|| panic!("receiver {:08x} missing: {:#?}", rep.node, live.send));
        assert_eq!(s.outcome, "completed");
        assert_eq!(s.bytes, live.data.len() as u64);
        // On namespace hosts each receiver has the bridge address of its own host.
        if on_namespaces() {
            assert!(
                s.addr.starts_with("10.93.") && !s.addr.starts_with("127."),
                "receiver {:08x} at {}",
                s.node,
                s.addr
            );
        }
    }
    let mut top: Vec<String> = std::fs::read_dir(live.dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    top.sort();
    let want: Vec<String> = (0..live.recv.len()).map(|r| format!("out{r}")).collect();
    assert_eq!(top, want, "something was written outside --dir");
}

/// A hostile thread that runs `f` every few milliseconds until stopped, and how often.
pub struct Adversary {
    pub stop: Arc<AtomicBool>,
    pub handle: thread::JoinHandle<u64>,
}

impl Adversary {
    pub fn spawn(mut f: impl FnMut() + Send + 'static) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let handle = thread::spawn(move || {
            let mut n = 0;
            while !s.load(Ordering::Relaxed) {
                f();
                n += 1;
                thread::sleep(Duration::from_millis(2));
            }
            n
        });
        Adversary { stop, handle }
    }

    pub fn stop(self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap()
    }
}

/// The session the real sender announces on `g`: (session, sender node, sender address).
pub fn learn_session(sniff: &UdpSocket) -> Option<(u32, u32, SocketAddr)> {
    let mut buf = vec![0u8; 65_536];
    let deadline = Instant::now() + Duration::from_secs(30);
    while Instant::now() < deadline {
        let Ok((n, from)) = sniff.recv_from(&mut buf) else {
            continue;
        };
        if let Some((h, Some("announce" | "running"))) = peek(&buf[..n]) {
            return Some((h.session, h.source, from));
        }
    }
    None
}

/// A JOIN from `node` in `session`.
pub fn join(session: u32, node: u32) -> Vec<u8> {
    session_packet(session, node, session::Message::Join { region: None }).unwrap()
}

/// A REPORT from `node` saying it completed with `bytes` bytes.
pub fn report_complete(session: u32, node: u32, bytes: u64) -> Vec<u8> {
    session_packet(
        session,
        node,
        session::Message::Report {
            state: session::ReportState::Complete,
            reason: 0,
            bytes,
            messages: 0,
            repairs: 0,
            duplicates: 0,
            rejected: 0,
        },
    )
    .unwrap()
}

/// Run a sender on `g` with `cfg` while an adversary, once it has seen the session's
/// ANNOUNCE, calls `attack(session, sender node, sender address)` every 2 ms from its own
/// socket.
pub fn under_attack(
    rx: Receivers,
    cfg: SendConfig,
    size: usize,
    seed: u64,
    attack: impl Fn(&UdpSocket, u32, SocketAddr) + Send + 'static,
) -> (Live, SocketAddr, u64) {
    let g = cfg.sock.group;
    let sniff = sniffer(g);
    let h = hostile_socket(g);
    let hostile_addr = h.local_addr().unwrap();
    let adversary = thread::spawn(move || {
        let (session, _, sender_addr) = learn_session(&sniff).expect("no session seen");
        // The real receivers join at the first ANNOUNCE; the adversary comes right after.
        thread::sleep(Duration::from_millis(150));
        Adversary::spawn(move || attack(&h, session, sender_addr))
    });
    let src_dir = tempfile::tempdir().unwrap();
    let src = src_dir.path().join("payload.bin");
    let data = payload(&src, size, seed);
    enter(SENDER);
    let send = sender::send(cfg, Source::Files(vec![src]), &mut NoObserver);
    let rounds = adversary.join().unwrap().stop();
    let send = send.unwrap();
    let live = collect(rx, send, data);
    (live, hostile_addr, rounds)
}

pub fn test_key() -> Keys {
    Keys::from_secret(b"hostile suite: a 32-byte secret!", false).unwrap()
}

/// How many times each attack of the adversary suites runs: `RMCAST_ADVERSARY_RUNS` (default
/// 1; `docs/security.md` records a run with 10).
pub fn runs() -> usize {
    std::env::var("RMCAST_ADVERSARY_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1)
        .max(1)
}

/// Run `attack` [`runs`] times (`attack(i)` for run `i`), saying on stderr how each went.
pub fn repeat(name: &str, mut attack: impl FnMut(usize)) {
    let n = runs();
    for i in 0..n {
        let t = Instant::now();
        attack(i);
        eprintln!(
            "{name}: run {} of {n} passed in {:.1} s",
            i + 1,
            t.elapsed().as_secs_f64()
        );
    }
}

/// What a datagram seen on the group is, read as a peer without the key reads it: its
/// header, and for a session packet its message's name (`announce`, `running` for a running
/// ANNOUNCE, `join`, `report`, `end`; an encrypted ANNOUNCE, whose phase is hidden, is
/// `announce`).
pub fn peek(d: &[u8]) -> Option<(Header, Option<&'static str>)> {
    // Plain, or sealed (the header is readable in front of the 24-byte trailer).
    [d.len(), d.len().saturating_sub(24)]
        .into_iter()
        .find_map(|plain| {
            let h = Header::parse(d.get(..plain)?).ok()?;
            if h.family != rmcast_wire::Family::Session {
                return Some((h, None));
            }
            let name = match Packet::decode(&d[..plain]).map(|p| p.message) {
                Ok(Message::Session(session::Message::Announce {
                    phase: session::Phase::Running,
                    ..
                })) => "running",
                _ => match h.kind {
                    1 => "announce",
                    2 => "join",
                    3 => "report",
                    4 => "end",
                    _ => return Some((h, None)),
                },
            };
            Some((h, Some(name)))
        })
}
