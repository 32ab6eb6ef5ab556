//! An endpoint `E_ij` of DSP, CSP or CP: reassembly, in-order delivery, status reports and
//! (DSP designated, CP) local re-multicast.

use super::*;
use std::collections::BTreeSet;

/// What an endpoint `E_ij` does besides receiving.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// DSP `E_i1`: reports its own status to the source, collects its members' statuses and
    /// re-multicasts on `local_group` what they lack.
    Designated {
        /// The region's other endpoints.
        members: Vec<NodeId>,
        /// The region's local group.
        local_group: GroupId,
    },
    /// DSP `E_ij`, `j ≠ 1`: reports to its designated endpoint.
    Member {
        /// Its designated endpoint.
        designated: NodeId,
    },
    /// CSP endpoint: reports to its local exchange.
    Consolidated {
        /// Its local exchange.
        exchange: NodeId,
    },
    /// CP endpoint: reports to its local exchange and re-multicasts on `local_group` what the
    /// exchange assigns it.
    Combined {
        /// The local exchange.
        exchange: NodeId,
        /// The region's local group.
        local_group: GroupId,
    },
}

impl Role {
    /// Whether the endpoint keeps delivered blocks for others (a designated endpoint with
    /// no members has nobody to keep them for).
    fn keeps_retx(&self) -> bool {
        match self {
            Role::Designated { members, .. } => !members.is_empty(),
            Role::Combined { .. } => true,
            _ => false,
        }
    }
}

/// Endpoint configuration.
#[derive(Debug, Clone)]
pub struct EndpointConfig {
    /// This agent's node id (the source of every datagram it sends).
    pub node: NodeId,
    /// The data source.
    pub source: NodeId,
    /// Session id: carried in every datagram, and datagrams of another session are ignored.
    pub session: u32,
    /// MVCI of the global multicast tree.
    pub mvci: u32,
    /// LMVCI of the endpoint's local multicast tree.
    pub lmvci: u32,
    /// Its role in the region.
    pub role: Role,
    /// Bits in a LOB (`L`).
    pub l: u32,
    /// Reassembly buffer `R`, blocks: what `buffer_available` counts down from. A DSP
    /// member accepts blocks up to `R + C` past its first unreleased one (see
    /// [`Endpoint::accepts_below`]).
    pub reassembly: u32,
    /// Retransmission buffer `C`, blocks (designated DSP and CP endpoints).
    pub retx_capacity: u32,
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
    /// Round-trip delay inside the region (DSP local re-multicast hold-off `r_f × local_rtd`).
    pub local_rtd: Duration,
    /// Retransmission timeout factor `r_f` of local re-multicasts.
    pub r_f: f64,
    /// Delivered blocks an endpoint that keeps no retransmission buffer (a DSP member)
    /// still holds, newest first, so that it can serve its region's local repairs if it is
    /// elected designated while running ([`Endpoint::reassign`]); 0: none (the simulator,
    /// where no designated endpoint dies). They do not count against `buffer_available`.
    pub standby: u32,
}

impl EndpointConfig {
    /// The defaults for the given identity (see `rmcast_proto::spec`); every other field may be
    /// changed before building.
    pub fn new(node: NodeId, source: NodeId, role: Role, l: u32) -> Self {
        EndpointConfig {
            node,
            source,
            session: 0,
            mvci: 1,
            lmvci: 1,
            role,
            l: l.max(1),
            reassembly: l.max(1),
            retx_capacity: l.max(1),
            status_min: Duration::from_millis(4),
            status_max: Duration::from_millis(6),
            rtd: Duration::ZERO,
            kou: 8,
            ipt: Duration::ZERO,
            local_rtd: Duration::from_millis(1),
            r_f: 1.2,
            standby: 0,
        }
    }
}

struct Have {
    data: Bytes,
    got: Time,
    last_local: Option<Time>,
}

/// An endpoint (destination) `E_ij` of any of the three protocols.
pub struct Endpoint {
    cfg: EndpointConfig,
    win: SeqWindow,
    /// Every block held: `≥ lw` reassembly (out of order), `[rel, lw)` delivered and waiting
    /// for room in the retransmission buffer, `< rel` retransmission buffer.
    have: BTreeMap<u64, Have>,
    rel: u64,
    retx_len: usize,
    /// DSP designated: latest status of each member.
    members: BTreeMap<u32, BlockStatus>,
    status_at: Time,
    rng: AgentRng,
    out: Outbox,
    occupancy: Occupancy,
    /// DSP designated, custody given up ([`Endpoint::end_to_end`]).
    end_to_end: bool,
    /// While it waits for its members' first statuses before it reports to the source.
    resume: Option<Resume>,
}

/// A designated endpoint that gave custody up, waiting to hear where its members are.
struct Resume {
    /// How long it waits for a member that does not speak.
    wait: Duration,
    /// Until when (set at its first event).
    until: Option<Time>,
    /// The members heard since.
    heard: BTreeSet<u32>,
}

impl Endpoint {
    /// A endpoint built from `cfg`, drawing its random delays from `rng`.
    pub fn new(cfg: EndpointConfig, mut rng: AgentRng) -> Self {
        let first = rng.duration_between(Duration::ZERO, cfg.status_max);
        let members = match &cfg.role {
            Role::Designated { members, .. } => members
                .iter()
                .map(|m| (m.0, BlockStatus::initial(cfg.l, cfg.reassembly)))
                .collect(),
            _ => BTreeMap::new(),
        };
        Endpoint {
            win: SeqWindow::new(Self::span_of(&cfg).max(cfg.l) as usize),
            have: BTreeMap::new(),
            rel: 0,
            retx_len: 0,
            members,
            status_at: Time::ZERO + first,
            rng,
            out: Outbox::new(),
            occupancy: Occupancy::default(),
            end_to_end: false,
            resume: None,
            cfg,
        }
    }
    /// `LW_r`: the first block not yet received.
    pub fn lw(&self) -> u64 {
        self.win.base()
    }
    /// Blocks in the retransmission buffer.
    pub fn retx_len(&self) -> usize {
        self.retx_len
    }
    /// Its role now.
    pub fn role(&self) -> &Role {
        &self.cfg.role
    }

    /// Take a new role while running: the driver re-elected the region's designated
    /// endpoint (the previous one was evicted, or this one stalled, was evicted and has
    /// been replaced).
    ///
    /// * Becoming [`Role::Designated`]: every delivered block it still holds (the
    ///   [`EndpointConfig::standby`] blocks of a former member) forms its retransmission
    ///   buffer, from which it repairs its members as their statuses arrive (a member is
    ///   assumed to hold nothing until its first status); until its members' `LW_r` pass
    ///   them, a buffer fuller than `C` holds back releases and so `buffer_available`, which
    ///   slows the source. Its next status goes to the source at once.
    /// * Becoming [`Role::Member`] (stepping down): its retransmission buffer shrinks to the
    ///   standby blocks and its next status goes to the designated endpoint named, at once.
    ///
    /// Received blocks, `LW_r` and delivery are untouched: nothing is delivered twice.
    pub fn reassign(&mut self, now: Time, role: Role) {
        if role == self.cfg.role {
            return;
        }
        self.members = match &role {
            Role::Designated { members, .. } => members
                .iter()
                .map(|m| {
                    let kept = self.members.get(&m.0).cloned();
                    (
                        m.0,
                        kept.unwrap_or_else(|| {
                            BlockStatus::initial(self.cfg.l, self.cfg.reassembly)
                        }),
                    )
                })
                .collect(),
            _ => BTreeMap::new(),
        };
        self.cfg.role = role;
        let rel = self.rel;
        self.retx_len = if self.cfg.role.keeps_retx() {
            self.have.range(..rel).count()
        } else {
            0
        };
        self.release();
        self.update_occupancy(now);
        self.status_at = now;
    }
    /// Give custody up (a DSP designated endpoint hosted on a relay that may die and be
    /// replaced by a standby; the source runs with [`SourceConfig::release_at_lw`]). Its
    /// status to the source then carries an `LW_r` no higher than its members' lowest, what
    /// it holds above as received (the source re-multicasts none of it but releases none
    /// either), and a `buffer_available` that ends where its own would. Before its first
    /// status it waits until every member has reported (or `wait` has passed since its
    /// first event) and takes the source's blocks from the lowest `LW_r` heard: at the start
    /// of a session that is 0; a fresh endpoint replacing a dead one mid-transfer resumes
    /// its members where they are, and the source still holds what they lack. Returns
    /// `false` (and changes nothing) unless it is designated and not yet end to end.
    pub fn end_to_end(&mut self, wait: Duration) -> bool {
        if self.end_to_end || !matches!(self.cfg.role, Role::Designated { .. }) {
            return false;
        }
        self.end_to_end = true;
        self.resume = Some(Resume {
            wait,
            until: None,
            heard: BTreeSet::new(),
        });
        true
    }

    /// Whether it still waits for its members before it reports ([`Endpoint::end_to_end`]).
    pub fn resuming(&self) -> bool {
        self.resume.is_some()
    }

    /// Done waiting for its members ([`Endpoint::end_to_end`])? Rebases when it is.
    fn resumed(&mut self, now: Time) -> bool {
        let Some(r) = self.resume.as_mut() else {
            return true;
        };
        let until = *r.until.get_or_insert(now + r.wait);
        let all = self.members.keys().all(|m| r.heard.contains(m));
        if !all && now < until {
            return false;
        }
        let lowest = self
            .members
            .iter()
            .filter(|(m, _)| r.heard.contains(m))
            .map(|(_, st)| st.lw)
            .min();
        self.resume = None;
        if let Some(lw) = lowest {
            self.rebase(now, lw);
        }
        self.status_at = now;
        true
    }

    /// Take the source's blocks from `to` on (a fresh designated endpoint whose members are
    /// all at `to` or beyond): nothing below it will be received or repaired locally.
    fn rebase(&mut self, now: Time, to: u64) {
        if to <= self.lw() {
            return;
        }
        self.win = SeqWindow::starting_at(to, self.win.capacity());
        self.have.retain(|&s, _| s >= to);
        let held: Vec<u64> = self.have.keys().copied().collect();
        for s in held {
            self.win.insert(s);
        }
        self.rel = to;
        self.retx_len = 0;
        self.deliver_in_order();
        self.release();
        self.update_occupancy(now);
    }

    /// What it reports to the source: its own status or, end to end, one capped at its
    /// members' lowest `LW_r`.
    fn reported(&self) -> BlockStatus {
        let own = self.status();
        let floor = self.members.values().map(|m| m.lw).min();
        let Some(floor) = floor.filter(|&f| self.end_to_end && f < own.lw) else {
            return own;
        };
        let mut lob = vec![0u8; wire::bitmap_bytes(self.cfg.l)];
        for (&s, _) in self
            .have
            .range(floor..floor.saturating_add(u64::from(self.cfg.l)))
        {
            wire::set_bit(&mut lob, (s - floor) as usize);
        }
        let buf = u64::from(own.buf).saturating_add(own.lw - floor);
        BlockStatus {
            lw: floor,
            lob,
            buf: u32::try_from(buf).unwrap_or(u32::MAX),
        }
    }

    /// Blocks past its first unreleased one an endpoint in any role it may take accepts.
    fn span_of(cfg: &EndpointConfig) -> u32 {
        cfg.reassembly.saturating_add(cfg.retx_capacity)
    }

    /// The first block this endpoint drops as arriving beyond its buffer (counted in
    /// [`Gauge::Overflow`]). An endpoint that reports to the source or its exchange accepts
    /// `R` blocks from its first unreleased one, the space its `buffer_available` announced.
    /// A DSP member reports to nobody who paces the source: the source runs ahead of it as
    /// far as its designated endpoint's buffers allow, `R` beyond a retransmission buffer of
    /// `C` blocks that waits for this member's `LW_r` — so the member accepts `R + C`, and a
    /// block the source may legitimately send never arrives "too far" (seed 001 negotiates
    /// each destination's re-ordering buffer at connection set-up and leaves its size open).
    /// With only `R`, one loss at a member made every block beyond `R` of it an overflow to
    /// be re-multicast locally.
    pub fn accepts_below(&self) -> u64 {
        let span = match self.cfg.role {
            Role::Member { .. } => Self::span_of(&self.cfg),
            _ => self.cfg.reassembly,
        };
        self.rel.saturating_add(u64::from(span))
    }

    /// `buffer_available`.
    pub fn buffer_available(&self) -> u32 {
        let used = self.lw().saturating_sub(self.rel);
        u64::from(self.cfg.reassembly).saturating_sub(used) as u32
    }

    fn status(&self) -> BlockStatus {
        let lw = self.lw();
        let mut lob = vec![0u8; wire::bitmap_bytes(self.cfg.l)];
        // Every received block at or above LW_r is held (reassembly buffer).
        for (&s, _) in self
            .have
            .range(lw..lw.saturating_add(u64::from(self.cfg.l)))
        {
            wire::set_bit(&mut lob, (s - lw) as usize);
        }
        BlockStatus {
            lw,
            lob,
            buf: self.buffer_available(),
        }
    }

    fn update_occupancy(&mut self, now: Time) {
        self.occupancy.set(now, self.have.len());
        self.occupancy.set_retx(self.retx_len);
    }

    fn on_data(&mut self, now: Time, seq: u64, payload: &[u8]) {
        if seq < self.lw() {
            self.out.stats.duplicates += 1;
            return;
        }
        if seq >= self.accepts_below() {
            self.occupancy.overflowed();
            return;
        }
        match self.win.insert(seq) {
            Insert::New => {}
            Insert::Duplicate => {
                self.out.stats.duplicates += 1;
                return;
            }
            Insert::TooFar => {
                self.occupancy.overflowed();
                return;
            }
        }
        self.have.insert(
            seq,
            Have {
                data: Bytes::copy_from_slice(payload),
                got: now,
                last_local: None,
            },
        );
        self.deliver_in_order();
        self.release();
        self.update_occupancy(now);
    }

    fn deliver_in_order(&mut self) {
        while let Some(s) = self.win.pop_in_order() {
            if let Some(h) = self.have.get(&s) {
                self.out.stats.delivered += 1;
                self.out.event(Event::Delivered {
                    seq: s,
                    data: h.data.clone(),
                });
            }
        }
    }

    /// Move delivered blocks into the retransmission buffer while it has room (or drop them
    /// for endpoints that keep none).
    fn release(&mut self) {
        let lw = self.lw();
        if !self.cfg.role.keeps_retx() {
            // Nothing below `rel` is held but the standby blocks.
            self.rel = self.rel.max(lw);
            let keep_from = self.rel.saturating_sub(u64::from(self.cfg.standby));
            while let Some((&s, _)) = self.have.first_key_value() {
                if s >= keep_from {
                    break;
                }
                self.have.remove(&s);
            }
            return;
        }
        while self.rel < lw && self.retx_len < self.cfg.retx_capacity as usize {
            self.rel += 1;
            self.retx_len += 1;
        }
    }

    /// Free retransmission-buffer blocks below `floor` (every endpoint of the region has them).
    fn free_below(&mut self, now: Time, floor: u64) {
        let limit = floor.min(self.rel);
        while let Some((&s, _)) = self.have.first_key_value() {
            if s >= limit {
                break;
            }
            self.have.remove(&s);
            self.retx_len = self.retx_len.saturating_sub(1);
        }
        self.release();
        self.update_occupancy(now);
    }

    /// DSP designated: free the blocks every member has (below the lowest member `LW_r`).
    fn free_held_by_members(&mut self, now: Time) {
        let floor = self
            .members
            .values()
            .map(|m| m.lw)
            .min()
            .unwrap_or(u64::MAX);
        self.free_below(now, floor);
    }

    fn local_multicast(&mut self, now: Time, seq: u64, group: GroupId) -> bool {
        let Some(h) = self.have.get_mut(&seq) else {
            return false;
        };
        h.last_local = Some(now);
        let msg = Message::Tree(wire::Message::LocalData {
            lmvci: self.cfg.lmvci,
            seq,
            payload: &h.data,
        });
        let env = envelope(self.cfg.session, self.cfg.node, FLAG_RETRANSMISSION);
        if self.out.transmit(Dest::Group(group), env, &msg) {
            self.out.stats.repairs_sent += 1;
        }
        true
    }

    fn on_member_status(&mut self, now: Time, st: &wire::Status<'_>) {
        let Role::Designated { local_group, .. } = self.cfg.role else {
            self.out.stats.ignored += 1;
            return;
        };
        let Some(slot) = self.members.get_mut(&st.id) else {
            self.out.stats.ignored += 1;
            return;
        };
        let status = BlockStatus::from_wire(st);
        *slot = status.clone();
        if let Some(r) = self.resume.as_mut() {
            r.heard.insert(st.id);
        }
        let quick = secs_mul(self.cfg.local_rtd, self.cfg.r_f);
        let hold = self.cfg.status_max + quick;
        let highest = status.highest(st.l);
        let mut todo = Vec::new();
        let end = status.lw.saturating_add(u64::from(st.l));
        for (&s, h) in self.have.range(status.lw..end) {
            if status.received(s, st.l) {
                continue;
            }
            // A gap below a block the member holds is a loss; a block beyond everything
            // it holds may still be queued on its access link, so wait longer for it.
            let gap = highest.is_some_and(|hi| s < hi);
            let ready = match h.last_local {
                Some(t) => now >= t + hold,
                None => now >= h.got + if gap { quick } else { hold },
            };
            if ready {
                todo.push(s);
            }
        }
        for s in todo {
            self.local_multicast(now, s, local_group);
        }
        self.free_held_by_members(now);
        self.resumed(now);
    }

    fn on_assign(&mut self, now: Time, lepi: u32, l: u32, base: u64, bits: &[u8]) {
        let Role::Combined { local_group, .. } = self.cfg.role else {
            self.out.stats.ignored += 1;
            return;
        };
        if lepi != self.cfg.node.0 {
            self.out.stats.ignored += 1;
            return;
        }
        for i in 0..l as usize {
            if wire::bit(bits, i) {
                self.local_multicast(now, base + i as u64, local_group);
            }
        }
        self.free_below(now, base);
    }

    fn send_status(&mut self, now: Time) {
        let interval = self
            .rng
            .duration_between(self.cfg.status_min, self.cfg.status_max);
        let k = k_field(interval, self.cfg.rtd, self.cfg.kou, self.cfg.ipt);
        // Not before its members said where they are (the interval is drawn either way).
        let resumed = self.resumed(now);
        self.status_at = now + interval.max(Duration::from_nanos(1));
        if !resumed {
            return;
        }
        let st = self.reported();
        let (dest, vc, msg_kind_status) = match &self.cfg.role {
            Role::Designated { .. } => (self.cfg.source, self.cfg.mvci, true),
            Role::Member { designated } => (*designated, self.cfg.lmvci, false),
            Role::Consolidated { exchange } | Role::Combined { exchange, .. } => {
                (*exchange, self.cfg.lmvci, false)
            }
        };
        let body = wire::Status {
            vc,
            id: self.cfg.node.0,
            k,
            l: self.cfg.l,
            lw_r: st.lw,
            buffer_available: st.buf,
            lob: &st.lob,
        };
        let msg = if msg_kind_status {
            wire::Message::Status(body)
        } else {
            wire::Message::LocalStatus(body)
        };
        let env = envelope(self.cfg.session, self.cfg.node, 0);
        if self
            .out
            .transmit(Dest::Node(dest), env, &Message::Tree(msg))
        {
            self.out.stats.control_sent += 1;
        }
    }
}

impl Agent for Endpoint {
    fn handle_packet(&mut self, now: Time, _from: NodeId, packet: &[u8]) {
        match self.out.accept(packet, self.cfg.session) {
            Some(wire::Message::Data { seq, payload, .. })
            | Some(wire::Message::LocalData { seq, payload, .. }) => {
                self.on_data(now, seq, payload)
            }
            Some(wire::Message::LocalStatus(st)) => self.on_member_status(now, &st),
            Some(wire::Message::Assign {
                lepi,
                l,
                base,
                bits,
                ..
            }) => self.on_assign(now, lepi, l, base, bits),
            Some(wire::Message::Status(_)) => self.out.ignore(),
            None => {}
        }
    }
    fn handle_timeout(&mut self, now: Time) {
        if now >= self.status_at {
            self.send_status(now);
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        Some(self.status_at)
    }
    /// [`Gauge::Held`]: blocks held in the reassembly and retransmission buffers.
    fn gauge(&self, gauge: Gauge) -> Option<f64> {
        self.occupancy.gauge(gauge)
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        Some(self)
    }
    crate::outbox_field!(out);
    fn as_sender(&mut self) -> Option<&mut dyn crate::SenderAgent> {
        Some(self)
    }
}

impl crate::SenderAgent for Endpoint {
    /// A DSP designated endpoint stops waiting for member `node` (the driver evicted it):
    /// its status no longer holds blocks in the retransmission buffer. Once no member is
    /// left it keeps no retransmission buffer at all, as one alone from the start: blocks are
    /// freed only when a member's status arrives, so a buffer kept for nobody filled up
    /// again after the removal and, full, held `buffer_available` and the source at 0.
    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        if self.members.remove(&node.0).is_none() {
            return false;
        }
        if let Role::Designated { members, .. } = &mut self.cfg.role {
            members.retain(|&m| m != node);
        }
        if self.cfg.role.keeps_retx() {
            self.free_held_by_members(now);
        } else {
            // What it held for its members is now what any endpoint keeps: the standby blocks.
            self.retx_len = 0;
            self.release();
            self.update_occupancy(now);
        }
        true
    }
}
