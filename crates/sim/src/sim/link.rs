//! Point-to-point links: per direction, a transmitter (bandwidth, an optional finite
//! queue), propagation delay, optional jitter and reordering, loss rules, and the FIFO of
//! copies in flight.

use super::record::{Recorder, CAUSE_QUEUE};
use crate::loss::LossState;
use crate::network::{LinkConfig, Network};
use crate::rng::{tag, SimRng};
use rmcast_wire::PacketClass;
use std::collections::VecDeque;

#[derive(Default)]
struct DirState {
    busy_until: u64,
    last_arrival: u64,
    waiting: VecDeque<u64>,
    /// Copies in flight on this direction, in arrival order (arrivals never reorder, so
    /// only the head needs a kernel event: the heap holds one event per busy direction,
    /// not one per packet in flight).
    inflight: VecDeque<(u64, u32)>,
    /// The copy whose arrival event is pending (kept out of the deque so that a direction
    /// with one packet in flight, the common case, allocates nothing).
    head: Option<u32>,
    jitter: Option<SimRng>,
    /// Loss rules on this direction.
    loss: Vec<LossState>,
}

/// What became of a packet offered to a link direction.
pub(crate) enum Offer {
    /// Dropped for `cause` (the queue was full, or a loss rule).
    Lost(u32),
    /// On its way: it arrives at `arrival` (ns); `reorder`: the direction may reorder, so
    /// the copy gets its own arrival event instead of joining the FIFO.
    Sent { arrival: u64, reorder: bool },
}

/// Every link direction of a network: direction `2 * link` leaves end `a`, `2 * link + 1`
/// leaves end `b`.
pub(crate) struct Links {
    dirs: Vec<DirState>,
}

impl Links {
    pub(crate) fn new(net: &Network, seed: u64) -> Links {
        let mut dirs: Vec<DirState> = Vec::with_capacity(net.links.len() * 2);
        for (i, l) in net.links.iter().enumerate() {
            for d in 0..2u64 {
                dirs.push(DirState {
                    jitter: l
                        .cfg
                        .jitter
                        .map(|_| SimRng::new(seed, tag::JITTER, i as u64, d)),
                    ..DirState::default()
                });
            }
        }
        Links { dirs }
    }

    pub(crate) fn add_loss(&mut self, d: usize, st: LossState) {
        self.dirs[d].loss.push(st);
    }

    /// Offer a packet of `len` bytes and `class` to direction `d` (configured by `cfg`) at
    /// `now` (ns): queueing, transmission, propagation, jitter, then the loss rules.
    pub(crate) fn offer(
        &mut self,
        d: usize,
        cfg: &LinkConfig,
        now: u64,
        len: u64,
        class: Option<PacketClass>,
        rec: &mut Recorder,
    ) -> Offer {
        let st = &mut self.dirs[d];
        if let Some(cap) = cfg.queue {
            while st.waiting.front().is_some_and(|&s| s <= now) {
                st.waiting.pop_front();
            }
            if st.waiting.len() >= cap && st.busy_until > now {
                return Offer::Lost(CAUSE_QUEUE);
            }
        }
        let tx = if cfg.bandwidth_bps == 0 {
            0
        } else {
            (len * 8 * 1_000_000_000).div_ceil(cfg.bandwidth_bps)
        };
        let start = now.max(st.busy_until);
        if start > now && cfg.queue.is_some() {
            st.waiting.push_back(start);
        }
        st.busy_until = start + tx;
        let mut arrival = st.busy_until + cfg.delay.as_nanos() as u64;
        if let (Some(j), Some(rng)) = (cfg.jitter, st.jitter.as_mut()) {
            let v = rng.normal(j.mean.as_nanos() as f64, j.sd.as_nanos() as f64);
            if v > 0.0 {
                arrival += v as u64;
            }
        }
        if !cfg.reorder {
            arrival = arrival.max(st.last_arrival);
            st.last_arrival = arrival;
        }
        rec.link_hop(class);
        for rule in &mut st.loss {
            if rule.drops(class, 0) {
                return Offer::Lost(rule.cause);
            }
        }
        Offer::Sent {
            arrival,
            reorder: cfg.reorder,
        }
    }

    /// Copy `c` joins direction `d`'s FIFO, arriving at `arrival`. Returns true if it is the
    /// head, whose arrival event the caller schedules.
    pub(crate) fn push(&mut self, d: usize, arrival: u64, c: u32) -> bool {
        let st = &mut self.dirs[d];
        if st.head.is_none() {
            st.head = Some(c);
            true
        } else {
            st.inflight.push_back((arrival, c));
            false
        }
    }

    /// The head of direction `d` arrived: (its copy, the next head's arrival time to
    /// schedule, if any).
    pub(crate) fn pop(&mut self, d: usize) -> Option<(u32, Option<u64>)> {
        let st = &mut self.dirs[d];
        let c = st.head.take()?;
        let next = st.inflight.pop_front().map(|(next, n)| {
            st.head = Some(n);
            next
        });
        Some((c, next))
    }
}
