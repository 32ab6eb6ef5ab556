//! The shared Ethernet bus of seed 000 §3: 1-persistent CSMA/CD with collision detection,
//! a jam, and truncated binary exponential (or fixed) backoff, one MAC per member.
//!
//! Arbitration is a *late* kernel event: every request made at an instant is in before the
//! bus decides who transmits, so simultaneous requests collide whatever their order.

use super::record::Counters;
use super::Ev;
use crate::kernel::Kernel;
use crate::network::{Backoff, Network};
use crate::rng::{tag, SimRng};
use rmcast_proto::Time;
use std::collections::VecDeque;

/// A frame queued at a MAC.
pub(crate) struct Frame {
    pub(crate) pkt: u32,
    /// Tree target range; `t0 == NONE` means "every addressed member of the bus".
    pub(crate) t0: u32,
    pub(crate) t1: u32,
    pub(crate) bytes: usize,
}

struct Mac {
    queue: VecDeque<Frame>,
    req: Option<u64>,
    attempts: u32,
    rng: SimRng,
}

struct BusState {
    cfg: crate::network::BusConfig,
    bit_ns: u64,
    busy_until: u64,
    arb_at: Option<u64>,
    transmitting: Option<u32>,
    macs: Vec<Mac>,
}

/// Every bus of a network.
pub(crate) struct Buses {
    buses: Vec<BusState>,
    scratch_ready: Vec<u32>,
}

impl Buses {
    pub(crate) fn new(net: &Network, seed: u64) -> Buses {
        let buses = net
            .buses
            .iter()
            .enumerate()
            .map(|(b, bus)| BusState {
                cfg: bus.cfg.clone(),
                bit_ns: bus.cfg.bit_ns(),
                busy_until: 0,
                arb_at: None,
                transmitting: None,
                macs: bus
                    .members
                    .iter()
                    .map(|&m| Mac {
                        queue: VecDeque::new(),
                        req: None,
                        attempts: 0,
                        rng: SimRng::new(seed, tag::BACKOFF, u64::from(m), b as u64),
                    })
                    .collect(),
            })
            .collect();
        Buses {
            buses,
            scratch_ready: Vec::new(),
        }
    }

    /// On-the-wire size of a `payload`-byte packet on bus `b`.
    pub(crate) fn frame_bytes(&self, b: u32, payload: usize) -> usize {
        self.buses[b as usize].cfg.frame_bytes(payload)
    }

    /// Queue `frame` at the MAC at `pos` of bus `b`; it asks for the medium at once if
    /// it was idle.
    pub(crate) fn enqueue(
        &mut self,
        b: u32,
        pos: u32,
        frame: Frame,
        kernel: &mut Kernel<Ev>,
        counters: &mut Counters,
    ) {
        let bus = &mut self.buses[b as usize];
        let mac = &mut bus.macs[pos as usize];
        mac.queue.push_back(frame);
        let first = mac.queue.len() == 1;
        let idle_mac = bus.transmitting != Some(pos);
        if first && idle_mac {
            self.mac_ready(b, pos, kernel, counters);
        }
    }

    fn schedule_arb(&mut self, b: u32, t: u64, kernel: &mut Kernel<Ev>) {
        let bus = &mut self.buses[b as usize];
        if bus.arb_at.is_none_or(|a| t < a) {
            bus.arb_at = Some(t);
            kernel.schedule_late(Time::from_nanos(t), Ev::BusArb(b));
        }
    }

    /// The MAC at `pos` has a frame at the head of its queue and asks for the medium now.
    fn mac_ready(&mut self, b: u32, pos: u32, kernel: &mut Kernel<Ev>, counters: &mut Counters) {
        let now = kernel.now().as_nanos();
        let bus = &mut self.buses[b as usize];
        let at = if now < bus.busy_until {
            // 1-persistent: wait for the medium to go idle, then transmit at once.
            counters.bus_deferrals += 1;
            bus.busy_until
        } else {
            now
        };
        bus.macs[pos as usize].req = Some(at);
        self.schedule_arb(b, at, kernel);
    }

    /// Arbitration on bus `b` at `now`: one ready MAC transmits, two or more collide.
    /// Returns the packets of frames given up after too many collisions (the caller counts
    /// them lost and releases them).
    pub(crate) fn arbitrate(
        &mut self,
        b: u32,
        now: Time,
        kernel: &mut Kernel<Ev>,
        counters: &mut Counters,
    ) -> Vec<u32> {
        let t = now.as_nanos();
        let mut discarded = Vec::new();
        if self.buses[b as usize].arb_at != Some(t) {
            return discarded; // superseded by an earlier arbitration
        }
        // Arbitration is a late event: every request made at this instant is in already.
        self.buses[b as usize].arb_at = None;
        let bus = &mut self.buses[b as usize];
        if t < bus.busy_until {
            let bu = bus.busy_until;
            self.schedule_arb(b, bu, kernel);
            return discarded;
        }
        let mut ready = std::mem::take(&mut self.scratch_ready);
        ready.clear();
        ready.extend(
            bus.macs
                .iter()
                .enumerate()
                .filter(|(_, m)| m.req.is_some_and(|r| r <= t))
                .map(|(i, _)| i as u32),
        );
        let bit = bus.bit_ns;
        if ready.len() >= 2 && !bus.cfg.collisions {
            // Ideal arbitration: one of the ready stations, drawn from the first one's
            // stream, goes; the others defer to its end below.
            let k = bus.macs[ready[0] as usize].rng.below(ready.len() as u64) as usize;
            ready.swap(0, k);
            ready.truncate(1);
        }
        if ready.len() == 1 {
            let p = ready[0];
            let mac = &mut bus.macs[p as usize];
            mac.req = None;
            let bytes = mac.queue.front().map_or(0, |f| f.bytes) as u64;
            bus.busy_until = t + 8 * bytes * bit;
            bus.transmitting = Some(p);
            counters.bus_frames += 1;
            let end = bus.busy_until;
            self.defer_others(b, t, &ready, counters);
            kernel.schedule(Time::from_nanos(end), Ev::BusEnd(b));
            self.rearm(b, end, kernel);
        } else if ready.len() >= 2 {
            counters.bus_collisions += 1;
            counters.bus_collided_frames += ready.len() as u64;
            bus.busy_until = t + bus.cfg.jam_bits * bit;
            let end = bus.busy_until;
            let (slot, max_attempts, backoff) =
                (bus.cfg.slot_bits, bus.cfg.max_attempts, bus.cfg.backoff);
            for &p in &ready {
                let mac = &mut bus.macs[p as usize];
                mac.attempts += 1;
                if mac.attempts >= max_attempts {
                    // The 16th attempt collided: give the frame up.
                    mac.attempts = 0;
                    if let Some(f) = mac.queue.pop_front() {
                        discarded.push(f.pkt);
                    }
                    // The next frame, if any, is ready now, i.e. deferred to the jam's end.
                    mac.req = if mac.queue.is_empty() {
                        None
                    } else {
                        Some(end)
                    };
                    if mac.req.is_some() {
                        counters.bus_deferrals += 1;
                    }
                } else {
                    let i = mac.attempts.min(10);
                    let k = match backoff {
                        Backoff::Exponential { inclusive: true } => mac.rng.below((1u64 << i) + 1),
                        Backoff::Exponential { inclusive: false } => mac.rng.below(1u64 << i),
                        Backoff::Fixed { slots } => slots,
                    };
                    counters.bus_backoffs += 1;
                    mac.req = Some(end + k * slot * bit);
                }
            }
            self.defer_others(b, t, &ready, counters);
            self.rearm(b, end, kernel);
        } else if let Some(m) = bus.macs.iter().filter_map(|m| m.req).min() {
            self.schedule_arb(b, m, kernel);
        }
        self.scratch_ready = ready;
        discarded
    }

    /// The next arbitration: at the earliest pending request, not before `end`.
    fn rearm(&mut self, b: u32, end: u64, kernel: &mut Kernel<Ev>) {
        if let Some(m) = self.buses[b as usize]
            .macs
            .iter()
            .filter_map(|m| m.req)
            .min()
        {
            self.schedule_arb(b, m.max(end), kernel);
        }
    }

    /// The medium just became busy until `busy_until`: requests falling inside that period
    /// are adjusted to its end (seed 000 §3.3), and each such adjustment is a deferral.
    fn defer_others(&mut self, b: u32, t: u64, except: &[u32], counters: &mut Counters) {
        let bus = &mut self.buses[b as usize];
        let bu = bus.busy_until;
        for (i, m) in bus.macs.iter_mut().enumerate() {
            if except.contains(&(i as u32)) {
                continue;
            }
            if let Some(r) = m.req {
                if r > t && r < bu {
                    m.req = Some(bu);
                    counters.bus_deferrals += 1;
                }
            }
        }
    }

    /// The transmission on bus `b` ended: the frame sent and the position of its sender
    /// (whose next frame, if any, asks for the medium).
    pub(crate) fn end(
        &mut self,
        b: u32,
        kernel: &mut Kernel<Ev>,
        counters: &mut Counters,
    ) -> Option<(Frame, u32)> {
        let bus = &mut self.buses[b as usize];
        let p = bus.transmitting.take()?;
        let mac = &mut bus.macs[p as usize];
        mac.attempts = 0;
        let frame = mac.queue.pop_front()?;
        let more = !mac.queue.is_empty();
        if more {
            self.mac_ready(b, p, kernel, counters);
        }
        Some((frame, p))
    }
}
