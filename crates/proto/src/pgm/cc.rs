//! Congestion control for `pgm`: TFMCC ([`crate::tfmcc`]) around the source and the
//! receivers, on with [`SourceConfig::cc`] / [`ReceiverConfig::cc`] (off by default; off, no
//! agent here is built and nothing changes).
//!
//! [`PacedSource`] wraps a [`Source`]: new data is accepted only while a token bucket at the
//! TFMCC rate allows it ([`SenderAgent::can_send`](crate::SenderAgent::can_send), and a wake-up
//! when the bucket refills), every datagram the source sends (data, repairs, SPMs, status) is
//! charged to the bucket as the source queues it, feedback (CCFB) goes to the TFMCC sender, and the
//! sender's status (CCS) is multicast when a round starts and after each feedback.
//! [`FeedbackReceiver`] wraps a [`Receiver`]: ODATA sequence numbers feed the loss history, every
//! packet from the source the receive rate, the status feeds the RTT, round and suppression, and
//! the feedback it produces goes to the source by unicast. The bucket holds 1 ms of the rate, at
//! least two packets.

use super::{Receiver, Source};
use crate::outbox::envelope;
use crate::pacing::QueuePacer;
use crate::rng::AgentRng;
use crate::tfmcc::{self, Feedback, Status};
use crate::SenderAgent;
use crate::{Agent, Bytes, Dest, Gauge, GroupId, NodeId, Outbox, SendError, Stats, Time};
use core::time::Duration;
use rmcast_wire::{pgm as wire, Message, Packet};

/// A PGM source paced by TFMCC.
pub struct PacedSource {
    inner: Source,
    cc: tfmcc::Sender,
    /// The bucket, charged at the last time the driver called in (when the datagrams it
    /// takes were queued).
    pacer: QueuePacer,
    node: NodeId,
    group: GroupId,
    session: u32,
}

impl PacedSource {
    /// `inner` paced from `cfg`'s initial rate.
    pub fn new(inner: Source, cfg: tfmcc::Config) -> Self {
        let (node, group, session) = (inner.cfg.node, inner.cfg.group, inner.cfg.session);
        let cc = tfmcc::Sender::new(cfg);
        PacedSource {
            inner,
            pacer: QueuePacer::new(cc.rate()),
            cc,
            node,
            group,
            session,
        }
    }

    /// The TFMCC sender (rate, CLR, slow start).
    pub fn cc(&self) -> &tfmcc::Sender {
        &self.cc
    }

    /// The PGM source inside.
    pub fn source(&self) -> &Source {
        &self.inner
    }

    fn at(&mut self, now: Time) {
        self.pacer.at(now);
    }

    /// After any call: follow the rate, multicast a status if one is due, charge the bucket.
    fn settle(&mut self) {
        self.pacer.follow(self.cc.rate());
        if let Some(st) = self.cc.poll_status(self.pacer.now()) {
            let env = envelope(self.session, self.node, 0);
            let msg = Message::Pgm(wire::Message::Status {
                round: st.round,
                rate: st.rate,
                suppress: st.suppress,
                clr: st.clr,
                r_max_us: st.r_max_us,
                echo_node: st.echo.0,
                echo_ts_us: st.echo.1,
                echo_delay_us: st.echo.2,
                flags: st.flags,
            });
            let out = self.inner.outbox_mut();
            if out.transmit(Dest::Group(self.group), env, &msg) {
                out.stats.control_sent += 1;
            }
        }
        self.pacer.charge(self.inner.stats().bytes_sent);
    }
}

impl Agent for PacedSource {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        self.at(now);
        match Packet::decode(packet) {
            Ok(p) if p.header.session == self.session => {
                if let Message::Pgm(wire::Message::Feedback {
                    round,
                    ts_us,
                    rtt_us,
                    rate,
                    recv_rate,
                    loss_ppm,
                    flags,
                }) = p.message
                {
                    let fb = Feedback {
                        round,
                        ts_us,
                        rtt_us,
                        rate,
                        recv_rate,
                        loss_ppm,
                        flags,
                    };
                    self.inner.outbox_mut().stats.count_received(packet);
                    self.cc.on_feedback(now, from.0, &fb);
                } else {
                    self.inner.handle_packet(now, from, packet);
                }
            }
            _ => self.inner.handle_packet(now, from, packet),
        }
        self.settle();
    }
    fn handle_timeout(&mut self, now: Time) {
        self.at(now);
        if self.inner.poll_timeout().is_some_and(|t| t <= now) {
            self.inner.handle_timeout(now);
        }
        if self.cc.poll_timeout().is_some_and(|t| t <= now) {
            self.cc.handle_timeout(now);
        }
        self.settle();
    }
    fn poll_timeout(&self) -> Option<Time> {
        // The bucket's refill matters only while it holds data back.
        let paced = (!self.pacer.ready() && self.inner.can_send()).then(|| self.pacer.ready_at());
        [self.inner.poll_timeout(), self.cc.poll_timeout(), paced]
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
    fn as_sender(&mut self) -> Option<&mut dyn crate::SenderAgent> {
        Some(self)
    }
}

impl crate::SenderAgent for PacedSource {
    fn send(&mut self, now: Time, data: Bytes) -> Result<(), SendError> {
        self.at(now);
        let len = data.len();
        self.inner.send(now, data)?;
        self.pacer.note_size(len + 64);
        self.cc.on_sent(now, len);
        self.settle();
        Ok(())
    }

    fn can_send(&self) -> bool {
        self.inner.can_send() && self.pacer.ready()
    }

    fn close(&mut self, now: Time) {
        self.at(now);
        self.inner.close(now);
        self.settle();
    }

    fn delivered_by_all(&mut self, now: Time, messages: u64) {
        self.inner.delivered_by_all(now, messages)
    }
}

/// A PGM receiver that reports its TCP-friendly rate.
pub struct FeedbackReceiver {
    inner: Receiver,
    cc: tfmcc::Receiver,
    rng: AgentRng,
    node: NodeId,
    source: NodeId,
    session: u32,
}

impl FeedbackReceiver {
    /// `inner` reporting as `cfg` says, drawing its feedback timers from `rng`.
    pub fn new(inner: Receiver, cfg: tfmcc::Config, rng: AgentRng) -> Self {
        let (node, source, session) = (inner.cfg.node, inner.cfg.source, inner.cfg.session);
        FeedbackReceiver {
            cc: tfmcc::Receiver::new(cfg, node.0),
            inner,
            rng,
            node,
            source,
            session,
        }
    }

    /// The TFMCC receiver.
    pub fn cc(&self) -> &tfmcc::Receiver {
        &self.cc
    }

    /// The PGM receiver inside.
    pub fn receiver(&self) -> &Receiver {
        &self.inner
    }

    /// Returns whether the packet was congestion control's alone.
    fn observe(&mut self, now: Time, packet: &[u8]) -> bool {
        let Ok(p) = Packet::decode(packet) else {
            return false;
        };
        if p.header.session != self.session {
            return false;
        }
        let from_source = p.header.source == self.source.0;
        if from_source && !matches!(p.message, Message::Pgm(wire::Message::Odata { .. })) {
            self.cc.on_other(now, packet.len());
        }
        match p.message {
            Message::Pgm(wire::Message::Odata { seq, .. }) if from_source => {
                self.cc.on_data(now, seq, packet.len());
                false
            }
            Message::Pgm(wire::Message::Status {
                round,
                rate,
                suppress,
                clr,
                r_max_us,
                echo_node,
                echo_ts_us,
                echo_delay_us,
                flags,
            }) => {
                let st = Status {
                    round,
                    rate,
                    suppress,
                    clr,
                    r_max_us,
                    echo: (echo_node, echo_ts_us, echo_delay_us),
                    flags,
                };
                self.inner.outbox_mut().stats.count_received(packet);
                self.cc.on_status(now, &st, &mut self.rng);
                true
            }
            _ => false,
        }
    }

    fn feedback(&mut self, now: Time) {
        while let Some(fb) = self.cc.poll_feedback(now) {
            let env = envelope(self.session, self.node, 0);
            let msg = Message::Pgm(wire::Message::Feedback {
                round: fb.round,
                ts_us: fb.ts_us,
                rtt_us: fb.rtt_us,
                rate: fb.rate,
                recv_rate: fb.recv_rate,
                loss_ppm: fb.loss_ppm,
                flags: fb.flags,
            });
            let source = self.source;
            self.inner.outbox_mut().control(source, env, &msg);
            if self.cc.poll_timeout().is_none_or(|t| t > now) {
                break;
            }
        }
    }
}

impl Agent for FeedbackReceiver {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        if !self.observe(now, packet) {
            self.inner.handle_packet(now, from, packet);
        }
        self.feedback(now);
    }
    fn handle_packet_bytes(&mut self, now: Time, from: NodeId, packet: &Bytes) {
        if !self.observe(now, packet) {
            self.inner.handle_packet_bytes(now, from, packet);
        }
        self.feedback(now);
    }
    fn handle_timeout(&mut self, now: Time) {
        if self.inner.poll_timeout().is_some_and(|t| t <= now) {
            self.inner.handle_timeout(now);
        }
        self.feedback(now);
    }
    fn poll_timeout(&self) -> Option<Time> {
        Time::earliest(self.inner.poll_timeout(), self.cc.poll_timeout())
    }
    fn outbox(&self) -> &Outbox {
        self.inner.outbox()
    }
    fn outbox_mut(&mut self) -> &mut Outbox {
        self.inner.outbox_mut()
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

/// TFMCC's configuration for `pgm`'s parameters (`None`: off).
pub(super) fn config(p: &super::Params) -> Option<tfmcc::Config> {
    p.tfmcc.then(|| tfmcc::Config {
        initial_rtt: p.tfmcc_initial_rtt.max(Duration::from_micros(1)),
        ..tfmcc::Config::default()
    })
}

#[cfg(test)]
mod tests;
