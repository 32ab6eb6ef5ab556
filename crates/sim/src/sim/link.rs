//! Point-to-point links: per direction, a transmitter (bandwidth, an optional finite
//! queue), propagation delay, optional jitter and reordering, loss rules, and the FIFO of
//! copies in flight.

use super::pool::Copy;
use super::record::{Recorder, CAUSE_QUEUE};
use super::sparse::NodeLists;
use crate::loss::LossState;
use crate::network::{LinkConfig, Network, NONE};
use crate::rng::{tag, SimRng};
use rmcast_wire::PacketClass;
use std::collections::VecDeque;

/// What one direction needs on every packet, kept together (about a cache line per
/// direction: a run touches a direction's state once per packet it carries, far apart in
/// time, so each separate allocation read here is a cache miss). The link's bandwidth,
/// delay and reordering are read from its [`LinkConfig`], which links alike share.
struct DirState {
    /// The copy whose arrival event is pending (kept out of the deque so that a direction
    /// with one packet in flight, the common case, allocates nothing); [`NO_COPY`]: none.
    head: Copy,
    /// The copy behind `head` and its arrival time, also kept here: when the head arrives,
    /// the next head and the time of its arrival event are at hand, and the (likely cold)
    /// read of the deque's front only refills this slot, off the critical path ([`NO_COPY`]:
    /// none).
    next: (u64, Copy),
    /// Copies in flight on this direction behind `next`, in arrival order (arrivals never
    /// reorder, so only the head needs a kernel event: the queue holds one event per busy
    /// direction, not one per packet in flight). The copies travel here, not in the pool.
    /// Made when a direction first has three copies in flight (most never do), then kept.
    // Boxed on purpose: 8 bytes in every direction instead of a 32-byte empty deque.
    #[allow(clippy::box_collection)]
    inflight: Option<Box<VecDeque<(u64, Copy)>>>,
    busy_until: u64,
    last_arrival: u64,
    /// Queueing or jitter configured: the index of this direction's [`DirCold`] (read with
    /// the [`LinkConfig`]); `NONE` otherwise.
    cold: u32,
}

/// No copy: an empty `head` or `next` slot (packet `NONE`; the pool never has that many).
const NO_COPY: Copy = Copy {
    pkt: NONE,
    local: NONE,
    node: NONE,
    iface: NONE,
};

/// The rest of a direction's state (finite queue, jitter), only for directions that have
/// either.
struct DirCold {
    waiting: VecDeque<u64>,
    jitter: Option<SimRng>,
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
    cold: Vec<DirCold>,
    /// The loss rules of each direction that has any, in the order they were added (most
    /// directions of a large network have none).
    loss: NodeLists<LossState>,
}

impl Links {
    pub(crate) fn new(net: &Network, seed: u64) -> Links {
        let mut dirs: Vec<DirState> = Vec::with_capacity(net.links.len() * 2);
        let mut cold: Vec<DirCold> = Vec::new();
        for (i, l) in net.links.iter().enumerate() {
            for d in 0..2u64 {
                let slow = l.cfg.queue.is_some() || l.cfg.jitter.is_some();
                dirs.push(DirState {
                    head: NO_COPY,
                    next: (0, NO_COPY),
                    inflight: None,
                    busy_until: 0,
                    last_arrival: 0,
                    cold: if slow { cold.len() as u32 } else { NONE },
                });
                if slow {
                    cold.push(DirCold {
                        waiting: VecDeque::new(),
                        jitter: l
                            .cfg
                            .jitter
                            .map(|_| SimRng::new(seed, tag::JITTER, i as u64, d)),
                    });
                }
            }
        }
        Links {
            dirs,
            cold,
            loss: NodeLists::default(),
        }
    }

    pub(crate) fn add_loss(&mut self, d: usize, st: LossState) {
        self.loss.push(d, st);
    }

    /// Offer a packet of `len` bytes and `class` to direction `d` (configured by `cfg`) at
    /// `now` (ns): queueing, transmission, propagation, jitter, then the loss rules.
    #[inline]
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
        let mut cold = self.cold.get_mut(st.cold as usize);
        if let (Some(cap), Some(cold)) = (cfg.queue, cold.as_mut()) {
            while cold.waiting.front().is_some_and(|&s| s <= now) {
                cold.waiting.pop_front();
            }
            if cold.waiting.len() >= cap && st.busy_until > now {
                return Offer::Lost(CAUSE_QUEUE);
            }
        }
        let tx = cfg.tx_ns(len);
        let start = now.max(st.busy_until);
        if let Some(cold) = cold.as_mut() {
            if start > now && cfg.queue.is_some() {
                cold.waiting.push_back(start);
            }
        }
        st.busy_until = start + tx;
        let mut arrival = st.busy_until + cfg.delay.as_nanos() as u64;
        if let Some(cold) = cold {
            if let (Some(j), Some(rng)) = (cfg.jitter, cold.jitter.as_mut()) {
                let v = rng.normal(j.mean.as_nanos() as f64, j.sd.as_nanos() as f64);
                if v > 0.0 {
                    arrival += v as u64;
                }
            }
        }
        if !cfg.reorder {
            arrival = arrival.max(st.last_arrival);
            st.last_arrival = arrival;
        }
        rec.link_hop(class);
        if let Some(cause) = LossState::first_drop(self.loss.get_mut(d), class, 0) {
            return Offer::Lost(cause);
        }
        Offer::Sent {
            arrival,
            reorder: cfg.reorder,
        }
    }

    /// Copy `c` joins direction `d`'s FIFO, arriving at `arrival`. Returns true if it is the
    /// head, whose arrival event the caller schedules.
    #[inline]
    pub(crate) fn push(&mut self, d: usize, arrival: u64, c: Copy) -> bool {
        let st = &mut self.dirs[d];
        if st.head.pkt == NONE {
            st.head = c;
            true
        } else {
            if st.next.1.pkt == NONE {
                st.next = (arrival, c);
            } else {
                st.inflight
                    .get_or_insert_with(Box::default)
                    .push_back((arrival, c));
            }
            false
        }
    }

    /// The head of direction `d` arrived: (its copy, the next head's arrival time to
    /// schedule, if any).
    #[inline]
    pub(crate) fn pop(&mut self, d: usize) -> Option<(Copy, Option<u64>)> {
        let st = &mut self.dirs[d];
        if st.head.pkt == NONE {
            return None;
        }
        let c = std::mem::replace(&mut st.head, NO_COPY);
        let next = if st.next.1.pkt == NONE {
            None
        } else {
            let (next, n) = std::mem::replace(&mut st.next, (0, NO_COPY));
            st.head = n;
            if let Some(q) = st.inflight.as_mut().and_then(|q| q.pop_front()) {
                st.next = q;
            }
            Some(next)
        };
        Some((c, next))
    }
}
