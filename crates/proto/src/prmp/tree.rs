//! Multi-level PRMP: the "full multiple-level tree version" seed 004 announces as future work
//! (§1, §5). Every non-leaf receiver is a [`Relay`]: towards its own parent it is an ordinary
//! PRMP child ([`Receiver`]), answering only when polled; towards its own children it is a
//! PRMP parent ([`Sender`]) that re-multicasts the data on its own group, plans its own polls
//! within its own response quota, and recovers its children's losses itself. Feedback goes
//! only to the immediate parent, so no node ever sees more responses than its own `RR`.
//!
//! Choices (the paper gives none for the tree version):
//!
//! 1. **Custody.** A relay's upstream window advances as soon as it has a packet in order
//!    (the "hungry" consumer of §4 is the relay's own sending buffer), so its parent may
//!    release the packet before the relay's subtree has it; the relay then owns the packet
//!    until its children acknowledge it. Reliability stays end to end because each relay
//!    reports [`Event::Completed`] only when every child acknowledged everything, and a run
//!    is over only when every relay completed. Flow control is per hop (each relay's window
//!    `S` towards its children), and the relay's backlog is not bounded by its parent.
//! 2. **End of transmission.** PRMP has no FIN (§1: termination is a separate phase). The
//!    relay is told the transfer length at setup ([`RelayConfig::messages`], the connection
//!    setup of §1); after forwarding that many packets it closes its own session. Without it
//!    the relay forwards forever and never completes.
//! 3. **Dispatch.** RESP packets go to the relay's parent half, DATA, POLL and DATAPOLL to its
//!    child half; each half keeps its own session id (both 0 by default).
//! 4. The relay's application sees its own `Delivered` events (it is a receiver too);
//!    `MessageDone` and `Completed` are those of its downstream half.

use super::{Receiver, ReceiverConfig, Sender, SenderConfig};
use crate::{Agent, Event, NodeId, Outbox, SendError, Stats, Time, Transmit};
use bytes::Bytes;
use rmcast_wire::{prmp as wire, Message, Packet};
use std::collections::VecDeque;

/// A relay's two halves.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// Towards the parent (its `window` is the parent's `S`).
    pub upstream: ReceiverConfig,
    /// Towards the relay's own children (its `group` is the relay's own group, its `node` the
    /// relay's node).
    pub downstream: SenderConfig,
    /// Packets in the transfer, if known at setup: the relay closes its downstream session
    /// after forwarding that many.
    pub messages: Option<u64>,
}

/// A non-leaf receiver of the multi-level tree.
#[derive(Debug)]
pub struct Relay {
    rx: Receiver,
    tx: Sender,
    messages: Option<u64>,
    backlog: VecDeque<Bytes>,
    forwarded: u64,
    closed: bool,
    /// Its events and counters (the sum of its halves'); datagrams come from the halves.
    out: Outbox,
}

fn add(a: &Stats, b: &Stats) -> Stats {
    Stats {
        packets_sent: a.packets_sent + b.packets_sent,
        bytes_sent: a.bytes_sent + b.bytes_sent,
        packets_received: a.packets_received + b.packets_received,
        bytes_received: a.bytes_received + b.bytes_received,
        data_sent: a.data_sent + b.data_sent,
        repairs_sent: a.repairs_sent + b.repairs_sent,
        control_sent: a.control_sent + b.control_sent,
        timeouts: a.timeouts + b.timeouts,
        malformed: a.malformed + b.malformed,
        ignored: a.ignored + b.ignored,
        duplicates: a.duplicates + b.duplicates,
        delivered: a.delivered + b.delivered,
        completed: a.completed + b.completed,
        failed: a.failed + b.failed,
        evicted: a.evicted + b.evicted,
    }
}

impl Relay {
    /// A relay built from `cfg`; an error if `cfg` is out of range.
    pub fn new(mut cfg: RelayConfig) -> Result<Self, super::ConfigError> {
        // The relay's own sending buffer is its upstream consumer: it must take everything.
        cfg.downstream.queue_limit = usize::MAX;
        let tx = Sender::new(cfg.downstream)?;
        Ok(Relay {
            rx: Receiver::new(cfg.upstream),
            tx,
            messages: cfg.messages,
            backlog: VecDeque::new(),
            forwarded: 0,
            closed: false,
            out: Outbox::new(),
        })
    }

    /// The downstream half (for inspection).
    pub fn downstream(&self) -> &Sender {
        &self.tx
    }

    /// Packets received from the parent and handed to the downstream half.
    pub fn forwarded(&self) -> u64 {
        self.forwarded
    }

    fn step(&mut self, now: Time) {
        while let Some(e) = self.rx.poll_event() {
            if let Event::Delivered { data, .. } = &e {
                self.backlog.push_back(data.clone());
            }
            self.out.event(e);
        }
        while self.tx.can_send() {
            let Some(d) = self.backlog.pop_front() else {
                break;
            };
            match self.tx.send(now, d.clone()) {
                Ok(()) => self.forwarded += 1,
                Err(SendError::Full(_)) => {
                    self.backlog.push_front(d);
                    break;
                }
                // Closed or too large: cannot happen for data that fitted one PRMP packet
                // upstream; dropping it would break reliability, so count it and stop.
                Err(_) => {
                    self.out.stats.malformed += 1;
                    break;
                }
            }
        }
        if !self.closed && self.messages.is_some_and(|m| self.forwarded >= m) {
            self.closed = true;
            self.tx.close(now);
        }
        while let Some(e) = self.tx.poll_event() {
            if !matches!(e, Event::Delivered { .. }) {
                self.out.event(e);
            }
        }
        self.out.stats = add(self.rx.stats(), self.tx.stats());
    }
}

impl Agent for Relay {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        let to_tx = matches!(
            Packet::decode(packet),
            Ok(Packet {
                message: Message::Prmp(wire::Message::Resp { .. }),
                ..
            })
        );
        if to_tx {
            self.tx.handle_packet(now, from, packet);
        } else {
            // Everything else (including undecodable input, counted there) is upstream's.
            self.rx.handle_packet(now, from, packet);
        }
        self.step(now);
    }

    fn handle_timeout(&mut self, now: Time) {
        if self.rx.poll_timeout().is_some_and(|t| t <= now) {
            self.rx.handle_timeout(now);
        }
        if self.tx.poll_timeout().is_some_and(|t| t <= now) {
            self.tx.handle_timeout(now);
        }
        self.step(now);
    }

    fn poll_transmit(&mut self) -> Option<Transmit> {
        self.rx.poll_transmit().or_else(|| self.tx.poll_transmit())
    }

    fn poll_timeout(&self) -> Option<Time> {
        Time::earliest(self.rx.poll_timeout(), self.tx.poll_timeout())
    }

    crate::outbox_field!(out);

    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        let r = self.tx.remove_receiver(now, node);
        self.step(now);
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testkit::{assert_reliable, message, DoneOrder::AnyOrder, Harness};
    use crate::GroupId;
    use core::time::Duration;

    /// Root 0 → relays 1, 2 (group 1) → leaves 3..=6 under relay 1 (group 2) and 7..=10
    /// under relay 2 (group 3). The harness numbers agents in the order they are added.
    fn tree(drop: f64, seed: u64, n: u64) -> (Harness, Vec<u32>) {
        let mut h = Harness::new(Duration::from_micros(1500), drop, seed);
        let window = 64;
        let relays = [NodeId(1), NodeId(2)];
        let kids = |k: u32| -> Vec<NodeId> { (0..4).map(|j| NodeId(3 + 4 * k + j)).collect() };
        let mut root = SenderConfig::new(NodeId(0), GroupId(1), relays.to_vec());
        root.queue_limit = usize::MAX;
        let s = h.add(Box::new(Sender::new(root).unwrap()));
        for (k, &r) in relays.iter().enumerate() {
            let cfg = RelayConfig {
                upstream: ReceiverConfig::new(r, window),
                downstream: SenderConfig::new(r, GroupId(2 + k as u32), kids(k as u32)),
                messages: Some(n),
            };
            assert_eq!(h.add(Box::new(Relay::new(cfg).unwrap())), r);
        }
        let mut leaves = Vec::new();
        for k in 0..2u32 {
            for c in kids(k) {
                let id = h.add(Box::new(Receiver::new(ReceiverConfig::new(c, window))));
                assert_eq!(id, c);
                leaves.push(c.0);
            }
            h.set_group(GroupId(2 + k), kids(k));
        }
        h.set_group(GroupId(1), relays.to_vec());
        h.with_agent(s, |a, now| {
            for i in 0..n {
                a.send(now, message(i)).unwrap();
            }
            a.close(now);
        });
        h.run_until(Time::from_secs(600));
        (h, leaves)
    }

    #[test]
    fn every_leaf_gets_everything_in_order_through_relays() {
        for drop in [0.0, 0.05, 0.2] {
            let (h, leaves) = tree(drop, 3, 150);
            let what = format!("tree, drop {drop}");
            assert_reliable(&h, leaves.iter().map(|&l| l as usize), 150, AnyOrder, &what);
            assert_reliable(&h, [1, 2], 150, AnyOrder, &what);
            // Every parent (root and relays) completed.
            for p in [0u32, 1, 2] {
                assert!(
                    h.events[p as usize]
                        .iter()
                        .any(|(_, e)| matches!(e, Event::Completed)),
                    "{what}: node {p} did not complete"
                );
            }
        }
    }

    #[test]
    fn feedback_goes_only_to_the_immediate_parent() {
        let (h, _) = tree(0.05, 9, 100);
        // The root hears only its two relays; each relay only its four leaves.
        let root = h.agent(NodeId(0)).unwrap().stats().packets_received;
        let leaves_sent: u64 = (3u32..=10)
            .map(|c| h.agent(NodeId(c)).unwrap().stats().packets_sent)
            .sum();
        let relays_sent: u64 = [1u32, 2]
            .iter()
            .map(|&c| h.agent(NodeId(c)).unwrap().stats().control_sent)
            .sum();
        assert!(leaves_sent > 0 && relays_sent > 0);
        // Anything the root received came from relays (the harness delivers unicasts only
        // to their destination), so it cannot exceed what the relays sent upstream.
        assert!(
            root <= relays_sent,
            "root got {root}, relays sent {relays_sent}"
        );
    }

    #[test]
    fn a_relay_without_the_transfer_length_never_completes() {
        let mut h = Harness::new(Duration::from_micros(1500), 0.0, 1);
        let root = SenderConfig::new(NodeId(0), GroupId(1), vec![NodeId(1)]);
        let s = h.add(Box::new(Sender::new(root).unwrap()));
        let cfg = RelayConfig {
            upstream: ReceiverConfig::new(NodeId(1), 64),
            downstream: SenderConfig::new(NodeId(1), GroupId(2), vec![NodeId(2)]),
            messages: None,
        };
        h.add(Box::new(Relay::new(cfg).unwrap()));
        h.add(Box::new(Receiver::new(ReceiverConfig::new(NodeId(2), 64))));
        h.set_group(GroupId(1), vec![NodeId(1)]);
        h.set_group(GroupId(2), vec![NodeId(2)]);
        h.with_agent(s, |a, now| {
            for i in 0..10 {
                a.send(now, message(i)).unwrap();
            }
            a.close(now);
        });
        h.run_until(Time::from_secs(60));
        assert_reliable(&h, [2], 10, AnyOrder, "relay without length");
        assert!(!h.events[1]
            .iter()
            .any(|(_, e)| matches!(e, Event::Completed)));
    }
}
