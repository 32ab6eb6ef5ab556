use super::*;
use crate::testkit::DoneOrder::InOrder;
use crate::testkit::TEST_GROUP as GROUP;
use crate::testkit::*;
use crate::SendError;
use crate::SenderAgent;
use rmcast_wire::Envelope;
use rmcast_wire::Packet;

struct Setup {
    base: GroupTest,
    mode: RetransmitMode,
    ack_delay_max: Duration,
    limit: Option<u32>,
}

impl Setup {
    fn new(receivers: usize, drop: f64) -> Self {
        Setup {
            base: GroupTest::lan(receivers as u32, drop),
            mode: RetransmitMode::Multicast,
            ack_delay_max: Duration::ZERO,
            limit: None,
        }
    }

    /// Run to completion; returns the harness with the sender at node 0.
    fn run(&self) -> Harness {
        self.base.run(
            |receivers| {
                let mut cfg =
                    SenderConfig::new(NodeId(0), GROUP, receivers, Duration::from_millis(2));
                cfg.mode = self.mode;
                cfg.max_retransmissions = self.limit;
                cfg.queue_limit = usize::MAX;
                Box::new(Sender::new(cfg))
            },
            |r| {
                let mut rc = ReceiverConfig::new(r);
                rc.ack_delay_max = self.ack_delay_max;
                Box::new(Receiver::new(rc, AgentRng::derive(self.base.seed, r, 0)))
            },
        )
    }
}

#[test]
fn end_to_end_matrix_receivers_by_drop_rate() {
    for receivers in [1, 5, 50] {
        for drop in [0.0, 0.05, 0.20] {
            let setup = Setup::new(receivers, drop);
            let h = setup.run();
            let what = format!("saw {receivers} rx, drop {drop}");
            let s = setup.base.assert_repairs_follow_loss(&h, InOrder, &what);
            println!(
                "saw e2e: {receivers:>2} receivers, drop {drop:.2}: {} msgs, {} retransmissions, {} copies dropped",
                setup.base.messages, s.repairs_sent, h.stats.copies_dropped
            );
        }
    }
}

#[test]
fn unicast_retransmission_mode_is_reliable_too() {
    for drop in [0.0, 0.2] {
        let mut setup = Setup::new(5, drop);
        setup.mode = RetransmitMode::Unicast;
        let h = setup.run();
        setup.base.assert_reliable(&h, InOrder, "saw");
    }
}

#[test]
fn random_ack_delay_still_reliable_and_spreads_acks() {
    let mut setup = Setup::new(10, 0.05);
    setup.ack_delay_max = Duration::from_micros(500);
    let h = setup.run();
    setup.base.assert_reliable(&h, InOrder, "saw");
}

#[test]
fn lossless_timing_is_one_round_trip_per_message() {
    let setup = Setup::new(3, 0.0);
    let h = setup.run();
    // Each message takes exactly data delay + ACK delay = 200 µs.
    for d in h.done_records(0) {
        assert_eq!(d.done_at - d.sent_at, Duration::from_micros(200));
        assert_eq!(d.transmissions, 1);
    }
    assert_eq!(h.now(), Time::from_micros(200 * setup.base.messages));
}

fn run_with_unreachable_receiver(rule: LimitRule) -> Harness {
    // Receiver node 2 is never added to the group, so it never sees data: every message
    // exhausts its retransmissions. Node 1 still gets everything.
    let mut cfg = two_receiver_config();
    cfg.max_retransmissions = Some(3);
    cfg.limit_rule = rule;
    run_with_one_listener(
        Box::new(Sender::new(cfg)),
        two_receivers(),
        4,
        Time::from_secs(10),
    )
}

fn two_receiver_config() -> SenderConfig {
    let timeout = Duration::from_millis(1);
    SenderConfig::new(NodeId(0), GROUP, vec![NodeId(1), NodeId(2)], timeout)
}

fn two_receivers() -> impl Iterator<Item = Box<dyn Agent>> {
    (1..=2).map(|r| -> Box<dyn Agent> {
        Box::new(Receiver::new(
            ReceiverConfig::new(NodeId(r)),
            AgentRng::from_seed(u64::from(r)),
        ))
    })
}

#[test]
fn retransmission_limit_records_failure_and_continues() {
    // Thesis rule (count <= max): 1 original + 4 retransmissions; strict rule: 1 + 3.
    for (rule, transmissions) in [(LimitRule::NotExceeded, 5), (LimitRule::AtMost, 4)] {
        let h = run_with_unreachable_receiver(rule);
        let done: Vec<(u32, bool)> = h
            .done_records(0)
            .iter()
            .map(|d| (d.transmissions, d.failed))
            .collect();
        assert_eq!(done, vec![(transmissions, true); 4], "{rule:?}");
        assert!(matches!(h.events[0].last(), Some((_, Event::Completed))));
        assert_eq!(h.agent(NodeId(0)).unwrap().stats().failed, 4);
        assert_eq!(h.delivered(1).len(), 4);
    }
}

#[test]
fn formula_timeout_is_computed_for_the_receiver_count() {
    let receivers: Vec<NodeId> = (1..=20).map(NodeId).collect();
    let mut cfg = SenderConfig::new(NodeId(0), GROUP, receivers, Duration::from_secs(99));
    cfg.timeout_rule = Some(TimeoutRule::ethernet(TimeoutMethod::Formula {
        increment_bits: 45_000,
    }));
    // d + a·r + increment = 12,144 + 20·512 + 45,000 = 67,384 bit times of 100 ns.
    assert_eq!(
        Sender::new(cfg.clone()).timeout(),
        Duration::from_nanos(6_738_400)
    );
    cfg.timeout_rule = Some(TimeoutRule::ethernet(TimeoutMethod::Constant {
        bits: 20_000,
    }));
    assert_eq!(Sender::new(cfg.clone()).timeout(), Duration::from_millis(2));
    cfg.timeout_rule = None;
    assert_eq!(Sender::new(cfg).timeout(), Duration::from_secs(99));
}

#[test]
fn formula_timeout_drives_retransmission_timing() {
    // One receiver that never hears anything: retransmissions are exactly one formula
    // timeout apart (d + a + increment = 12,144 + 512 + 1,000 bit times = 1.3656 ms).
    let mut h = Harness::new(Duration::from_micros(10), 0.0, 1);
    let mut cfg = SenderConfig::new(NodeId(0), GROUP, vec![NodeId(1)], Duration::from_secs(1));
    cfg.timeout_rule = Some(TimeoutRule::ethernet(TimeoutMethod::Formula {
        increment_bits: 1_000,
    }));
    cfg.max_retransmissions = Some(1);
    let s = h.add(Box::new(Sender::new(cfg)));
    h.add(Box::new(Receiver::new(
        ReceiverConfig::new(NodeId(1)),
        AgentRng::from_seed(1),
    )));
    h.set_group(GROUP, vec![]);
    h.with_sender(s, |a, now| {
        a.send(now, message(0)).unwrap();
        a.close(now);
    });
    h.run_until(Time::from_secs(1));
    let d = h.done_records(0)[0];
    let done = (d.done_at, d.transmissions, d.failed);
    // Timeouts at 1, 2 and 3 timeouts: retransmit (count 0 <= 1), retransmit (1 <= 1), fail.
    assert_eq!(done, (Time::from_nanos(3 * 1_365_600), 3, true));
}

#[test]
fn receiver_reacks_duplicates_without_delivering() {
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(5)), AgentRng::from_seed(0));
    let env = Envelope {
        session: 0,
        source: 0,
        flags: 0,
    };
    let d0 = Packet::to_vec(
        env,
        &Message::Saw(wire::Message::Data {
            seq: 0,
            payload: b"a",
        }),
    )
    .unwrap();
    r.handle_packet(Time::ZERO, NodeId(0), &d0);
    r.handle_packet(Time::ZERO, NodeId(0), &d0);
    let acks: Vec<_> = std::iter::from_fn(|| r.poll_transmit()).collect();
    assert_eq!(acks.len(), 2);
    for a in &acks {
        assert_eq!(a.dest, Dest::Node(NodeId(0)));
        let p = Packet::decode(&a.payload).unwrap();
        assert_eq!(p.message, Message::Saw(wire::Message::Ack { seq: 0 }));
        assert_eq!(p.header.source, 5);
    }
    let delivered: Vec<_> = std::iter::from_fn(|| r.poll_event()).collect();
    assert_eq!(delivered.len(), 1);
    assert_eq!(r.stats().duplicates, 1);
}

#[test]
fn malformed_and_foreign_packets_are_counted_not_fatal() {
    let mut s = Sender::new(SenderConfig::new(
        NodeId(0),
        GROUP,
        vec![NodeId(1)],
        Duration::from_millis(1),
    ));
    s.send(Time::ZERO, Bytes::from_static(b"x")).unwrap();
    let _ = s.poll_transmit();
    s.handle_packet(Time::ZERO, NodeId(1), b"garbage");
    s.handle_packet(Time::ZERO, NodeId(1), &[]);
    let other = Envelope {
        session: 9,
        source: 1,
        flags: 0,
    };
    let ack = Packet::to_vec(other, &Message::Saw(wire::Message::Ack { seq: 0 })).unwrap();
    s.handle_packet(Time::ZERO, NodeId(1), &ack);
    // An ACK from a node outside the group does not count.
    let env = Envelope::default();
    let ack = Packet::to_vec(env, &Message::Saw(wire::Message::Ack { seq: 0 })).unwrap();
    s.handle_packet(Time::ZERO, NodeId(7), &ack);
    assert_eq!(s.stats().malformed, 2);
    assert_eq!(s.stats().ignored, 2);
    assert_eq!(s.backlog(), 1);
    s.handle_packet(Time::ZERO, NodeId(1), &ack);
    assert_eq!(s.backlog(), 0);
    assert!(matches!(
        s.send(Time::ZERO, Bytes::from(vec![0; MAX_MESSAGE + 1])),
        Err(SendError::TooLarge { .. })
    ));
}

#[test]
fn runs_are_deterministic() {
    let mut setup = Setup::new(5, 0.2);
    setup.ack_delay_max = Duration::from_micros(50);
    assert_setup_deterministic(&mut setup, |s| &mut s.base, Setup::run, 42, 43);
}

#[test]
fn removing_a_silent_receiver_lets_the_others_finish() {
    // Node 2 is in the sender's list but never hears anything: without eviction the sender
    // retransmits forever.
    let mut h = run_with_one_listener(
        Box::new(Sender::new(two_receiver_config())),
        two_receivers(),
        3,
        Time::from_millis(5),
    );
    assert_removal_unblocks(&mut h, NodeId(2));
    assert_eq!(h.delivered(1).len(), 3);
}

/// Digest §4.6: the error experiments' SAW timeout at r = 20 with SAWrand 22,000 is
/// d + r·a + i + 45,000 = 89,384 bit times.
#[test]
fn thesis_params_build_consistent_configs() {
    let p = ThesisParams {
        timing: TimeoutRule {
            rand_bits: 22_000,
            ..TimeoutRule::ethernet(TimeoutMethod::Formula {
                increment_bits: 45_000,
            })
        },
        mode: RetransmitMode::Multicast,
        max_retransmissions: Some(10),
    };
    let rx: Vec<NodeId> = (1..=20).map(NodeId).collect();
    let s = Sender::new(p.sender_config(NodeId(0), GROUP, rx));
    assert_eq!(s.timeout(), Duration::from_nanos(89_384 * 100));
    assert_eq!(
        p.receiver_config(NodeId(1)).ack_delay_max,
        Duration::from_micros(2_200)
    );
}
