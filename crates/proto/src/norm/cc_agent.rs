//! NORM-CC around `norm`'s roles ([`super::cc`]'s state in the agent's messages), on with the
//! parameter `cc` (off by default: off, nothing here is built and nothing changes).
//!
//! [`CcSender`] wraps a [`Sender`]: its probes become CC RATE (NORM_CMD(CC) with the rate and
//! the CC node list) every CLR RTT instead of plain CC every `probe`, and its GRTT is updated
//! at each of them from the round trips of their answers, as the plain probes update it. New
//! data is accepted only while a token bucket at the NORM-CC rate allows it, and every datagram
//! the sender queues (data, repairs, commands) is charged to the bucket. [`CcReceiver`] wraps
//! a [`Receiver`]: every packet from the sender feeds the receive rate, original segments the
//! loss history; CC RATE sets the probe its NACKs echo and is answered by CC ACK (the CLR's and
//! PLR's at once by unicast, the others' after the back-off by multicast, suppressed by another
//! answer with a rate not much above theirs). A receiver built so answers a plain sender as a
//! plain receiver would: without CC RATE it only measures.

use super::cc::{Answer, Config, Feedback, ReceiverCc, SenderCc};
use super::receiver::Probe;
use super::sender::SKey;
use super::{micros, quantize_rtt, random_backoff, unquantize_rtt, Receiver, Sender};
use crate::outbox::envelope;
use crate::pacing::QueuePacer;
use crate::rng::AgentRng;
use crate::{Agent, Bytes, Dest, Gauge, NodeId, Outbox, SendError, SenderAgent, Stats, Time};
use core::time::Duration;
use rmcast_wire::norm::{self as wire, CcNodes};
use rmcast_wire::rfc5740::quant;
use rmcast_wire::{Message, Packet, FLAG_RETRANSMISSION};

/// NORM-CC's settings from the parameters (`None`: off).
pub(super) fn config(p: &super::Params) -> Option<Config> {
    p.cc.then(Config::default)
}

/// A NORM sender paced by NORM-CC.
pub struct CcSender {
    inner: Sender,
    cc: SenderCc,
    pacer: QueuePacer,
    next_probe: Option<Time>,
}

impl CcSender {
    /// `inner` paced from `cfg`'s initial rate; its first probe goes out at once.
    pub fn new(mut inner: Sender, cfg: Config) -> Self {
        inner.timers.cancel(SKey::Probe);
        let cc = SenderCc::new(cfg);
        CcSender {
            inner,
            pacer: QueuePacer::new(cc.rate()),
            cc,
            next_probe: Some(Time::ZERO),
        }
    }

    /// The NORM-CC state (rate, CLR, slow start).
    pub fn cc(&self) -> &SenderCc {
        &self.cc
    }

    /// The NORM sender inside.
    pub fn sender(&self) -> &Sender {
        &self.inner
    }

    /// After any call: follow the rate, charge the bucket for what the sender queued.
    fn settle(&mut self) {
        self.pacer.follow(self.cc.rate());
        self.pacer.charge(self.inner.out.stats.bytes_sent);
    }

    /// A CC RATE: the GRTT from the last interval's peak (as [`Sender`]'s own probe), then
    /// the rate and node list.
    fn probe(&mut self, now: Time) {
        let cc_sequence = self.inner.next_probe();
        let grtt = self.inner.grtt;
        let probe = self.cc.probe(grtt);
        let mut raw = Vec::with_capacity(wire::CC_NODE_LEN * probe.nodes.len());
        let listed = probe.nodes.iter().take(wire::MAX_CC_NODES).copied();
        CcNodes::encode(listed, &mut raw);
        if let Some(nodes) = CcNodes::from_raw(&raw) {
            let s = &mut self.inner;
            s.command(wire::Message::CcRate {
                cc_sequence,
                send_ts_us: micros(now).max(1),
                grtt: quantize_rtt(grtt),
                rate: quant::quantize_rate(probe.rate as f64),
                nodes,
            });
        }
        let probe_max = self.inner.cfg.probe.max(Duration::from_micros(1));
        let next = self.cc.probe_interval(grtt).min(probe_max);
        self.next_probe = (!self.inner.done).then_some(now + next);
    }

    /// A CC ACK for this sender: the round trip from its echo, then the feedback.
    fn feedback(&mut self, now: Time, from: NodeId, echoed_us: u64, fb: Feedback) {
        self.inner.grtt_response(now, echoed_us);
        let now_us = micros(now);
        let rtt = (echoed_us != 0 && echoed_us <= now_us)
            .then(|| Duration::from_micros(now_us - echoed_us));
        self.cc.on_feedback(now, from.0, &fb, rtt);
    }
}

impl Agent for CcSender {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        self.pacer.at(now);
        let me = (self.inner.cfg.session, self.inner.cfg.node.0);
        match Packet::decode(packet) {
            Ok(Packet {
                header,
                message:
                    Message::Norm(wire::Message::CcAck {
                        server,
                        grtt_response_us,
                        cc_flags,
                        cc_rtt,
                        cc_loss,
                        cc_loss_ex,
                        cc_rate,
                        ..
                    }),
            }) if (header.session, server) == me => {
                self.inner.out.stats.count_received(packet);
                let loss = u32::from(cc_loss) << 16 | u32::from(cc_loss_ex);
                let fb = Feedback {
                    flags: cc_flags,
                    rtt: unquantize_rtt(cc_rtt),
                    loss: quant::unquantize_loss32(loss),
                    rate: quant::unquantize_rate(cc_rate),
                };
                self.feedback(now, from, grtt_response_us, fb);
            }
            _ => self.inner.handle_packet(now, from, packet),
        }
        self.settle();
    }
    fn handle_timeout(&mut self, now: Time) {
        self.pacer.at(now);
        if self.next_probe.is_some_and(|t| t <= now) {
            self.probe(now);
        }
        if self.inner.poll_timeout().is_some_and(|t| t <= now) {
            self.inner.handle_timeout(now);
        }
        if self.inner.done {
            self.next_probe = None;
        }
        self.settle();
    }
    fn poll_timeout(&self) -> Option<Time> {
        let paced = (!self.pacer.ready() && self.inner.can_send()).then(|| self.pacer.ready_at());
        [self.inner.poll_timeout(), self.next_probe, paced]
            .into_iter()
            .flatten()
            .min()
    }
    fn outbox(&self) -> &Outbox {
        self.inner.outbox()
    }
    fn outbox_mut(&mut self) -> &mut Outbox {
        self.inner.outbox_mut()
    }
    fn stats(&self) -> &Stats {
        self.inner.stats()
    }
    fn gauge(&self, gauge: Gauge) -> Option<f64> {
        match gauge {
            Gauge::Rate => Some(self.cc.rate() as f64),
            g => self.inner.gauge(g),
        }
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        Some(self)
    }
    fn as_sender(&mut self) -> Option<&mut dyn SenderAgent> {
        Some(self)
    }
}

impl SenderAgent for CcSender {
    fn send(&mut self, now: Time, data: Bytes) -> Result<(), SendError> {
        self.pacer.at(now);
        let len = data.len();
        self.inner.send(now, data)?;
        self.pacer.note_size(len + 64);
        self.cc.on_sent(len);
        self.settle();
        Ok(())
    }
    fn can_send(&self) -> bool {
        self.inner.can_send() && self.pacer.ready()
    }
    fn close(&mut self, now: Time) {
        self.pacer.at(now);
        self.inner.close(now);
        self.settle();
    }
    fn remove_receiver(&mut self, now: Time, node: NodeId) -> bool {
        let removed = self.inner.remove_receiver(now, node);
        self.settle();
        removed
    }
}

/// A NORM receiver that answers NORM-CC probes.
pub struct CcReceiver {
    inner: Receiver,
    cc: ReceiverCc,
    rng: AgentRng,
    /// When the pending answer goes out.
    answer: Option<Time>,
}

impl CcReceiver {
    /// `inner` answering probes, drawing its back-offs from `rng`.
    pub fn new(inner: Receiver, cfg: Config, rng: AgentRng) -> Self {
        let cc = ReceiverCc::new(cfg, inner.cfg.node.0, inner.grtt);
        CcReceiver {
            inner,
            cc,
            rng,
            answer: None,
        }
    }

    /// The NORM-CC state (rate, loss, RTT).
    pub fn cc(&self) -> &ReceiverCc {
        &self.cc
    }

    /// The NORM receiver inside.
    pub fn receiver(&self) -> &Receiver {
        &self.inner
    }

    /// Returns whether the packet was NORM-CC's alone.
    fn observe(&mut self, now: Time, packet: &[u8]) -> bool {
        let Ok(p) = Packet::decode(packet) else {
            return false;
        };
        let (cfg, h) = (&self.inner.cfg, p.header);
        if h.session != cfg.session {
            return false;
        }
        let (source, k) = (cfg.source.0, u64::from(cfg.fec.k));
        let Message::Norm(m) = p.message else {
            return false;
        };
        if h.source == source {
            self.cc.on_packet(now, packet.len());
        }
        match m {
            wire::Message::Data {
                object: 0,
                block,
                symbol,
                block_len,
                ..
            } if h.source == source && h.flags & FLAG_RETRANSMISSION == 0 && symbol < block_len => {
                let seq = u64::from(block) * k + u64::from(symbol);
                self.cc.on_data(now, seq, packet.len());
                false
            }
            wire::Message::CcRate {
                cc_sequence,
                send_ts_us,
                grtt,
                rate,
                nodes,
            } if h.source == source => {
                self.inner.out.stats.count_received(packet);
                self.probed(now, cc_sequence, send_ts_us, grtt, rate, nodes);
                true
            }
            wire::Message::CcAck {
                server, cc_rate, ..
            } if server == source => {
                self.inner.out.stats.count_received(packet);
                self.cc.on_heard(quant::unquantize_rate(cc_rate));
                true
            }
            _ => false,
        }
    }

    fn probed(&mut self, now: Time, seq: u16, ts_us: u64, grtt: u8, rate: u16, n: CcNodes<'_>) {
        let grtt = unquantize_rtt(grtt);
        self.inner.grtt = grtt;
        self.inner.probe = Some(Probe {
            seq,
            ts_us,
            at: now,
        });
        let (k, gsize) = (self.inner.cfg.fec.backoff_k, self.inner.cfg.gsize);
        let rng = &mut self.rng;
        let answer = self.cc.on_probe(grtt, rate, n.iter(), |_| {
            random_backoff(rng, grtt.mul_f64(k), gsize)
        });
        match answer {
            Answer::Now => {
                self.answer = None;
                self.feedback(now, Dest::Node(self.inner.cfg.source));
            }
            Answer::After(wait) => {
                if self.answer.is_none() {
                    self.answer = Some(now + wait);
                }
            }
            Answer::No => self.answer = None,
        }
    }

    /// A CC ACK to `dest`.
    fn feedback(&mut self, now: Time, dest: Dest) {
        let Some(p) = self.inner.probe else {
            return;
        };
        let loss = quant::quantize_loss32(self.cc.loss());
        let msg = wire::Message::CcAck {
            server: self.inner.cfg.source.0,
            grtt_response_us: self.inner.grtt_response(now),
            cc_sequence: p.seq,
            cc_flags: self.cc.flags(),
            cc_rtt: quantize_rtt(self.cc.rtt()),
            cc_loss: (loss >> 16) as u16,
            cc_loss_ex: (loss & 0xffff) as u16,
            cc_rate: quant::quantize_rate(self.cc.rate()),
        };
        let out = &mut self.inner.out;
        out.stats.control_sent += 1;
        let env = envelope(self.inner.cfg.session, self.inner.cfg.node, 0);
        out.transmit(dest, env, &Message::Norm(msg));
    }
}

impl Agent for CcReceiver {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        if !self.observe(now, packet) {
            self.inner.handle_packet(now, from, packet);
        }
    }
    fn handle_packet_bytes(&mut self, now: Time, from: NodeId, packet: &Bytes) {
        if !self.observe(now, packet) {
            self.inner.handle_packet_bytes(now, from, packet);
        }
    }
    fn handle_timeout(&mut self, now: Time) {
        if self.answer.is_some_and(|t| t <= now) {
            self.answer = None;
            if !self.cc.suppressed() {
                self.feedback(now, Dest::Group(self.inner.cfg.group));
            }
        }
        if self.inner.poll_timeout().is_some_and(|t| t <= now) {
            self.inner.handle_timeout(now);
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        [self.inner.poll_timeout(), self.answer]
            .into_iter()
            .flatten()
            .min()
    }
    fn outbox(&self) -> &Outbox {
        self.inner.outbox()
    }
    fn outbox_mut(&mut self) -> &mut Outbox {
        self.inner.outbox_mut()
    }
    fn stats(&self) -> &Stats {
        self.inner.stats()
    }
    fn gauge(&self, gauge: Gauge) -> Option<f64> {
        match gauge {
            Gauge::Rate => Some(self.cc.rate()),
            g => self.inner.gauge(g),
        }
    }
    fn as_any_mut(&mut self) -> Option<&mut dyn core::any::Any> {
        Some(self)
    }
}
