//! The link emulator: each emulated link (or bus) is a thread of the lab's process forwarding
//! Ethernet frames between the link's interfaces through AF_PACKET sockets ([`sock`]). The
//! interfaces are the switch-side ends of the hosts' and routers' veth pairs, taken off the
//! segment's bridge, so every frame between two nodes crosses the emulator.
//!
//! A frame read on a port enters its [`Channel`]: the sender's transmit-side loss rules, then
//! the channel's [`Medium`] (drop-tail queue, serialisation at the rate, propagation delay
//! plus jitter: the simulator's link rule), then the channel's own loss rules (a link
//! direction's), then at its arrival time it is written out of every other port of the
//! channel, each receiver's receive-side loss rules asked first. A point-to-point link is two
//! channels (one per direction, one input port each); a bus is one channel whose input is
//! every member, so one member's frame occupies the medium for all of them (a single
//! serialiser), and is delivered to every other member.
//!
//! The loss rules are `rmcast_sim`'s [`LossState`]s, seeded as the simulator seeds them.

// The emulator indexes its own fixed port lists and the bytes the kernel said it read; none
// of its indices comes from a frame's contents (frames are parsed with `get`).
#![allow(clippy::indexing_slicing)]

pub mod bed;
pub mod chain;
pub mod measure;
pub mod model;
pub mod plan;
mod run;
pub mod sock;

pub use model::{wire_bytes, Carried, Medium, MediumSpec, WIRE_OVERHEAD};
use rmcast_net::NetError;
use rmcast_sim::loss::LossState;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// A node's loss rules at one side (transmit or receive), shared by the emulators of all its
/// links, as the simulator keeps one state per rule and node.
pub type Site = Arc<Mutex<Vec<LossState>>>;

/// One interface of an emulated link.
#[derive(Debug, Clone)]
pub struct Port {
    /// The interface (in the emulator's namespace).
    pub ifname: String,
    /// Which channel a frame read here enters.
    pub channel: usize,
    /// The node's interface number on this link (a rule's `iface`).
    pub iface: u32,
    /// The node's transmit-side rules (asked for frames read here), if any.
    pub tx: Option<Site>,
    /// The node's receive-side rules (asked for frames written here), if any.
    pub rx: Option<Site>,
}

/// A medium and the rules of frames crossing it (a link direction's).
#[derive(Debug, Clone)]
pub struct Channel {
    /// Its timing.
    pub medium: Medium,
    /// Its own loss rules, asked after the frame has taken its time on the medium.
    pub loss: Vec<LossState>,
}

/// One emulator: ports in a namespace and the channels between them.
#[derive(Debug, Clone)]
pub struct EmuSpec {
    /// For messages: which link or bus.
    pub name: String,
    /// The network namespace of its ports (`None`: the caller's).
    pub netns: Option<String>,
    /// Its interfaces.
    pub ports: Vec<Port>,
    /// Its channels. A frame read on a port enters the port's channel and is written out of
    /// every port of another channel (a link: two ports, one channel each, the direction
    /// leaving it) or, with a single channel (a bus), out of every other port.
    pub channels: Vec<Channel>,
}

/// What an emulator has done so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Frames read from its ports.
    pub frames_in: u64,
    /// Their wire bytes ([`wire_bytes`]).
    pub wire_bytes_in: u64,
    /// Copies written out of its ports.
    pub delivered: u64,
    /// Frames dropped because the queue was full.
    pub queue_drops: u64,
    /// Frames (or, at a receiver, copies) dropped by a loss rule.
    pub loss_drops: u64,
    /// Copies the kernel refused to take (the receiving interface's backlog full).
    pub send_failures: u64,
    /// CPU time of its thread, ns.
    pub cpu_ns: u64,
    /// Whether its thread runs real-time (`SCHED_FIFO`; see [`sock::realtime`]).
    pub realtime: bool,
    /// How late frames were written out, summed over frames, ns (the thread's wake-ups
    /// after the frames' due times).
    pub late_ns: u64,
    /// How long frames waited in the sockets before the thread read them, summed, ns (their
    /// time on the emulator counts from the kernel's timestamp, not from the read).
    pub read_lag_ns: u64,
}

#[derive(Debug, Default)]
struct Counters {
    frames_in: AtomicU64,
    wire_bytes_in: AtomicU64,
    delivered: AtomicU64,
    queue_drops: AtomicU64,
    loss_drops: AtomicU64,
    send_failures: AtomicU64,
    cpu_ns: AtomicU64,
    realtime: AtomicU64,
    late_ns: AtomicU64,
    read_lag_ns: AtomicU64,
    /// When each loss-rule drop happened, µs since the Unix epoch, and the frame's rmcast
    /// class (the testbed counts the drops inside a transfer's window, by class:
    /// [`Emulator::loss_drop_times`]).
    drop_times: Mutex<Vec<(u64, Carried)>>,
}

impl Counters {
    /// A frame (or copy) that carried `what` dropped by a loss rule, now.
    fn loss_drop(&self, what: Carried) {
        self.loss_drops.fetch_add(1, Ordering::Relaxed);
        let us = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX));
        self.drop_times
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push((us, what));
    }

    fn snapshot(&self) -> Stats {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        Stats {
            frames_in: g(&self.frames_in),
            wire_bytes_in: g(&self.wire_bytes_in),
            delivered: g(&self.delivered),
            queue_drops: g(&self.queue_drops),
            loss_drops: g(&self.loss_drops),
            send_failures: g(&self.send_failures),
            cpu_ns: g(&self.cpu_ns),
            realtime: g(&self.realtime) != 0,
            late_ns: g(&self.late_ns),
            read_lag_ns: g(&self.read_lag_ns),
        }
    }
}

/// A running emulator (a thread); dropping it stops it.
#[derive(Debug)]
pub struct Emulator {
    name: String,
    stop: Arc<AtomicBool>,
    counters: Arc<Counters>,
    thread: Option<JoinHandle<Result<(), NetError>>>,
}

impl Emulator {
    /// Start forwarding: the thread enters the namespace, opens a packet socket per port and
    /// returns once they are open (or with why they could not be).
    pub fn start(spec: EmuSpec) -> Result<Emulator, NetError> {
        if spec.ports.iter().any(|p| p.channel >= spec.channels.len()) {
            return Err(NetError::setup(format!(
                "emulator {}: a port names a channel it does not have",
                spec.name
            )));
        }
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(Counters::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let name = spec.name.clone();
        let (s, c) = (stop.clone(), counters.clone());
        let thread = std::thread::Builder::new()
            .name(format!("emu {}", spec.name))
            .spawn(move || run::run(spec, &s, &c, tx))
            .map_err(|e| NetError::io("start an emulator thread", e))?;
        let mut emu = Emulator {
            name,
            stop,
            counters,
            thread: Some(thread),
        };
        match rx.recv() {
            Ok(Ok(())) => Ok(emu),
            Ok(Err(e)) => {
                let _ = emu.halt();
                Err(e)
            }
            Err(_) => Err(emu.halt().err().unwrap_or_else(|| {
                NetError::setup(format!("emulator {} stopped at its start", emu.name))
            })),
        }
    }

    /// Its counters now.
    pub fn stats(&self) -> Stats {
        self.counters.snapshot()
    }

    /// When each of its loss-rule drops so far happened, µs since the Unix epoch (the clock
    /// `rmcast send` and `rmcast recv` stamp their reports with), in order, with what the
    /// frame carried.
    pub fn loss_drop_times(&self) -> Vec<(u64, Carried)> {
        self.counters
            .drop_times
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// Its name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Stop it; its counters at the end (or the error that stopped it earlier).
    pub fn stop(mut self) -> Result<Stats, NetError> {
        self.halt()?;
        Ok(self.counters.snapshot())
    }

    fn halt(&mut self) -> Result<(), NetError> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            Some(Err(_)) => Err(NetError::setup(format!("emulator {} panicked", self.name))),
            None => Ok(()),
        }
    }
}

impl Drop for Emulator {
    fn drop(&mut self) {
        let _ = self.halt();
    }
}
