use super::*;
use crate::testkit::DoneOrder::InOrder;
use crate::testkit::TEST_GROUP as GROUP;
use crate::testkit::*;
use crate::SenderAgent;
use rmcast_wire::Envelope;
use rmcast_wire::Packet;

struct Setup {
    base: GroupTest,
    window: usize,
    limit: Option<u32>,
}

impl Setup {
    fn new(receivers: usize, window: usize, drop: f64) -> Self {
        Setup {
            base: GroupTest::lan(receivers as u32, drop),
            window,
            limit: None,
        }
    }

    fn run(&self) -> Harness {
        self.base.run(
            |receivers| {
                let timeout = Duration::from_micros(500);
                let mut cfg = SenderConfig::new(NodeId(0), GROUP, receivers, self.window, timeout);
                cfg.max_retransmissions = self.limit;
                cfg.queue_limit = usize::MAX;
                Box::new(Sender::new(cfg))
            },
            |r| Box::new(Receiver::new(ReceiverConfig::new(r, self.window))),
        )
    }
}

#[test]
fn end_to_end_matrix_receivers_windows_drop_rates() {
    for receivers in [1, 5, 30] {
        for window in [4, 16, 64] {
            for drop in [0.0, 0.05, 0.20] {
                let setup = Setup::new(receivers, window, drop);
                let h = setup.run();
                let what = format!("{receivers} rx, W={window}, drop {drop}");
                let s = setup.base.assert_repairs_follow_loss(&h, InOrder, &what);
                let acks = setup.base.receivers_control_sent(&h);
                if drop == 0.0 {
                    assert_eq!(s.timeouts, 0, "{what}");
                }
                println!(
                    "rra e2e: {what}: {} msgs, {} ACKs, {} polls, {} repairs, {} timeouts, {} copies dropped",
                    setup.base.messages, acks, s.control_sent, s.repairs_sent, s.timeouts, h.stats.copies_dropped
                );
            }
        }
    }
}

#[test]
fn one_ack_per_message_when_the_window_covers_the_group() {
    // Lossless, W >= r: every DATA solicits exactly one ACK from its named receiver, and
    // only the tail needs polls (r - 1 of them, for the receivers whose turn did not come
    // after the last message).
    let r = 5;
    let setup = Setup::new(r, 16, 0.0);
    let h = setup.run();
    setup.base.assert_reliable(&h, InOrder, "lossless");
    let acks: u64 = (1..=r)
        .map(|i| h.agent(NodeId(i as u32)).unwrap().stats().control_sent)
        .sum();
    let polls = h.agent(NodeId(0)).unwrap().stats().control_sent;
    assert_eq!(polls, r as u64 - 1);
    assert_eq!(acks, setup.base.messages + polls);
    // Round robin: receiver i (1-based) is named by messages k with k mod r = i - 1; every
    // receiver but the last one named is polled once at the tail.
    let n = setup.base.messages as usize;
    for i in 1..=r {
        let own = h.agent(NodeId(i as u32)).unwrap().stats().control_sent as usize;
        let turns = (0..n).filter(|k| k % r == i - 1).count();
        let polled = usize::from((n - 1) % r != i - 1);
        assert_eq!(own, turns + polled, "receiver {i}");
    }
}

#[test]
fn small_window_still_completes_through_polls() {
    // W < r: the named receivers alone can never confirm a message; polls fill in.
    let setup = Setup::new(12, 3, 0.05);
    let h = setup.run();
    setup.base.assert_reliable(&h, InOrder, "W < r");
}

#[test]
fn runs_are_deterministic() {
    let mut setup = Setup::new(7, 8, 0.2);
    assert_setup_deterministic(&mut setup, |s| &mut s.base, Setup::run, 42, 43);
}

#[test]
fn retransmission_limit_records_failure_and_continues() {
    // Node 7 is configured but does not exist: nothing reaches it, nothing comes back. With
    // max 1 (thesis rule: 2 re-polls) every message fails; node 1 still receives all of
    // them, in order.
    let h = run_limited(NodeId(7), 1, 10);
    let done = h.done(0);
    assert_eq!(done, (0..10).map(|s| (s, true)).collect::<Vec<_>>());
    assert!(h.completed(0));
    assert_eq!(h.delivered_seqs(1), (0..10).collect::<Vec<_>>());
    // Each give-up took 1 request + 2 re-polls (count 0 and 1 pass `count <= 1`).
    let st = h.agent(NodeId(0)).unwrap().stats();
    assert_eq!(st.failed, 10);
    assert!(st.timeouts >= 3);
}

#[test]
fn repair_limit_bounds_a_receiver_that_answers_but_never_gets_multicast() {
    // Node 2 answers unicast polls but is outside the multicast group, so repairs never reach
    // it: each message's repairs are bounded by the limit, then it fails for node 2.
    let h = run_limited(NodeId(2), 2, 6);
    let done = h.done_transmissions(0);
    assert_eq!(done.len(), 6);
    for (seq, tx, failed) in done {
        assert!(failed, "message {seq}");
        assert!(tx <= 4, "message {seq}: {tx} transmissions, limit 1 + 3");
    }
    assert!(h.completed(0));
}

/// Window 4, receivers 1 and `second` configured, nodes 1 and 2 present, only node 1 in the
/// group; `limit` retransmissions, `messages` sent.
fn run_limited(second: NodeId, limit: u32, messages: u64) -> Harness {
    let timeout = Duration::from_micros(100);
    let mut cfg = SenderConfig::new(NodeId(0), GROUP, vec![NodeId(1), second], 4, timeout);
    cfg.max_retransmissions = Some(limit);
    run_with_one_listener(
        Box::new(Sender::new(cfg)),
        (1..=2).map(|r| -> Box<dyn Agent> {
            Box::new(Receiver::new(ReceiverConfig::new(NodeId(r), 4)))
        }),
        messages,
        Time::from_secs(10),
    )
}

// ---- unit tests ----

fn data(seq: u64, low: u64, acker: u32, payload: &[u8]) -> Vec<u8> {
    Packet::to_vec(
        Envelope::default(),
        &Message::Rra(wire::Message::Data {
            seq,
            low,
            acker,
            payload,
        }),
    )
    .unwrap()
}

fn ack(cum: u64, upto: u64, bitmap: &[u8]) -> Vec<u8> {
    Packet::to_vec(
        Envelope::default(),
        &Message::Rra(wire::Message::Ack { cum, upto, bitmap }),
    )
    .unwrap()
}

fn decode_all(a: &mut dyn Agent) -> Vec<(Dest, bool, wire::Message<'static>)> {
    std::iter::from_fn(|| a.poll_transmit())
        .map(|t| {
            let bytes: &'static [u8] = Vec::leak(t.payload.to_vec());
            let p = Packet::decode(bytes).unwrap();
            let Message::Rra(m) = p.message else {
                panic!("not rra")
            };
            (t.dest, p.header.flags & FLAG_RETRANSMISSION != 0, m)
        })
        .collect()
}

/// A sender for `rx` (window 8, timeout 1 ms) given messages `0..n` at time zero.
fn sender_holding(rx: Vec<NodeId>, n: u64) -> Sender {
    let mut s = Sender::new(SenderConfig::new(
        NodeId(0),
        GROUP,
        rx,
        8,
        Duration::from_millis(1),
    ));
    for i in 0..n {
        s.send(Time::ZERO, message(i)).unwrap();
    }
    s
}

#[test]
fn data_names_receivers_round_robin() {
    let mut s = sender_holding(vec![NodeId(5), NodeId(3), NodeId(9)], 7);
    let ackers: Vec<u32> = decode_all(&mut s)
        .into_iter()
        .map(|(_, _, m)| match m {
            wire::Message::Data { acker, .. } => acker,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(ackers, vec![5, 3, 9, 5, 3, 9, 5]);
}

#[test]
fn receiver_acks_only_when_named_and_reports_holes() {
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(2), 16));
    r.handle_packet(Time::ZERO, NodeId(0), &data(0, 0, 1, b"a"));
    assert!(decode_all(&mut r).is_empty(), "not named");
    // 1 and 2 lost; 3 and 5 arrive; 5 names us.
    r.handle_packet(Time::ZERO, NodeId(0), &data(3, 0, 1, b"d"));
    r.handle_packet(Time::ZERO, NodeId(0), &data(5, 0, 2, b"f"));
    let out = decode_all(&mut r);
    assert_eq!(out.len(), 1);
    let (dest, _, m) = &out[0];
    assert_eq!(*dest, Dest::Node(NodeId(0)));
    // cum 1 (0 held); bits for 2..=5: 2 no, 3 yes, 4 no, 5 yes -> 0b1010.
    assert_eq!(
        *m,
        wire::Message::Ack {
            cum: 1,
            upto: 5,
            bitmap: &[0b1010]
        }
    );
    // Only 0 is delivered so far; the repairs of 1, 2 and 4 release the rest in order.
    for (s, p) in [(1, b"b"), (2, b"c"), (4, b"e")] {
        r.handle_packet(Time::ZERO, NodeId(0), &data(s, 0, wire::NO_ACKER, p));
    }
    let seqs: Vec<u64> = std::iter::from_fn(|| r.poll_event())
        .filter_map(|e| match e {
            Event::Delivered { seq, .. } => Some(seq),
            _ => None,
        })
        .collect();
    assert_eq!(seqs, vec![0, 1, 2, 3, 4, 5]);
}

#[test]
fn sender_repairs_what_an_ack_reports_missing_and_names_the_reporter() {
    let mut s = sender_holding(vec![NodeId(1), NodeId(2)], 6);
    let _ = decode_all(&mut s);
    // Receiver 2 (named by message 5) holds 0, 3, 5.
    let t = Time::from_micros(200);
    s.handle_packet(t, NodeId(2), &ack(1, 5, &[0b1010]));
    let out = decode_all(&mut s);
    let repairs: Vec<(u64, u32, bool)> = out
        .iter()
        .map(|(_, rtx, m)| match m {
            wire::Message::Data { seq, acker, .. } => (*seq, *acker, *rtx),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        repairs,
        vec![
            (1, wire::NO_ACKER, true),
            (2, wire::NO_ACKER, true),
            (4, 2, true)
        ]
    );
    // A second report of the same holes within a timeout does not repeat the repairs.
    s.handle_packet(t, NodeId(2), &ack(1, 5, &[0b1010]));
    assert!(decode_all(&mut s).is_empty());
    // Receiver 1 reports everything through 4: messages 0..=4 are finished only when
    // receiver 2 also has them.
    s.handle_packet(t, NodeId(1), &ack(5, 4, &[]));
    let done: Vec<u64> = std::iter::from_fn(|| s.poll_event())
        .filter_map(|e| match e {
            Event::MessageDone { seq, .. } => Some(seq),
            _ => None,
        })
        .collect();
    assert_eq!(done, vec![0]);
    // ACKs claiming messages never sent are refused.
    s.handle_packet(t, NodeId(1), &ack(50, 49, &[]));
    assert_eq!(s.stats().malformed, 1);
}

#[test]
fn lost_ack_is_recovered_by_a_poll() {
    let mut s = sender_holding(vec![NodeId(1)], 1);
    let _ = decode_all(&mut s);
    assert_eq!(s.poll_timeout(), Some(Time::from_millis(1)));
    s.handle_timeout(Time::from_millis(1));
    let out = decode_all(&mut s);
    assert_eq!(
        out,
        vec![(
            Dest::Node(NodeId(1)),
            false,
            wire::Message::Poll { upto: 0, low: 0 }
        )]
    );
    s.handle_packet(Time::from_millis(1), NodeId(1), &ack(1, 0, &[]));
    s.close(Time::from_millis(1));
    let ev: Vec<Event> = std::iter::from_fn(|| s.poll_event()).collect();
    assert!(matches!(ev.last(), Some(Event::Completed)));
    assert_eq!(s.poll_timeout(), None);
}

#[test]
fn receiver_skips_what_the_sender_gave_up_on() {
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(1), 8));
    r.handle_packet(Time::ZERO, NodeId(0), &data(3, 0, 9, b"d"));
    r.handle_packet(Time::ZERO, NodeId(0), &data(4, 2, 9, b"e"));
    let ev: Vec<Event> = std::iter::from_fn(|| r.poll_event()).collect();
    assert_eq!(
        ev,
        vec![
            Event::LossDetected { seq: 0 },
            Event::LossDetected { seq: 1 },
        ]
    );
    assert_eq!(r.next_expected(), 2);
    // An absurd skip is refused.
    r.handle_packet(Time::ZERO, NodeId(0), &data(u64::MAX, u64::MAX, 9, b"z"));
    assert_eq!(r.stats().malformed, 1);
    assert_eq!(r.next_expected(), 2);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    /// Any seed, group size, window and loss rate: exactly-once in-order delivery to everyone,
    /// every message finished, then Completed.
    #[test]
    fn reliable_for_random_scenarios(
        seed in proptest::prelude::any::<u64>(),
        receivers in 1usize..12,
        window in 1usize..24,
        drop in 0.0f64..0.3,
    ) {
        let mut setup = Setup::new(receivers, window, drop);
        setup.base.seed = seed;
        setup.base.messages = 40;
        let h = setup.run();
        setup.base.assert_reliable(&h, InOrder, &format!("seed {seed}"));
    }
}

#[test]
fn removing_a_silent_receiver_lets_the_others_finish() {
    let timeout = Duration::from_micros(100);
    let cfg = SenderConfig::new(NodeId(0), GROUP, vec![NodeId(1), NodeId(7)], 4, timeout);
    // Node 7 does not exist; with no limit the sender re-polls it forever.
    let mut h = run_with_one_listener(
        Box::new(Sender::new(cfg)),
        [Box::new(Receiver::new(ReceiverConfig::new(NodeId(1), 4))) as Box<dyn Agent>],
        9,
        Time::from_millis(5),
    );
    assert_removal_unblocks(&mut h, NodeId(7));
    let done = h.done(0);
    assert_eq!(done, (0..9).map(|s| (s, false)).collect::<Vec<_>>());
    let delivered = h.events[1]
        .iter()
        .filter(|(_, e)| matches!(e, Event::Delivered { .. }))
        .count();
    assert_eq!(delivered, 9);
}
