//! An emulator's thread: read frames, time them through their channel, write them out when
//! they arrive.

use super::model::{frame_header, wire_bytes, Carried};
use super::sock::{self, PacketSocket, VNET_HDR};
use super::{Counters, EmuSpec, Site};
use rmcast_net::NetError;
use rmcast_sim::loss::LossState;
use rmcast_wire::PacketClass;
use std::cmp::Ordering as Cmp;
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::Sender;
use std::time::Instant;

/// The longest wait between looks at the stop flag, ns.
const IDLE_NS: u64 = 20_000_000;
/// Frames read from one port before the others and the due deliveries get a turn.
const BURST: usize = 64;
/// The emulator threads' `SCHED_FIFO` priority (low among real-time ones: the kernel's own
/// threads keep theirs).
const REALTIME_PRIORITY: i32 = 10;
/// How long before a frame's due time the thread stops sleeping and polls instead (its
/// wake-ups from a sleep come tens of microseconds late on a busy machine).
const SPIN_NS: u64 = 30_000;
/// The largest frame read: a 64 KiB GSO frame and its header.
const BUF: usize = 65_536 + VNET_HDR;

/// A frame on its way: written out when `at` comes.
struct Pending {
    at: u64,
    seq: u64,
    from: usize,
    channel: usize,
    class: Option<PacketClass>,
    carried: Carried,
    frame: Vec<u8>,
}

impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<Cmp> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    // Earliest first in a max-heap; the same time in the order the frames came.
    fn cmp(&self, o: &Self) -> Cmp {
        (o.at, o.seq).cmp(&(self.at, self.seq))
    }
}

fn enter(ns: &str) -> Result<(), NetError> {
    let path = std::path::Path::new("/run/netns").join(ns);
    let f = std::fs::File::open(&path)
        .map_err(|e| NetError::io(format!("open {}", path.display()), e))?;
    #[cfg(target_os = "linux")]
    {
        nix::sched::setns(&f, nix::sched::CloneFlags::CLONE_NEWNET)
            .map_err(|e| NetError::io(format!("enter {ns}"), std::io::Error::from(e)))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = f;
        Err(NetError::setup("network namespaces are Linux only"))
    }
}

/// `t0` on the monotonic clock, ns (`Instant` is `CLOCK_MONOTONIC` on Linux).
fn monotonic_ns(t0: Instant) -> i128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    #[allow(unsafe_code)]
    // SAFETY: `ts` is valid for writes.
    unsafe {
        libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts)
    };
    let now = i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec);
    now - t0.elapsed().as_nanos() as i128
}

/// Whether a node-side rule list drops a frame of `class` on interface `iface`.
fn site_drops(site: Option<&Site>, class: Option<PacketClass>, iface: u32) -> bool {
    let Some(site) = site else { return false };
    let mut rules = site.lock().unwrap_or_else(|e| e.into_inner());
    LossState::first_drop(&mut rules, class, iface).is_some()
}

fn add(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

pub(super) fn run(
    mut spec: EmuSpec,
    stop: &AtomicBool,
    c: &Counters,
    ready: Sender<Result<(), NetError>>,
) -> Result<(), NetError> {
    let opened = spec.netns.as_deref().map_or(Ok(()), enter).and_then(|()| {
        spec.ports
            .iter()
            .map(|p| PacketSocket::open(&p.ifname))
            .collect::<Result<Vec<_>, _>>()
    });
    let socks = match opened {
        Ok(s) => {
            let _ = ready.send(Ok(()));
            s
        }
        Err(e) => {
            let _ = ready.send(Err(e));
            return Ok(());
        }
    };
    sock::tight_timers();
    c.realtime.store(
        u64::from(sock::realtime(REALTIME_PRIORITY)),
        Ordering::Relaxed,
    );
    let fds: Vec<_> = socks.iter().map(PacketSocket::raw).collect();
    let t0 = Instant::now();
    let now = || t0.elapsed().as_nanos() as u64;
    // A socket timestamp (realtime) on the emulator's clock (ns since `t0`), when it says one.
    let offset = sock::realtime_offset_ns();
    let base = monotonic_ns(t0);
    let stamped = |stamp: u64, read: u64| -> u64 {
        if stamp == 0 {
            return read;
        }
        let mono = i128::from(stamp) - offset - base;
        u64::try_from(mono).map_or(read, |m| m.min(read))
    };
    let mut heap: BinaryHeap<Pending> = BinaryHeap::new();
    let (mut seq, mut buf, mut readable) = (0u64, vec![0u8; BUF], Vec::new());
    let mut last_cpu = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        let t = now();
        while heap.peek().is_some_and(|p| p.at <= t) {
            let Some(p) = heap.pop() else { break };
            add(&c.late_ns, t - p.at);
            deliver(&spec, &socks, &p, c);
        }
        // Sleep until SPIN_NS before the next due frame, then poll without sleeping.
        let timeout = heap
            .peek()
            .map_or(IDLE_NS, |p| {
                p.at.saturating_sub(now()).saturating_sub(SPIN_NS)
            })
            .min(IDLE_NS);
        sock::wait(&fds, timeout, &mut readable)
            .map_err(|e| NetError::io(format!("emulator {}: ppoll", spec.name), e))?;
        for &i in &readable {
            for _ in 0..BURST {
                let Some((n, stamp)) = socks[i]
                    .recv(&mut buf)
                    .map_err(|e| NetError::io(format!("emulator {}: read", spec.name), e))?
                else {
                    break;
                };
                if n <= VNET_HDR {
                    continue;
                }
                let read = now();
                let at = stamped(stamp, read);
                add(&c.read_lag_ns, read - at);
                if let Some(p) = arrive(&mut spec, i, &buf[..n], at, seq, c) {
                    seq += 1;
                    heap.push(p);
                }
            }
        }
        if last_cpu.elapsed().as_millis() >= 100 {
            c.cpu_ns.store(sock::thread_cpu_ns(), Ordering::Relaxed);
            last_cpu = Instant::now();
        }
    }
    c.cpu_ns.store(sock::thread_cpu_ns(), Ordering::Relaxed);
    Ok(())
}

/// A frame read on port `from` at `now`: through the sender's transmit rules, the medium and
/// the channel's rules; what is left to deliver, if anything.
fn arrive(
    spec: &mut EmuSpec,
    from: usize,
    frame: &[u8],
    now: u64,
    seq: u64,
    c: &Counters,
) -> Option<Pending> {
    let port = spec.ports.get(from)?;
    let eth = frame.get(VNET_HDR..)?;
    let wire = wire_bytes(eth.len() as u64);
    add(&c.frames_in, 1);
    add(&c.wire_bytes_in, wire);
    let header = frame_header(eth);
    let (class, carried) = (header.map(|h| h.class()), Carried::of(header));
    if site_drops(port.tx.as_ref(), class, port.iface) {
        c.loss_drop(carried);
        return None;
    }
    let channel = port.channel;
    let ch = spec.channels.get_mut(channel)?;
    let Some(at) = ch.medium.offer(now, wire) else {
        add(&c.queue_drops, 1);
        return None;
    };
    if LossState::first_drop(&mut ch.loss, class, 0).is_some() {
        c.loss_drop(carried);
        return None;
    }
    Some(Pending {
        at,
        seq,
        from,
        channel,
        class,
        carried,
        frame: frame.to_vec(),
    })
}

/// Write `p` out of every other port of its channel, each receiver's rules asked first.
fn deliver(spec: &EmuSpec, socks: &[PacketSocket], p: &Pending, c: &Counters) {
    for (i, port) in spec.ports.iter().enumerate() {
        if i == p.from || !is_output(port.channel, p.channel, spec.channels.len()) {
            continue;
        }
        if site_drops(port.rx.as_ref(), p.class, port.iface) {
            c.loss_drop(p.carried);
            continue;
        }
        if socks[i].send(&p.frame) {
            add(&c.delivered, 1);
        } else {
            add(&c.send_failures, 1);
        }
    }
}

/// Whether a port whose frames enter `own` is an output of `channel` (one of `channels`): on a
/// link, the port of the other direction; on a bus (one channel), every member.
fn is_output(own: usize, channel: usize, channels: usize) -> bool {
    channels == 1 || own != channel
}
