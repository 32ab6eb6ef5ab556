//! The PGM network element (RFC 3208 §7, seed 003's router assistance): repair state per
//! lost packet (and per FEC block), the first NAK upstream, an NCF down the asking
//! interface, RDATA only down the interfaces that asked.

use super::{name_seqs, Naming, Params};
use crate::outbox::envelope;
use crate::timer::TimerSet;
use crate::{Dest, IfaceId, NodeId, Outbox, RouteDecision, RouterAgent, RouterTransmit, Time};
use core::time::Duration;
use rmcast_wire::{pgm as wire, Message};
use std::collections::{BTreeMap, BTreeSet};

crate::config::group_config! {
    /// Network-element configuration.
    pub struct NeConfig {
        /// Repair state no RDATA cleared is dropped after this.
        pub state_lifetime: Duration = p.state_lifetime,
        /// A repeat NAK for a packet (or block) with repair state is discarded only this
        /// long after the last one forwarded (RFC 3208's NAK_ELIM_IVL); a later one goes
        /// upstream again. `None`: discarded while the state lives (the seed's model).
        pub nak_elim: Option<Duration> = p.nak_elim,
        /// FEC: the source's proactive parity symbols per block (indices below this), which
        /// go down every interface as original data does.
        pub fec_proactive: u16 = p.fec_proactive,
    }
    pub fn new() from p: Params;
}

/// A network element's timers: a packet's repair state, a block's (FEC).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum NeKey {
    Seq(u64),
    Block(u64),
}

/// FEC: a network element's repair state for one block.
#[derive(Debug, Default)]
struct NeBlock {
    /// Interfaces that asked for parity not yet passed.
    ifaces: BTreeSet<IfaceId>,
    /// The largest parity total forwarded (or confirmed by the source) for the block.
    asked: u16,
    /// Parity passed so far (indices below this).
    passed: u16,
    /// When a block NAK last went upstream.
    up: Time,
}

/// A PGM network element (router agent) with repair state per lost packet.
pub struct NetworkElement {
    cfg: NeConfig,
    /// Per lost packet: the interfaces that asked, and when a NAK for it last went upstream.
    state: BTreeMap<u64, (BTreeSet<IfaceId>, Time)>,
    /// FEC: repair state per block.
    blocks: BTreeMap<u64, NeBlock>,
    timers: TimerSet<NeKey>,
    out: Outbox<RouterTransmit>,
    peak_state: usize,
    /// NAKs forwarded upstream (first NAK per state).
    pub naks_forwarded: u64,
    /// NAKs absorbed (state existed).
    pub naks_absorbed: u64,
    /// RDATA discarded for lack of state.
    pub rdata_discarded: u64,
}

impl NetworkElement {
    /// A network element built from `cfg`.
    pub fn new(cfg: NeConfig) -> Self {
        NetworkElement {
            cfg,
            state: BTreeMap::new(),
            blocks: BTreeMap::new(),
            timers: TimerSet::new(),
            out: Outbox::new(),
            peak_state: 0,
            naks_forwarded: 0,
            naks_absorbed: 0,
            rdata_discarded: 0,
        }
    }

    /// Packets (and FEC blocks) with repair state now.
    pub fn state_len(&self) -> usize {
        self.state.len() + self.blocks.len()
    }
    /// Largest number of packets with repair state at once.
    pub fn peak_state(&self) -> usize {
        self.peak_state
    }
    /// Interfaces recorded for `seq`.
    pub fn interfaces(&self, seq: u64) -> Vec<IfaceId> {
        self.state
            .get(&seq)
            .map(|(s, _)| s.iter().copied().collect())
            .unwrap_or_default()
    }

    fn ncf(&mut self, seq: u64, iface: IfaceId) {
        self.confirm(wire::Message::Ncf { seq }, iface);
    }

    /// A NAK for `seq` came in on `ingress`: the interface waits for the repair; whether the
    /// NAK goes upstream (the first for the packet, or a repeat after the elimination
    /// interval) or is absorbed.
    fn nak_state(&mut self, now: Time, ingress: IfaceId, seq: u64) -> bool {
        match self.state.get_mut(&seq) {
            Some((ifs, up)) => {
                ifs.insert(ingress);
                let elim = self.cfg.nak_elim.unwrap_or(Duration::MAX);
                if now.saturating_since(*up) < elim {
                    self.naks_absorbed += 1;
                    return false;
                }
                *up = now;
            }
            None => {
                self.state.insert(seq, (BTreeSet::from([ingress]), now));
                self.peak_state = self.peak_state.max(self.state_len());
            }
        }
        self.timers
            .set(NeKey::Seq(seq), now + self.cfg.state_lifetime);
        self.naks_forwarded += 1;
        true
    }

    /// A NAK list from `from` to `dest` came in on `ingress`: every number confirmed down
    /// `ingress` in one NCF list and taken as its own NAK; the list goes upstream whole if
    /// every number does, else the element sends a list (or a NAK) of those that do, in the
    /// asker's name.
    fn nak_list(
        &mut self,
        now: Time,
        ingress: IfaceId,
        from: NodeId,
        dest: Dest,
        seqs: wire::SeqList<'_>,
    ) -> RouteDecision {
        self.confirm(wire::Message::NcfList { seqs }, ingress);
        let up: Vec<u64> = seqs
            .iter()
            .filter(|&seq| self.nak_state(now, ingress, seq))
            .collect();
        if up.len() == seqs.len() {
            return RouteDecision::Forward;
        }
        let env = envelope(self.cfg.session, from, 0);
        let out = &mut self.out;
        if !up.is_empty() {
            name_seqs(&up, Naming::Request, |m| {
                out.transmit_via(dest, None, env, &Message::Pgm(m));
            });
        }
        RouteDecision::Consume
    }

    /// Multicast the confirmation `ncf` down `iface`.
    fn confirm(&mut self, ncf: wire::Message<'_>, iface: IfaceId) {
        let env = envelope(self.cfg.session, self.cfg.node, 0);
        let dest = Dest::Group(self.cfg.group);
        if self
            .out
            .transmit_via(dest, Some(vec![iface]), env, &Message::Pgm(ncf))
        {
            self.out.stats.control_sent += 1;
        }
    }

    /// FEC: a block NAK asking for `total` parity symbols came in on `ingress`: the interface
    /// waits for parity, the NAK is confirmed with the largest total asked, and forwarded
    /// only if it asks for more than any before.
    fn block_nak(&mut self, now: Time, ingress: IfaceId, block: u64, total: u16) -> RouteDecision {
        let fresh = !self.blocks.contains_key(&block);
        let elim = self.cfg.nak_elim.unwrap_or(Duration::MAX);
        let st = self.blocks.entry(block).or_default();
        st.ifaces.insert(ingress);
        // More parity than asked before, or a repeat after the elimination interval (its
        // parity was lost, or the source held the first off).
        let again = !fresh && now.saturating_since(st.up) >= elim;
        let forward = total > st.asked || again;
        if forward {
            st.up = now;
        }
        st.asked = st.asked.max(total);
        let asked = st.asked;
        self.peak_state = self.peak_state.max(self.state_len());
        self.timers
            .set(NeKey::Block(block), now + self.cfg.state_lifetime);
        self.confirm(
            wire::Message::BlockNcf {
                block,
                total: asked,
            },
            ingress,
        );
        if forward {
            self.naks_forwarded += 1;
            RouteDecision::Forward
        } else {
            self.naks_absorbed += 1;
            RouteDecision::Consume
        }
    }

    /// FEC: parity goes down the interfaces that asked, until the asked total has passed.
    fn block_parity(&mut self, now: Time, block: u64, index: u16) -> RouteDecision {
        if index < self.cfg.fec_proactive {
            // Proactive parity: nobody asked, everybody may need it.
            return RouteDecision::Forward;
        }
        let Some(st) = self.blocks.get_mut(&block) else {
            self.rdata_discarded += 1;
            return RouteDecision::Consume;
        };
        st.passed = st.passed.max(index.saturating_add(1));
        if st.ifaces.is_empty() {
            self.rdata_discarded += 1;
            return RouteDecision::Consume;
        }
        let ifs: Vec<IfaceId> = if st.passed >= st.asked {
            core::mem::take(&mut st.ifaces).into_iter().collect()
        } else {
            st.ifaces.iter().copied().collect()
        };
        self.timers
            .set(NeKey::Block(block), now + self.cfg.state_lifetime);
        RouteDecision::ForwardOn(ifs)
    }

    /// FEC: the source's confirmation is news only when it says more parity than this
    /// element asked for (its state had expired): then the waiting interfaces hear it.
    fn block_ncf(&mut self, block: u64, total: u16) -> RouteDecision {
        match self.blocks.get_mut(&block) {
            Some(st) if total > st.asked => {
                st.asked = total;
                if st.ifaces.is_empty() {
                    RouteDecision::Consume
                } else {
                    RouteDecision::ForwardOn(st.ifaces.iter().copied().collect())
                }
            }
            _ => RouteDecision::Consume,
        }
    }
}

impl NetworkElement {
    fn on_message(
        &mut self,
        now: Time,
        ingress: IfaceId,
        from: NodeId,
        dest: Dest,
        m: wire::Message<'_>,
        _packet: &[u8],
    ) -> RouteDecision {
        match m {
            wire::Message::Nak { seq } => {
                self.ncf(seq, ingress);
                if self.nak_state(now, ingress, seq) {
                    RouteDecision::Forward
                } else {
                    RouteDecision::Consume
                }
            }
            wire::Message::NakList { seqs } => self.nak_list(now, ingress, from, dest, seqs),
            wire::Message::Rdata { seq, .. } => match self.state.remove(&seq) {
                Some((ifs, _)) => {
                    self.timers.cancel(NeKey::Seq(seq));
                    RouteDecision::ForwardOn(ifs.into_iter().collect())
                }
                None => {
                    self.rdata_discarded += 1;
                    RouteDecision::Consume
                }
            },
            wire::Message::Ncf { .. } | wire::Message::NcfList { .. } => RouteDecision::Consume,
            // Congestion control is the source's and the receivers' business.
            wire::Message::Odata { .. }
            | wire::Message::Spm { .. }
            | wire::Message::Status { .. }
            | wire::Message::Feedback { .. } => RouteDecision::Forward,
            wire::Message::BlockNak { block, total } => self.block_nak(now, ingress, block, total),
            wire::Message::Parity { block, index, .. } => self.block_parity(now, block, index),
            wire::Message::BlockNcf { block, total } => self.block_ncf(block, total),
        }
    }
}

impl RouterAgent for NetworkElement {
    crate::outbox::router_io!(out, on_message);

    fn handle_timeout(&mut self, now: Time) {
        while let Some(key) = self.timers.pop_expired(now) {
            match key {
                NeKey::Seq(seq) => self.state.remove(&seq).is_some(),
                NeKey::Block(b) => self.blocks.remove(&b).is_some(),
            };
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.timers.next()
    }
    fn state_entries(&self) -> usize {
        self.state_len()
    }
    fn peak_state_entries(&self) -> usize {
        self.peak_state
    }
}
