//! The local exchange `L_i` of CSP and CP, a router agent (seed 001 §4, §5).

use super::status::aligned_and_or;
use super::*;

/// Local exchange configuration (CSP and CP).
#[derive(Debug, Clone)]
pub struct ExchangeConfig {
    /// This agent's node id (the source of every datagram it sends).
    pub node: NodeId,
    /// The data source.
    pub source: NodeId,
    /// Session id: carried in every datagram, and datagrams of another session are ignored.
    pub session: u32,
    /// MVCI of the global multicast tree.
    pub mvci: u32,
    /// LMVCI of the local multicast tree.
    pub lmvci: u32,
    /// Pessimistic (CSP) or optimistic (CP) merging of statuses.
    pub merge: Merge,
    /// The endpoints in its jurisdiction (their LEPI is their node id).
    pub endpoints: Vec<NodeId>,
    /// Bits in a LOB (`L`).
    pub l: u32,
    /// Status interval, drawn uniformly from `[status_min, status_max]` each time.
    pub status_min: Duration,
    /// See `status_min`.
    pub status_max: Duration,
    /// Round-trip delay to the source, `kou` and `ipt` (for the `k` field only).
    pub rtd: Duration,
    /// See `rtd`.
    pub kou: u32,
    /// See `rtd`.
    pub ipt: Duration,
    /// Buffer each endpoint is assumed to have before its first status.
    pub initial_buffer: u32,
    /// CP: a block is not assigned again before this long.
    pub reassign_after: Duration,
}

impl ExchangeConfig {
    /// The defaults for the given identity (see `rmcast_proto::spec`); every other field may be
    /// changed before building.
    pub fn new(node: NodeId, source: NodeId, merge: Merge, endpoints: Vec<NodeId>, l: u32) -> Self {
        let l = l.max(1);
        ExchangeConfig {
            node,
            source,
            session: 0,
            mvci: 1,
            lmvci: 1,
            merge,
            endpoints,
            l,
            status_min: Duration::from_millis(4),
            status_max: Duration::from_millis(6),
            rtd: Duration::ZERO,
            kou: 8,
            ipt: Duration::ZERO,
            initial_buffer: l,
            reassign_after: Duration::from_millis(6) + Duration::from_micros(1200),
        }
    }
}

/// A local exchange `L_i` as a router agent: it consumes its endpoints' statuses, sends the
/// consolidated status to the source and (CP) assigns local re-multicasts.
pub struct Exchange {
    cfg: ExchangeConfig,
    statuses: Vec<BlockStatus>,
    index: BTreeMap<u32, usize>,
    assigned: BTreeMap<u64, Time>,
    first_seen: BTreeMap<u64, Time>,
    floor_sent: Vec<u64>,
    status_at: Time,
    rng: AgentRng,
    out: Outbox<RouterTransmit>,
    /// Local re-multicasts ordered (CP).
    pub assignments: u64,
}

impl Exchange {
    /// A local exchange built from `cfg`, drawing its random delays from `rng`.
    pub fn new(cfg: ExchangeConfig, mut rng: AgentRng) -> Self {
        let first = rng.duration_between(Duration::ZERO, cfg.status_max);
        let statuses = cfg
            .endpoints
            .iter()
            .map(|_| BlockStatus::initial(cfg.l, cfg.initial_buffer))
            .collect();
        let index = cfg
            .endpoints
            .iter()
            .enumerate()
            .map(|(i, n)| (n.0, i))
            .collect();
        Exchange {
            statuses,
            index,
            assigned: BTreeMap::new(),
            first_seen: BTreeMap::new(),
            floor_sent: vec![0; cfg.endpoints.len()],
            status_at: Time::ZERO + first,
            rng,
            out: Outbox::new(),
            assignments: 0,
            cfg,
        }
    }

    /// Stop waiting for endpoint `node` (the driver evicted it): its status no longer enters
    /// the consolidation; whether it was one of this exchange's endpoints.
    pub fn remove_endpoint(&mut self, node: NodeId) -> bool {
        let Some(j) = self.index.remove(&node.0) else {
            return false;
        };
        if j < self.statuses.len() {
            self.statuses.remove(j);
            self.floor_sent.remove(j);
            self.cfg.endpoints.remove(j);
        }
        self.index = self
            .cfg
            .endpoints
            .iter()
            .enumerate()
            .map(|(i, n)| (n.0, i))
            .collect();
        true
    }

    /// The consolidated status it would send now.
    pub fn consolidated(&self) -> Option<BlockStatus> {
        consolidate(self.cfg.merge, self.cfg.l, &self.statuses)
    }

    fn emit(&mut self, dest: NodeId, msg: wire::Message<'_>) {
        let env = envelope(self.cfg.session, self.cfg.node, 0);
        if self
            .out
            .transmit_via(Dest::Node(dest), None, env, &Message::Tree(msg))
        {
            self.out.stats.control_sent += 1;
        }
    }

    fn report(&mut self, now: Time) {
        let interval = self
            .rng
            .duration_between(self.cfg.status_min, self.cfg.status_max);
        self.status_at = now + interval.max(Duration::from_nanos(1));
        if let Some(c) = self.consolidated() {
            let k = k_field(interval, self.cfg.rtd, self.cfg.kou, self.cfg.ipt);
            let body = wire::Status {
                vc: self.cfg.mvci,
                id: self.cfg.node.0,
                k,
                l: self.cfg.l,
                lw_r: c.lw,
                buffer_available: c.buf,
                lob: &c.lob,
            };
            self.emit(self.cfg.source, wire::Message::Status(body));
        }
        if self.cfg.merge == Merge::Optimistic {
            self.assign(now);
        }
    }

    /// CP: for each block some endpoint lacks and another has, order the first holder to
    /// re-multicast it locally.
    fn assign(&mut self, now: Time) {
        let l = self.cfg.l;
        let Some(floor) = self.statuses.iter().map(|s| s.lw).min() else {
            return;
        };
        self.assigned.retain(|&s, _| s >= floor);
        self.first_seen.retain(|&s, _| s >= floor);
        let highest: Vec<Option<u64>> = self.statuses.iter().map(|st| st.highest(l)).collect();
        let n = self.statuses.len();
        let mut bits: Vec<Vec<u8>> = vec![Vec::new(); n];
        // Candidates: held by some endpoint (OR) and lacked by some (not AND).
        let (and, or) = aligned_and_or(&self.statuses, floor, l);
        let mut candidates = Vec::new();
        for (wi, (a, o)) in and.iter().zip(&or).enumerate() {
            let mut c = o & !a;
            while c != 0 {
                let off = 64 * wi as u64 + u64::from(c.trailing_zeros());
                c &= c - 1;
                if off < u64::from(l) {
                    candidates.push(floor + off);
                }
            }
        }
        for s in candidates {
            let mut holder = None;
            let mut gap = false;
            for (j, st) in self.statuses.iter().enumerate() {
                if st.received(s, l) {
                    holder.get_or_insert(j);
                } else {
                    gap |= highest[j].is_some_and(|hi| s < hi);
                }
            }
            let Some(h) = holder else {
                continue;
            };
            let seen = *self.first_seen.entry(s).or_insert(now);
            // A gap below a block the endpoint holds is a loss; a block beyond everything it
            // holds may still be queued on its access link: wait `reassign_after` for it.
            if !gap && now < seen + self.cfg.reassign_after {
                continue;
            }
            if self
                .assigned
                .get(&s)
                .is_some_and(|&t| now < t + self.cfg.reassign_after)
            {
                continue;
            }
            self.assigned.insert(s, now);
            self.assignments += 1;
            let Some(b) = bits.get_mut(h) else {
                continue;
            };
            if b.is_empty() {
                b.resize(wire::bitmap_bytes(l), 0);
            }
            // The ASSIGN bitmap starts at `floor` and covers L blocks.
            wire::set_bit(b, (s - floor) as usize);
        }
        let step = u64::from(l / 8).max(1);
        for (j, b) in bits.into_iter().enumerate() {
            let has_bits = !b.is_empty();
            let Some(&sent) = self.floor_sent.get(j) else {
                continue;
            };
            if !has_bits && floor < sent.saturating_add(step) {
                continue;
            }
            if let Some(f) = self.floor_sent.get_mut(j) {
                *f = floor;
            }
            let b = if has_bits {
                b
            } else {
                vec![0; wire::bitmap_bytes(l)]
            };
            let to = self.cfg.endpoints[j];
            self.emit(
                to,
                wire::Message::Assign {
                    lmvci: self.cfg.lmvci,
                    lepi: to.0,
                    l,
                    base: floor,
                    bits: &b,
                },
            );
        }
    }
}

impl RouterAgent for Exchange {
    fn on_packet(
        &mut self,
        _now: Time,
        _ingress: IfaceId,
        _from: NodeId,
        dest: Dest,
        packet: &[u8],
    ) -> RouteDecision {
        if dest != Dest::Node(self.cfg.node) {
            return RouteDecision::Forward;
        }
        // Statuses are the exchange's; anything else addressed to its node is for the agent
        // there, if any (an endpoint of another region on the exchange's node, as on an
        // imported graph where every node routes: the ASSIGNs of its own exchange), and
        // goes on no link. Consuming it all left that endpoint without its orders: it never
        // re-multicast for its region nor freed its retransmission buffer; the source stalled.
        match self.out.accept(packet, self.cfg.session) {
            Some(wire::Message::LocalStatus(st)) => {
                match self.index.get(&st.id) {
                    Some(&j) => self.statuses[j] = BlockStatus::from_wire(&st),
                    None => self.out.stats.ignored += 1,
                }
                RouteDecision::Consume
            }
            _ => RouteDecision::ForwardOn(vec![IfaceId::LOCAL]),
        }
    }
    fn handle_timeout(&mut self, now: Time) {
        if now >= self.status_at {
            self.report(now);
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        Some(self.status_at)
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        Some(self)
    }
    crate::outbox_field!(out: RouterTransmit);
}
