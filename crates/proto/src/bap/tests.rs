use super::*;
use crate::testkit::DoneOrder::InOrder;
use crate::testkit::TEST_GROUP as GROUP;
use crate::testkit::*;
use crate::SendError;
use crate::SenderAgent;
use proptest::prelude::*;
use rmcast_wire::Packet;
use rmcast_wire::{Envelope, FLAG_RETRANSMISSION};

struct Setup {
    base: GroupTest,
    window: u16,
    ack_delay_max: Duration,
    limit: Option<u32>,
}

impl Setup {
    fn new(receivers: usize, window: u16, drop: f64) -> Self {
        Setup {
            base: GroupTest::lan(receivers as u32, drop),
            window,
            ack_delay_max: Duration::ZERO,
            limit: None,
        }
    }

    fn run(&self) -> Harness {
        let ack_timeout = Duration::from_millis(1);
        // Longer than a round trip plus the receivers' ACK-delay timeout and random delay,
        // as the thesis's formula makes it.
        let timeout = Duration::from_micros(300) + ack_timeout + self.ack_delay_max;
        self.base.run(
            |receivers| {
                let mut cfg = SenderConfig::new(NodeId(0), GROUP, receivers, self.window, timeout);
                cfg.max_retransmissions = self.limit;
                cfg.queue_limit = usize::MAX;
                Box::new(Sender::new(cfg))
            },
            |r| {
                let mut rc = ReceiverConfig::new(r, self.window, ack_timeout);
                rc.ack_delay_max = self.ack_delay_max;
                Box::new(Receiver::new(rc, AgentRng::derive(self.base.seed, r, 0)))
            },
        )
    }
}

#[test]
fn end_to_end_matrix_receivers_windows_drop_rates() {
    for receivers in [1, 5, 30] {
        for window in [1, 5, 10] {
            for drop in [0.0, 0.05, 0.20] {
                let setup = Setup::new(receivers, window, drop);
                let h = setup.run();
                let what = format!("{receivers} rx, n={window}, drop {drop}");
                let s = setup.base.assert_repairs_follow_loss(&h, InOrder, &what);
                println!(
                    "bap e2e: {what}: {} msgs, {} retransmissions, {} timeouts, {} copies dropped",
                    setup.base.messages, s.repairs_sent, s.timeouts, h.stats.copies_dropped
                );
            }
        }
    }
}

#[test]
fn random_ack_delay_is_reliable() {
    for drop in [0.0, 0.05] {
        let mut setup = Setup::new(10, 5, drop);
        setup.ack_delay_max = Duration::from_micros(500);
        let h = setup.run();
        setup.base.assert_reliable(&h, InOrder, "random ack delay");
    }
}

#[test]
fn lossless_blocks_take_one_round_trip_and_share_times() {
    // 3 receivers, window 5, 20 messages: four blocks of five, each sent together and
    // acknowledged together (the receivers' counters reach the window), 200 µs apiece.
    let mut setup = Setup::new(3, 5, 0.0);
    setup.base.messages = 20;
    let h = setup.run();
    setup.base.assert_reliable(&h, InOrder, "blocks");
    let done: Vec<(u64, Time, Time, u32)> = h
        .done_records(0)
        .iter()
        .map(|d| (d.seq, d.sent_at, d.done_at, d.transmissions))
        .collect();
    for (seq, sent, done, tx) in done {
        let block = seq / 5;
        assert_eq!(sent, Time::from_micros(200 * block), "message {seq}");
        assert_eq!(done, Time::from_micros(200 * (block + 1)), "message {seq}");
        assert_eq!(tx, 1);
    }
    // One ACK per receiver per block, plus three status ACKs from the ACK-delay timer once
    // the transfer is over (idle_ack_limit = 3).
    for r in 1..=3 {
        assert_eq!(h.agent(NodeId(r)).unwrap().stats().control_sent, 4 + 3);
    }
}

#[test]
fn runs_are_deterministic() {
    let mut setup = Setup::new(5, 4, 0.2);
    setup.ack_delay_max = Duration::from_micros(50);
    assert_setup_deterministic(&mut setup, |s| &mut s.base, Setup::run, 42, 43);
}

#[test]
fn retransmission_limit_records_failure_and_continues() {
    // Node 2 is a configured receiver that never hears the group: every message reaches the
    // limit. Thesis rule, max 2: 1 original + 3 retransmissions, then failure.
    let mut cfg = SenderConfig::new(NodeId(0), GROUP, two_receivers(), 3, ms(2));
    cfg.max_retransmissions = Some(2);
    let h = run_with_one_listener(
        Box::new(Sender::new(cfg)),
        receivers(3, ms(1)),
        7,
        Time::from_secs(10),
    );
    let done = h.done_transmissions(0);
    assert_eq!(done, (0..7).map(|s| (s, 4, true)).collect::<Vec<_>>());
    assert!(h.completed(0));
    assert_eq!(h.agent(NodeId(0)).unwrap().stats().failed, 7);
    // The reachable receiver still got everything, once, in order.
    assert_eq!(h.delivered_seqs(1), (0..7).collect::<Vec<_>>());
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn two_receivers() -> Vec<NodeId> {
    vec![NodeId(1), NodeId(2)]
}

/// Receivers at nodes 1 and 2 with window `n` and ACK-delay timeout `ack`.
fn receivers(n: u16, ack: Duration) -> impl Iterator<Item = Box<dyn Agent>> {
    (1..=2).map(move |r| -> Box<dyn Agent> {
        Box::new(Receiver::new(
            ReceiverConfig::new(NodeId(r), n, ack),
            AgentRng::from_seed(u64::from(r)),
        ))
    })
}

// ---- unit tests of the tricky rules ----

#[test]
fn rank_wraps_modulo_two_n() {
    // n = 3, sequence numbers 0..6.
    assert_eq!(rank(4, 4, 6), 0);
    assert_eq!(rank(5, 4, 6), 1);
    assert_eq!(rank(0, 4, 6), 2);
    assert_eq!(rank(1, 4, 6), 3);
    assert_eq!(rank(3, 4, 6), 5);
}

#[test]
fn minimum_rank_rule_with_wraparound() {
    // Window first = 4, size 3 (messages 4, 5, 0 modulo 6).
    assert_eq!(
        all_acked_rank(4, 3, 6, [Some(0), Some(5), Some(4)]),
        Some(0)
    );
    assert_eq!(
        all_acked_rank(4, 3, 6, [Some(0), Some(5), Some(0)]),
        Some(1)
    );
    assert_eq!(all_acked_rank(4, 3, 6, [Some(0), Some(0)]), Some(2));
    // A receiver with no valid slot holds everything back.
    assert_eq!(all_acked_rank(4, 3, 6, [Some(0), None]), None);
    // A slot outside the window (sequence 1 has rank 3) is not an acknowledgment in it.
    assert_eq!(all_acked_rank(4, 3, 6, [Some(0), Some(1)]), None);
}

proptest! {
    /// The minimum-rank rule over sequence numbers modulo 2n agrees with the minimum over
    /// absolute message numbers, wherever the window sits.
    #[test]
    fn minimum_rank_matches_absolute_model(
        n in 1u16..40,
        base in 0u64..10_000,
        size_seed in any::<u16>(),
        acked in proptest::collection::vec(any::<u16>(), 1..12),
    ) {
        let m = 2 * n;
        let size = 1 + size_seed % n;
        let abs: Vec<u64> = acked.iter().map(|a| base + u64::from(a % size)).collect();
        let slots = abs.iter().map(|a| Some((a % u64::from(m)) as u16));
        let first = (base % u64::from(m)) as u16;
        let got = all_acked_rank(first, size, m, slots);
        let want = abs.iter().min().map(|a| (a - base) as u16);
        prop_assert_eq!(got, want);
    }
}

fn data(seq: u16, first: u16, payload: &[u8], retransmission: bool) -> Vec<u8> {
    let env = Envelope {
        session: 0,
        source: 0,
        flags: if retransmission {
            FLAG_RETRANSMISSION
        } else {
            0
        },
    };
    Packet::to_vec(
        env,
        &Message::Bap(wire::Message::Data {
            seq,
            first,
            payload,
        }),
    )
    .unwrap()
}

fn ack(seq: u16) -> Vec<u8> {
    Packet::to_vec(
        Envelope::default(),
        &Message::Bap(wire::Message::Ack { seq }),
    )
    .unwrap()
}

/// (seq, first, retransmission) of every DATA the agent queued.
fn sent_data(a: &mut dyn Agent) -> Vec<(u16, u16, bool)> {
    std::iter::from_fn(|| a.poll_transmit())
        .map(|t| {
            let p = Packet::decode(&t.payload).unwrap();
            match p.message {
                Message::Bap(wire::Message::Data { seq, first, .. }) => {
                    (seq, first, p.header.flags & FLAG_RETRANSMISSION != 0)
                }
                other => panic!("not data: {other:?}"),
            }
        })
        .collect()
}

fn acks_sent(a: &mut dyn Agent) -> Vec<u16> {
    std::iter::from_fn(|| a.poll_transmit())
        .map(|t| match Packet::decode(&t.payload).unwrap().message {
            Message::Bap(wire::Message::Ack { seq }) => seq,
            other => panic!("not an ack: {other:?}"),
        })
        .collect()
}

fn done_seqs(a: &mut dyn Agent) -> Vec<u64> {
    std::iter::from_fn(|| a.poll_event())
        .filter_map(|e| match e {
            Event::MessageDone { seq, .. } => Some(seq),
            _ => None,
        })
        .collect()
}

#[test]
fn sender_window_acks_and_go_back_n() {
    let rx = vec![NodeId(1), NodeId(2), NodeId(3)];
    let timeout = Duration::from_millis(1);
    let mut s = Sender::new(SenderConfig::new(NodeId(0), GROUP, rx, 3, timeout));
    let t0 = Time::ZERO;
    for i in 0..8 {
        s.send(t0, message(i)).unwrap();
    }
    // Window 3: messages 0, 1, 2 go out at once, sequence numbers 0, 1, 2 (modulo 6).
    assert_eq!(
        sent_data(&mut s),
        vec![(0, 0, false), (1, 0, false), (2, 0, false)]
    );
    assert_eq!(s.poll_timeout(), Some(t0 + timeout));
    // Minimum-rank rule: receivers at 2, 0, 1 -> only message 0 is done.
    let t1 = Time::from_micros(100);
    s.handle_packet(t1, NodeId(1), &ack(2));
    s.handle_packet(t1, NodeId(2), &ack(0));
    assert!(done_seqs(&mut s).is_empty());
    s.handle_packet(t1, NodeId(3), &ack(1));
    assert_eq!(done_seqs(&mut s), vec![0]);
    // The window advanced by one and refilled with message 3 (sequence 3, first = 1); the
    // packet timer restarted with that send.
    assert_eq!(sent_data(&mut s), vec![(3, 1, false)]);
    assert_eq!(s.poll_timeout(), Some(t1 + timeout));
    // A repeated or stale ACK changes nothing.
    s.handle_packet(t1, NodeId(2), &ack(0));
    s.handle_packet(t1, NodeId(3), &ack(1));
    assert_eq!(s.stats().duplicates, 2);
    assert!(done_seqs(&mut s).is_empty());
    // Timeout: go-back-N resends the whole active window (messages 1, 2, 3), oldest first.
    let t2 = t1 + timeout;
    s.handle_timeout(t2);
    assert_eq!(
        sent_data(&mut s),
        vec![(1, 1, true), (2, 1, true), (3, 1, true)]
    );
    assert_eq!(s.poll_timeout(), Some(t2 + timeout));
    // Receivers 1 and 2 acknowledge through message 3; receiver 3's slot still says 1, so
    // the minimum rank finishes message 1 only, and message 4 goes out with first = 2.
    s.handle_packet(t2, NodeId(1), &ack(3));
    s.handle_packet(t2, NodeId(2), &ack(3));
    assert_eq!(done_seqs(&mut s), vec![1]);
    assert_eq!(sent_data(&mut s), vec![(4, 2, false)]);
    // Receiver 3 catches up: 2 and 3 are done; 5 and 6 go out, sequence numbers wrapping
    // to 5 and 0.
    s.handle_packet(t2, NodeId(3), &ack(3));
    assert_eq!(done_seqs(&mut s), vec![2, 3]);
    assert_eq!(sent_data(&mut s), vec![(5, 4, false), (0, 4, false)]);
    // ACK vector slots that pointed at finished messages were cleared: receiver 1's old
    // ACK (3) no longer counts, so two ACKs at 0 (message 6) are not enough.
    s.handle_packet(t2, NodeId(2), &ack(0));
    s.handle_packet(t2, NodeId(3), &ack(0));
    assert!(done_seqs(&mut s).is_empty());
    s.handle_packet(t2, NodeId(1), &ack(5));
    assert_eq!(done_seqs(&mut s), vec![4, 5]);
    let done: Vec<Event> = std::iter::from_fn(|| s.poll_event()).collect();
    assert!(done.is_empty());
}

#[test]
fn receiver_counts_to_the_window_then_acks() {
    let t = Duration::from_millis(1);
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(1), 3, t), AgentRng::from_seed(0));
    let t0 = Time::ZERO;
    r.handle_packet(t0, NodeId(0), &data(0, 0, b"a", false));
    r.handle_packet(t0, NodeId(0), &data(1, 0, b"b", false));
    assert!(acks_sent(&mut r).is_empty());
    r.handle_packet(t0, NodeId(0), &data(2, 0, b"c", false));
    assert_eq!(acks_sent(&mut r), vec![2], "counter reached the window");
    let delivered: Vec<u64> = std::iter::from_fn(|| r.poll_event())
        .filter_map(|e| match e {
            Event::Delivered { seq, .. } => Some(seq),
            _ => None,
        })
        .collect();
    assert_eq!(delivered, vec![0, 1, 2]);
}

#[test]
fn receiver_discards_out_of_order_without_ack() {
    let t = Duration::from_millis(1);
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(1), 3, t), AgentRng::from_seed(0));
    r.handle_packet(Time::ZERO, NodeId(0), &data(1, 0, b"b", false));
    r.handle_packet(Time::ZERO, NodeId(0), &data(2, 0, b"c", false));
    assert!(acks_sent(&mut r).is_empty());
    assert!(std::iter::from_fn(|| r.poll_event()).next().is_none());
    assert_eq!(r.stats().ignored, 2);
    // Nothing received in order yet: when the ACK-delay timer fires there is no status.
    r.handle_timeout(Time::from_millis(1));
    assert!(acks_sent(&mut r).is_empty());
    // The go-back-N retransmission then arrives in order.
    for (s, p) in [(0, b"a"), (1, b"b"), (2, b"c")] {
        r.handle_packet(Time::from_millis(2), NodeId(0), &data(s, 0, p, true));
    }
    assert_eq!(acks_sent(&mut r), vec![2]);
    assert_eq!(r.delivered(), 3);
}

#[test]
fn ack_delay_timer_is_reset_by_data_and_rearmed_after_firing() {
    let t = Duration::from_millis(1);
    let mut cfg = ReceiverConfig::new(NodeId(1), 5, t);
    cfg.idle_ack_limit = Some(3);
    let mut r = Receiver::new(cfg, AgentRng::from_seed(0));
    r.handle_packet(Time::ZERO, NodeId(0), &data(0, 0, b"a", false));
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(1)));
    // In-sequence data resets it.
    let t1 = Time::from_micros(400);
    r.handle_packet(t1, NodeId(0), &data(1, 0, b"b", false));
    assert_eq!(r.poll_timeout(), Some(t1 + t));
    assert!(acks_sent(&mut r).is_empty(), "counter 2 < window 5");
    // Fires: ACK of the current status, and the timer is armed again.
    let f1 = t1 + t;
    r.handle_timeout(f1);
    assert_eq!(acks_sent(&mut r), vec![1]);
    assert_eq!(r.poll_timeout(), Some(f1 + t));
    r.handle_timeout(f1 + t);
    assert_eq!(acks_sent(&mut r), vec![1]);
    r.handle_timeout(f1 + t * 2);
    assert_eq!(acks_sent(&mut r), vec![1]);
    // Three idle firings: it stops re-arming ...
    r.handle_timeout(f1 + t * 3);
    assert!(acks_sent(&mut r).is_empty());
    assert_eq!(r.poll_timeout(), None);
    // ... until DATA (even a discarded duplicate from a go-back-N) arrives again.
    let t2 = f1 + t * 5;
    r.handle_packet(t2, NodeId(0), &data(0, 0, b"a", true));
    assert_eq!(r.stats().duplicates, 1);
    assert_eq!(r.poll_timeout(), Some(t2 + t));
    r.handle_timeout(t2 + t);
    assert_eq!(acks_sent(&mut r), vec![1]);
}

#[test]
fn disarm_on_window_ack_stops_the_timer_until_the_next_data() {
    let t = Duration::from_millis(1);
    let mut cfg = ReceiverConfig::new(NodeId(1), 2, t);
    cfg.disarm_on_window_ack = true;
    let mut r = Receiver::new(cfg.clone(), AgentRng::from_seed(0));
    r.handle_packet(Time::ZERO, NodeId(0), &data(0, 0, b"a", false));
    assert_eq!(
        r.poll_timeout(),
        Some(Time::ZERO + t),
        "armed by in-sequence data"
    );
    r.handle_packet(Time::ZERO, NodeId(0), &data(1, 0, b"b", false));
    assert_eq!(acks_sent(&mut r), vec![1], "window reached");
    assert_eq!(r.poll_timeout(), None, "disarmed with the block ACK");
    // A duplicate (go-back-N after a lost ACK) arms it again, and it fires with the status.
    let t1 = Time::from_millis(5);
    r.handle_packet(t1, NodeId(0), &data(0, 0, b"a", true));
    assert_eq!(r.poll_timeout(), Some(t1 + t));
    r.handle_timeout(t1 + t);
    assert_eq!(acks_sent(&mut r), vec![1]);
    // Default: the timer keeps running after the block ACK.
    cfg.disarm_on_window_ack = false;
    let mut r = Receiver::new(cfg, AgentRng::from_seed(0));
    r.handle_packet(Time::ZERO, NodeId(0), &data(0, 0, b"a", false));
    r.handle_packet(Time::ZERO, NodeId(0), &data(1, 0, b"b", false));
    assert_eq!(acks_sent(&mut r), vec![1]);
    assert_eq!(r.poll_timeout(), Some(Time::ZERO + t));
}

#[test]
fn thesis_literal_rearm_forever() {
    let t = Duration::from_millis(1);
    let mut cfg = ReceiverConfig::new(NodeId(1), 5, t);
    cfg.idle_ack_limit = None;
    let mut r = Receiver::new(cfg, AgentRng::from_seed(0));
    r.handle_packet(Time::ZERO, NodeId(0), &data(0, 0, b"a", false));
    for k in 1..=50u32 {
        r.handle_timeout(Time::ZERO + t * k);
        assert_eq!(acks_sent(&mut r), vec![0], "firing {k}");
    }
    assert_eq!(r.poll_timeout(), Some(Time::ZERO + t * 51));
}

#[test]
fn random_ack_delay_holds_back_one_ack() {
    let t = Duration::from_millis(1);
    let mut cfg = ReceiverConfig::new(NodeId(1), 2, t);
    cfg.ack_delay_max = Duration::from_micros(600);
    let mut r = Receiver::new(cfg, AgentRng::from_seed(3));
    r.handle_packet(Time::ZERO, NodeId(0), &data(0, 0, b"a", false));
    r.handle_packet(Time::ZERO, NodeId(0), &data(1, 0, b"b", false));
    assert!(acks_sent(&mut r).is_empty());
    let due = r.poll_timeout().unwrap();
    assert!(due <= Time::from_micros(600));
    r.handle_timeout(due);
    assert_eq!(acks_sent(&mut r), vec![1]);
}

#[test]
fn receiver_skips_messages_the_sender_gave_up_on() {
    let t = Duration::from_millis(1);
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(1), 4, t), AgentRng::from_seed(0));
    // Expected 0, but the sender's window now starts at 2 (it gave up on 0 and 1).
    r.handle_packet(Time::ZERO, NodeId(0), &data(2, 2, b"c", false));
    let ev: Vec<Event> = std::iter::from_fn(|| r.poll_event()).collect();
    assert_eq!(
        ev,
        vec![
            Event::LossDetected { seq: 0 },
            Event::LossDetected { seq: 1 },
            Event::Delivered {
                seq: 2,
                data: Bytes::from_static(b"c")
            }
        ]
    );
    // A receiver that is ahead of `first` (it holds part of the window) does not skip.
    r.handle_packet(Time::ZERO, NodeId(0), &data(3, 2, b"d", false));
    r.handle_packet(Time::ZERO, NodeId(0), &data(2, 2, b"c", true));
    assert_eq!(r.delivered(), 4);
    assert_eq!(r.stats().duplicates, 1);
}

#[test]
fn formula_timeout_and_bad_input() {
    let rx: Vec<NodeId> = (1..=20).map(NodeId).collect();
    let mut cfg = SenderConfig::new(NodeId(0), GROUP, rx, 10, Duration::from_secs(9));
    let mut rule = TimeoutRule::ethernet(crate::saw::TimeoutMethod::Formula {
        increment_bits: 45_000,
    });
    rule.rand_bits = 22_000;
    cfg.timeout_rule = Some(rule);
    cfg.ack_delay_timeout_bits = 95_000;
    // 10·12,144 + 20·512 + 22,000 + 95,000 + 45,000 = 293,680 bit times.
    let mut s = Sender::new(cfg);
    assert_eq!(s.timeout(), Duration::from_nanos(29_368_000));
    // Garbage, out-of-range sequence numbers and strangers are counted, not fatal.
    s.send(Time::ZERO, Bytes::from_static(b"x")).unwrap();
    s.handle_packet(Time::ZERO, NodeId(1), b"junk");
    s.handle_packet(Time::ZERO, NodeId(1), &ack(20));
    s.handle_packet(Time::ZERO, NodeId(99), &ack(0));
    assert_eq!(s.stats().malformed, 2);
    assert_eq!(s.stats().ignored, 1);
    assert!(matches!(
        s.send(Time::ZERO, Bytes::from(vec![0; MAX_MESSAGE + 1])),
        Err(SendError::TooLarge { .. })
    ));
    let mut r = Receiver::new(
        ReceiverConfig::new(NodeId(1), 10, Duration::from_millis(1)),
        AgentRng::from_seed(0),
    );
    r.handle_packet(Time::ZERO, NodeId(0), &data(20, 0, b"x", false));
    r.handle_packet(Time::ZERO, NodeId(0), &data(0, 25, b"x", false));
    assert_eq!(r.stats().malformed, 2);
    assert_eq!(r.delivered(), 0);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    /// Any seed, group size, window, loss rate and ACK delay: exactly-once in-order delivery
    /// to everyone, every message finished, then Completed.
    #[test]
    fn reliable_for_random_scenarios(
        seed in any::<u64>(),
        receivers in 1usize..12,
        window in 1u16..12,
        drop in 0.0f64..0.3,
        delay_us in prop_oneof![Just(0u64), 1u64..400],
    ) {
        let mut setup = Setup::new(receivers, window, drop);
        setup.base.seed = seed;
        setup.base.messages = 40;
        setup.ack_delay_max = Duration::from_micros(delay_us);
        let h = setup.run();
        setup.base.assert_reliable(&h, InOrder, &format!("seed {seed}"));
    }
}

#[test]
fn removing_a_silent_receiver_lets_the_others_finish() {
    // Node 2 never hears the group: without eviction the sender goes back forever.
    let mut h = run_with_one_listener(
        Box::new(Sender::new(SenderConfig::new(
            NodeId(0),
            GROUP,
            two_receivers(),
            2,
            ms(1),
        ))),
        receivers(2, Duration::from_micros(500)),
        5,
        Time::from_millis(5),
    );
    assert_removal_unblocks(&mut h, NodeId(2));
    assert_eq!(h.delivered_seqs(1), (0..5).collect::<Vec<_>>());
}

/// The thesis's sample run header: `Recs=3 Data=1518 Ack=64 BAPWin=1 BAPPktT=115680
/// BAPAckT=95000 BAPrand=6000` (formula, increment 1000).
#[test]
fn thesis_params_build_consistent_configs() {
    let p = ThesisParams {
        window: 1,
        timing: TimeoutRule {
            rand_bits: 6_000,
            ..TimeoutRule::ethernet(crate::saw::TimeoutMethod::Formula {
                increment_bits: 1_000,
            })
        },
        ack_timeout_bits: 95_000,
        max_retransmissions: Some(20),
    };
    let rx: Vec<NodeId> = (1..=3).map(NodeId).collect();
    let s = Sender::new(p.sender_config(NodeId(0), GROUP, rx));
    assert_eq!(s.timeout(), Duration::from_nanos(115_680 * 100));
    let rc = p.receiver_config(NodeId(1));
    assert_eq!(rc.ack_timeout, Duration::from_micros(9_500));
    assert_eq!(rc.ack_delay_max, Duration::from_micros(600));
    assert_eq!(rc.window, 1);
}

#[test]
fn the_thesis_literal_timer_is_not_armed_by_out_of_sequence_data() {
    let t = Duration::from_millis(1);
    let mut cfg = ReceiverConfig::new(NodeId(1), 2, t);
    cfg.disarm_on_window_ack = true;
    cfg.arm_on_any_data = false;
    let mut r = Receiver::new(cfg, AgentRng::from_seed(0));
    r.handle_packet(Time::ZERO, NodeId(0), &data(0, 0, b"a", false));
    r.handle_packet(Time::ZERO, NodeId(0), &data(1, 0, b"b", false));
    assert_eq!(acks_sent(&mut r), vec![1]);
    assert_eq!(r.poll_timeout(), None);
    // The go-back-N after a lost block ACK: discarded, and the timer stays idle.
    r.handle_packet(Time::from_millis(5), NodeId(0), &data(0, 0, b"a", true));
    assert_eq!(r.stats().duplicates, 1);
    assert_eq!(r.poll_timeout(), None);
}

#[test]
fn a_timer_ack_that_keeps_the_counter_puts_the_next_block_ack_out_of_phase() {
    let t = Duration::from_millis(1);
    for (resets, expect) in [(true, vec![3]), (false, vec![2])] {
        let mut cfg = ReceiverConfig::new(NodeId(1), 3, t);
        cfg.timer_ack_resets_counter = resets;
        let mut r = Receiver::new(cfg, AgentRng::from_seed(0));
        r.handle_packet(Time::ZERO, NodeId(0), &data(0, 0, b"a", false));
        r.handle_timeout(Time::ZERO + t);
        assert_eq!(acks_sent(&mut r), vec![0]);
        // Three more in sequence: with the counter kept at 1 the window's ACK comes after two.
        for k in 1..=3u16 {
            r.handle_packet(Time::from_millis(2), NodeId(0), &data(k, 0, b"x", false));
        }
        assert_eq!(
            acks_sent(&mut r),
            expect,
            "timer ACK resets the counter: {resets}"
        );
    }
}

#[test]
fn without_skipping_a_receiver_waits_for_a_message_the_sender_gave_up_on() {
    let t = Duration::from_millis(1);
    for (skip, delivered) in [(true, 4), (false, 0)] {
        let mut cfg = ReceiverConfig::new(NodeId(1), 3, t);
        cfg.skip_to_first = skip;
        let mut r = Receiver::new(cfg, AgentRng::from_seed(0));
        // Messages 0 and 1 were given up on: the window starts at 2 (modulus 6). Skipping
        // counts them (application numbers stay absolute), then 2 and 3 are delivered.
        r.handle_packet(Time::ZERO, NodeId(0), &data(2, 2, b"c", false));
        r.handle_packet(Time::ZERO, NodeId(0), &data(3, 2, b"d", false));
        assert_eq!(r.delivered(), delivered, "skip {skip}");
    }
}
