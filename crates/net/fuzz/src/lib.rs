//! What the `rmcast-net` fuzz targets check, written once.
//!
//! * [`sealed`]: the per-packet authentication and encryption envelope opens or refuses any
//!   bytes without panicking; what one endpoint seals another opens to the same bytes, once;
//!   a flipped bit is refused.
//! * [`frame`]: the application framing decodes or refuses any message; what it accepts
//!   encodes back to the same bytes; a name that passes `check_name` is one plain path
//!   component (it cannot leave the output directory).
//! * [`receiver`]: the path a datagram takes in a receiver after `recvmmsg` — authentication,
//!   the header, the session layer's checks, the agent's `handle_packet`, then one turn of the
//!   event loop (timers, feedback, deliveries to the writer, REPORT) — with a live session of
//!   one of the protocols the driver runs (`agents::PROTOCOLS`), set up by the ANNOUNCE the real
//!   sender side builds. No datagram may make it fail with an error, panic, or move it to another
//!   session.

use rmcast_net::agents::PROTOCOLS;
use rmcast_net::frame::Frame;
use rmcast_net::outdir::check_name;
use rmcast_net::receiver::{Fuzzing, Output, RecvConfig};
use rmcast_net::secure::{Keys, Sealer, TRAILER_LEN};
use rmcast_wire::{Family, HEADER_LEN, KNOWN_FLAGS, MAGIC, MAX_PAYLOAD, VERSION};
use std::cell::RefCell;
use std::net::SocketAddr;
use std::path::{Component, Path};
use std::sync::OnceLock;
use std::time::Duration;

/// A fixed key (32 bytes), for the keyed sessions.
const KEY: &[u8; 32] = b"rmcast fuzzing key; not a secret";

fn keys(encrypt: bool) -> Keys {
    Keys::from_secret(KEY, encrypt).expect("a 32-byte secret")
}

/// Input byte 0: bit 0 selects encryption, the rest picks a bit to flip; the rest is a
/// datagram.
pub fn sealed(data: &[u8]) {
    let Some((&mode, plain)) = data.split_first() else {
        return;
    };
    let k = keys(mode & 1 != 0);
    // Arbitrary bytes as a sealed datagram: refused, or opened to a prefix.
    let mut rx = Sealer::new(k.clone(), 0);
    let mut buf = plain.to_vec();
    if let Ok(n) = rx.open(&mut buf) {
        assert_eq!(n + TRAILER_LEN, plain.len());
    }
    if plain.len() < HEADER_LEN {
        return;
    }
    // Round trip: sealed by one endpoint, opened by another to the same bytes, once.
    let mut tx = Sealer::new(k.clone(), 1);
    let mut s = Vec::new();
    tx.seal(plain, &mut s);
    assert_eq!(s.len(), plain.len() + TRAILER_LEN);
    let mut rx = Sealer::new(k.clone(), 0);
    let mut o = s.clone();
    let n = rx.open(&mut o).expect("a sealed datagram opens");
    assert_eq!(o.get(..n), Some(plain));
    assert!(rx.open(&mut s.clone()).is_err(), "a replay was accepted");
    // One flipped bit anywhere is refused.
    let i = usize::from(mode >> 1).wrapping_mul(131) % s.len();
    if let Some(b) = s.get_mut(i) {
        *b ^= 1 << (mode % 8);
    }
    let mut rx = Sealer::new(k, 0);
    assert!(
        rx.open(&mut s).is_err(),
        "a flipped bit at {i} was accepted"
    );
}

/// An application message.
pub fn frame(data: &[u8]) {
    let Ok(f) = Frame::decode(data) else {
        return;
    };
    let again = f.encode();
    assert_eq!(&again[..], data, "encode(decode(x)) != x");
    assert_eq!(Frame::decode(&again).as_ref(), Ok(&f));
    if let Frame::File { name, .. } | Frame::Stream { name } = f {
        if check_name(name).is_ok() {
            let parts: Vec<Component<'_>> = Path::new(name).components().collect();
            assert!(
                matches!(parts[..], [Component::Normal(_)]),
                "{name:?} passed check_name but is not one plain component"
            );
        }
    }
}

const SESSION: u32 = 0x5e55_1017;
const SENDER: u32 = 0x42;
const ME: u32 = 0x1111;
const PEER: u32 = 0x2222;

fn addr(s: &str) -> SocketAddr {
    s.parse().expect("a socket address")
}

/// The addresses a datagram can come from: the sender's, the sender's host on another port,
/// a stranger, the other receiver (a `dsp` peer).
fn from(i: u8) -> SocketAddr {
    addr(match i & 3 {
        0 => "127.0.0.1:47301",
        1 => "127.0.0.1:47399",
        2 => "127.0.0.9:47301",
        _ => "127.0.0.3:47303",
    })
}

fn group() -> SocketAddr {
    addr("239.255.90.1:47300")
}

/// The running ANNOUNCE of the live session of protocol `p` in security mode `sec` (0 no
/// key, 1 key, 2 key and encryption): built by the protocol's real sender side for two
/// joined receivers, this one and a peer ([`Fuzzing::session`]).
fn announce(p: usize, sec: usize) -> &'static [u8] {
    static CACHE: [[OnceLock<Vec<u8>>; 3]; PROTOCOLS.len()] =
        [const { [const { OnceLock::new() }; 3] }; PROTOCOLS.len()];
    CACHE[p][sec].get_or_init(|| {
        let joined = [(ME, None, addr("127.0.0.2:47302")), (PEER, None, from(3))];
        let keys = (sec > 0).then(|| keys(sec == 2));
        Fuzzing::session(
            &PROTOCOLS[p],
            SESSION,
            SENDER,
            group(),
            &joined,
            keys.as_ref(),
        )
        .expect("the sender starts")
        .1
    })
}

/// A datagram of the live session: `body` byte 0 picks the family (bit 7: session, else the
/// protocol's) and kind (bits 0–6), byte 1 the flags; the header's session, source (the
/// sender, or the peer for datagrams from the peer's address) and length are right.
fn synthesize(family: Family, peer: bool, body: &[u8]) -> Vec<u8> {
    let (kind, flags, rest) = match body {
        [k, f, rest @ ..] => (*k, *f, rest),
        [k] => (*k, 0, &[][..]),
        [] => (0, 0, &[][..]),
    };
    let family = if kind & 0x80 != 0 {
        Family::Session
    } else {
        family
    };
    let rest = rest.get(..MAX_PAYLOAD).unwrap_or(rest);
    let mut d = Vec::with_capacity(HEADER_LEN + rest.len());
    d.extend_from_slice(&MAGIC.to_be_bytes());
    d.push(VERSION);
    d.push(family as u8);
    d.push(kind & 0x7f);
    d.push(flags & KNOWN_FLAGS);
    d.extend_from_slice(&[0, 0]);
    d.extend_from_slice(&SESSION.to_be_bytes());
    d.extend_from_slice(&if peer { PEER } else { SENDER }.to_be_bytes());
    d.extend_from_slice(&(rest.len() as u32).to_be_bytes());
    d.extend_from_slice(rest);
    d
}

/// Input byte 0: the protocol (`PROTOCOLS[b % 9]`) and security mode (`b / 9 % 3`: no key,
/// key, key and encryption). Then records `ctl | len (u16, big-endian) | bytes` until the
/// input ends. `ctl` bits 0–1: where it comes from ([`from`]); bit 2: the bytes are a body
/// and the harness writes the header ([`synthesize`]), else they are the whole datagram;
/// bit 3: sealed with the session's key (keyed modes); bits 4–7 = k: it arrives 4^k µs after
/// the previous one (1 µs to 18 minutes, so timers and the silent-sender limit fire).
pub fn receiver(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let p = usize::from(mode) % PROTOCOLS.len();
    let sec = usize::from(mode) / PROTOCOLS.len() % 3;
    let family = PROTOCOLS[p].family();
    let keys = (sec > 0).then(|| keys(sec == 2));
    let mut sealer = keys.clone().map(|k| Sealer::new(k, 0));
    with_receiver(sec, keys, |r| session(r, p, sec, family, &mut sealer, rest));
}

/// The datagrams of one input on the receiver `r` (no session yet): the live session's
/// ANNOUNCE, then the records.
fn session(
    r: &mut Fuzzing,
    p: usize,
    sec: usize,
    family: Family,
    sealer: &mut Option<Sealer>,
    mut rest: &[u8],
) {
    let seal = |sealer: &mut Option<Sealer>, d: Vec<u8>| match sealer.as_mut() {
        Some(s) => {
            let mut o = Vec::with_capacity(d.len() + TRAILER_LEN);
            s.seal(&d, &mut o);
            o
        }
        None => d,
    };
    let mut a = seal(sealer, announce(p, sec).to_vec());
    let mut at = Duration::ZERO;
    r.datagram(at, from(0), &mut a)
        .expect("the live session's ANNOUNCE is handled");
    assert!(!r.ended(), "the receiver did not join the live session");
    while let Some((&ctl, tail)) = rest.split_first() {
        let (len, tail) = match tail {
            [a, b, tail @ ..] => (usize::from(u16::from_be_bytes([*a, *b])), tail),
            _ => (tail.len(), &[][..]),
        };
        let (bytes, tail) = tail.split_at(len.min(tail.len()));
        rest = tail;
        at += Duration::from_micros(1u64 << (2 * u32::from(ctl >> 4)));
        let d = if ctl & 4 != 0 {
            synthesize(family, ctl & 3 == 3, bytes)
        } else {
            bytes.to_vec()
        };
        let mut d = if ctl & 8 != 0 { seal(sealer, d) } else { d };
        if let Err(e) = r.datagram(at, from(ctl), &mut d) {
            panic!("a datagram made the receiver fail: {e}");
        }
        if r.ended() {
            break;
        }
    }
    let report = r.reset();
    assert_eq!(
        report.session,
        Some(SESSION),
        "the receiver left its session"
    );
    // What it wrote is inside the output directory, and nothing else is left there (an
    // unfinished file is removed); it goes, so the next input starts from an empty directory.
    for f in &report.files {
        if let Some(path) = &f.path {
            let path = Path::new(path);
            assert_eq!(
                path.parent(),
                Some(out_dir()),
                "{path:?} written outside --dir"
            );
            std::fs::remove_file(path).expect("remove a received file");
        }
    }
    let left: Vec<_> = std::fs::read_dir(out_dir())
        .expect("read the output directory")
        .collect();
    assert!(left.is_empty(), "left in the output directory: {left:?}");
}

/// Run `f` on this process's receiver for security mode `sec` (opened on first use as
/// `rmcast recv --interface lo` opens one, then reset after each input by the input itself).
/// The receivers of the three modes differ only in their keys; the protocol comes from the
/// ANNOUNCE, so one receiver serves all nine.
fn with_receiver(sec: usize, keys: Option<Keys>, f: impl FnOnce(&mut Fuzzing)) {
    thread_local! {
        static OPEN: RefCell<[Option<Fuzzing>; 3]> = const { RefCell::new([None, None, None]) };
    }
    OPEN.with_borrow_mut(|open| {
        let r = open[sec].get_or_insert_with(|| {
            let mut cfg = RecvConfig::new(
                group(),
                Output::Dir {
                    path: out_dir().to_path_buf(),
                    force: false,
                },
            );
            cfg.sock.interface = Some("lo".into());
            cfg.node_id = Some(ME);
            cfg.keys = keys;
            held_udp_gro();
            Fuzzing::open(cfg).expect("the receiver opens on loopback")
        });
        assert!(!r.ended(), "a reset receiver starts a new receive");
        f(r);
    });
}

/// One UDP socket with `UDP_GRO` on, open for the whole process and never read. Each
/// receiver's sockets turn `UDP_GRO` on ([`rmcast_net::socket::coalesce_reads`]), which
/// enables a kernel static key while any socket has it; without this one the key went from 0
/// to 1 and back with every input, and each flip patches the kernel's code on every CPU (a
/// fifth of a short input's time, `perf record` of the target). Holding it changes nothing a
/// receiver does, so each input stays a function of its bytes alone.
fn held_udp_gro() {
    static HELD: OnceLock<Option<std::net::UdpSocket>> = OnceLock::new();
    HELD.get_or_init(|| {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").ok()?;
        rmcast_net::socket::coalesce_reads(&s);
        Some(s)
    });
}

/// The output directory of this process's receivers: in memory (`/dev/shm`) where there is
/// one, as the directory probe of every `Receiving::open` creates and removes a file (an
/// ext4 inode each time), else under the temporary directory.
fn out_dir() -> &'static Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let shm = Path::new("/dev/shm");
        let base = if shm.is_dir() {
            shm.to_path_buf()
        } else {
            std::env::temp_dir()
        };
        let d = base.join(format!("rmcast-fuzz-receiver-{}", std::process::id()));
        std::fs::create_dir_all(&d).expect("create the output directory");
        d
    })
}
