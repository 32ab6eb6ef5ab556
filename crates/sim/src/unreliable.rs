//! `unreliable`: a baseline, not a protocol. The sender multicasts each message once as a
//! `saw` DATA packet (so loss filters see it as original data) and never repairs anything;
//! receivers count what arrives. Used by benchmarks and as background traffic. Its
//! `Delivered` events carry the arrival count as `seq` and no data (the simulator's
//! benchmarks must not allocate per delivered packet).

use rmcast_proto::{Agent, Bytes, Dest, Event, GroupId, NodeId, Outbox, SendError, Time, Transmit};
use rmcast_wire::{saw as wire, Envelope, Message, Packet};

/// Sends every message once to `group`.
#[derive(Debug)]
pub struct Sender {
    node: NodeId,
    group: GroupId,
    seq: u64,
    closed: bool,
    done: bool,
    out: Outbox,
}

impl Sender {
    /// A sender at `node` multicasting to `group`.
    pub fn new(node: NodeId, group: GroupId) -> Self {
        Sender {
            node,
            group,
            seq: 0,
            closed: false,
            done: false,
            out: Outbox::new(),
        }
    }
}

impl Agent for Sender {
    fn handle_packet(&mut self, _now: Time, _from: NodeId, packet: &[u8]) {
        self.out.stats.count_received(packet);
        self.out.stats.ignored += 1;
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    rmcast_proto::outbox_field!(out);
    fn as_sender(&mut self) -> Option<&mut dyn rmcast_proto::SenderAgent> {
        Some(self)
    }
}

impl rmcast_proto::SenderAgent for Sender {
    fn send(&mut self, now: Time, data: Bytes) -> Result<(), SendError> {
        if self.closed {
            return Err(SendError::Closed);
        }
        let env = Envelope {
            session: 0,
            source: self.node.0,
            flags: 0,
        };
        let msg = Message::Saw(wire::Message::Data {
            seq: (self.seq & 1) as u8,
            payload: &data,
        });
        let v = Packet::to_vec(env, &msg).map_err(|_| SendError::TooLarge {
            len: data.len(),
            max: rmcast_wire::MAX_PAYLOAD - 1,
        })?;
        let t = Transmit {
            dest: Dest::Group(self.group),
            payload: Bytes::from(v),
        };
        self.out.push(t);
        self.out.stats.data_sent += 1;
        self.out.event(Event::MessageDone {
            seq: self.seq,
            sent_at: now,
            done_at: now,
            transmissions: 1,
            failed: false,
        });
        self.out.stats.completed += 1;
        self.seq += 1;
        Ok(())
    }

    fn can_send(&self) -> bool {
        !self.closed
    }

    fn close(&mut self, _now: Time) {
        self.closed = true;
        if !self.done {
            self.done = true;
            self.out.event(Event::Completed);
        }
    }
}

/// Counts arriving data packets.
#[derive(Debug, Default)]
pub struct Receiver {
    out: Outbox,
}

impl Receiver {
    /// A receiver that reports every DATA it gets as delivered (without its bytes).
    pub fn new() -> Self {
        Self::default()
    }
}

impl Agent for Receiver {
    fn handle_packet(&mut self, _now: Time, _from: NodeId, packet: &[u8]) {
        self.out.stats.count_received(packet);
        match Packet::decode(packet) {
            Ok(Packet {
                message: Message::Saw(wire::Message::Data { .. }),
                ..
            }) => {
                self.out.event(Event::Delivered {
                    seq: self.out.stats.delivered,
                    data: Bytes::new(),
                });
                self.out.stats.delivered += 1;
            }
            Ok(_) => self.out.stats.ignored += 1,
            Err(_) => self.out.stats.malformed += 1,
        }
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    rmcast_proto::outbox_field!(out);
}
