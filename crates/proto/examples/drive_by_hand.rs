//! Drive PGM's agents by hand: one source, two receivers, a "network" that is a loop over
//! `poll_transmit` which drops every fifth datagram to receiver 2. No clock, no socket, no
//! thread: the agents are pure state machines, and this loop is their whole driver (the
//! simulator and the socket driver are the same loop, with a real clock and real queues).
//!
//! ```sh
//! cargo run -p rmcast-proto --example drive_by_hand
//! ```

use bytes::Bytes;
use rmcast_proto::pgm::{Receiver, ReceiverConfig, Source, SourceConfig};
use rmcast_proto::rng::AgentRng;
use rmcast_proto::{Agent, Dest, Event, GroupId, NodeId, SenderAgent, Time};
use std::time::Duration;

fn main() {
    let (group, src) = (GroupId(1), NodeId(0));
    let mut source = Source::new(SourceConfig::new(src, group));
    let mut receivers: Vec<Receiver> = (1..=2)
        .map(|n| {
            Receiver::new(
                ReceiverConfig::new(NodeId(n), src),
                AgentRng::from_seed(n.into()),
            )
        })
        .collect();
    let mut now = Time::ZERO;
    for i in 0..20u8 {
        source
            .send(now, Bytes::from(vec![i; 100]))
            .expect("the source takes it");
    }
    source.close(now);
    let (mut delivered, mut sent, mut dropped) = ([0usize; 2], 0u32, 0u32);
    // Each turn: move every queued datagram (the source's to both receivers, a receiver's
    // NAK to the source), then advance time to the earliest timer and fire it.
    for _ in 0..10_000 {
        while let Some(t) = source.poll_transmit() {
            for (k, r) in receivers.iter_mut().enumerate() {
                sent += 1;
                if k == 1 && sent % 5 == 0 {
                    dropped += 1; // lost on the way to receiver 2
                    continue;
                }
                r.handle_packet(now, src, &t.payload);
            }
        }
        for (k, r) in receivers.iter_mut().enumerate() {
            while let Some(t) = r.poll_transmit() {
                if t.dest == Dest::Node(src) || t.dest == Dest::Group(group) {
                    source.handle_packet(now, NodeId(k as u32 + 1), &t.payload);
                }
            }
            while let Some(e) = r.poll_event() {
                if let Event::Delivered { .. } = e {
                    delivered[k] += 1;
                }
            }
        }
        while source.poll_event().is_some() {}
        if delivered == [20, 20] {
            break;
        }
        // The next deadline of any agent; nothing pending means nothing more can happen.
        let next = receivers
            .iter()
            .filter_map(|r| r.poll_timeout())
            .chain(source.poll_timeout())
            .min();
        let Some(at) = next else { break };
        now = at.max(now + Duration::from_micros(1));
        source.handle_timeout(now);
        receivers.iter_mut().for_each(|r| r.handle_timeout(now));
    }
    println!(
        "at {:?}: receiver 1 delivered {}, receiver 2 delivered {} of 20 ({} datagrams dropped on its way, repaired)",
        now.saturating_since(Time::ZERO),
        delivered[0],
        delivered[1],
        dropped
    );
    assert_eq!(delivered, [20, 20], "every message reached both receivers");
}
