use super::sender::SKey;
use super::*;
use crate::deploy::{FromParams, Layout};
use crate::rng::AgentRng;
use crate::testkit::{self, DoneOrder, GroupTest, Harness, TEST_GROUP};
use crate::GroupId;
use crate::{Agent, SenderAgent};
use bytes::Bytes;
use rmcast_wire::norm::AckType;
use rmcast_wire::Packet;
use rmcast_wire::{Message, FLAG_RETRANSMISSION};

/// The agents of a NORM test: a sender at node 0 acked by `receivers`, and a receiver each,
/// with `p`'s parameters; the sender is in the group (NACKs are multicast).
fn run(t: &GroupTest, p: &Params) -> Harness {
    let mut h = Harness::new(t.delay, t.drop, t.seed);
    let receivers = t.receiver_ids();
    let mut sc = SenderConfig::from_params(p, (NodeId(0), TEST_GROUP));
    sc.receivers = receivers.clone();
    h.add(Box::new(Sender::new(sc)));
    for &r in &receivers {
        let mut rc = ReceiverConfig::from_params(p, (r, NodeId(0)));
        rc.group = TEST_GROUP;
        let rng = AgentRng::derive(t.seed, r, 0);
        h.add(Box::new(Receiver::new(rc, rng)));
    }
    let mut members = vec![NodeId(0)];
    members.extend(receivers);
    h.set_group(TEST_GROUP, members);
    h.send_all(NodeId(0), t.messages);
    h.run_until(Time::from_secs(3600));
    h
}

fn lan(receivers: u32, drop: f64, messages: u64) -> GroupTest {
    GroupTest::new(receivers, drop, messages, 7, Duration::from_millis(1))
}

fn sender(h: &mut Harness) -> &mut Sender {
    h.agent_mut(NodeId(0))
        .and_then(|a| a.as_any_mut())
        .and_then(|a| a.downcast_mut::<Sender>())
        .expect("the sender")
}

#[test]
fn without_loss_every_receiver_gets_all_and_acks_the_watermark() {
    let t = lan(3, 0.0, 200);
    let h = run(&t, &Params::default());
    let s = t.assert_repairs_follow_loss(&h, DoneOrder::InOrder, "norm, no loss");
    assert_eq!(s.repairs_sent, 0);
}

#[test]
fn with_loss_parity_repairs_and_ack_based_completion() {
    let t = lan(8, 0.05, 300);
    let mut h = run(&t, &Params::default());
    t.assert_repairs_follow_loss(&h, DoneOrder::InOrder, "norm, 5 % loss");
    let s = sender(&mut h);
    assert!(s.parity_sent_total > 0, "repairs are parity");
    assert!(s.nacks_received > 0);
}

#[test]
fn heavy_loss_spends_the_parity_and_asks_for_segments() {
    // 30 % loss: some blocks need more than their 16 parity symbols.
    let t = lan(4, 0.3, 256);
    let p = Params {
        parity_max: 2,
        ..Params::default()
    };
    let h = run(&t, &p);
    t.assert_repairs_follow_loss(&h, DoneOrder::InOrder, "norm, 30 % loss, 2 parity");
}

#[test]
fn a_short_last_block_is_repaired_too() {
    let t = lan(5, 0.1, 64 * 3 + 7);
    let h = run(&t, &Params::default());
    t.assert_repairs_follow_loss(&h, DoneOrder::InOrder, "norm, short last block");
}

#[test]
fn same_seed_same_run() {
    let mut t = lan(5, 0.05, 150);
    testkit::assert_setup_deterministic(&mut t, |t| t, |t| run(t, &Params::default()), 3, 4);
}

#[test]
fn multicast_nacks_suppress_others() {
    // Every receiver misses the same segment (dropped at the sender's first send): one NACK
    // or few, not one per receiver.
    let t = lan(20, 0.0, 64);
    let mut h = Harness::new(t.delay, 0.0, 1);
    let receivers = t.receiver_ids();
    let p = Params::default();
    let mut sc = SenderConfig::from_params(&p, (NodeId(0), TEST_GROUP));
    sc.receivers = receivers.clone();
    h.add(Box::new(Sender::new(sc)));
    for &r in &receivers {
        let mut rc = ReceiverConfig::from_params(&p, (r, NodeId(0)));
        rc.group = TEST_GROUP;
        h.add(Box::new(Receiver::new(rc, AgentRng::derive(1, r, 0))));
    }
    let mut members = vec![NodeId(0)];
    members.extend(receivers);
    h.set_group(TEST_GROUP, members);
    // The first DATA of segment 10 is lost for everyone.
    h.drop_when(Box::new(|from: NodeId, _to: NodeId, payload: &[u8]| {
        let Ok(p) = Packet::decode(payload) else {
            return false;
        };
        let first_send = p.header.flags & FLAG_RETRANSMISSION == 0;
        from == NodeId(0)
            && first_send
            && matches!(
                p.message,
                Message::Norm(wire::Message::Data { symbol: 10, .. })
            )
    }));
    h.send_all(NodeId(0), t.messages);
    h.run_until(Time::from_secs(3600));
    t.assert_reliable(&h, DoneOrder::InOrder, "norm, one shared loss");
    let nacks = sender(&mut h).nacks_received;
    assert!(
        (1..=5).contains(&nacks),
        "{nacks} NACKs for one loss at 20 receivers"
    );
}

#[test]
fn rtt_quantization_round_trips_upward() {
    for us in [1u64, 20, 40, 500, 1_000, 10_000, 500_000, 3_000_000] {
        let d = Duration::from_micros(us);
        let back = unquantize_rtt(quantize_rtt(d));
        assert!(back >= d.mul_f64(0.999), "{d:?} -> {back:?}");
        assert!(
            back <= d.mul_f64(1.09) + Duration::from_micros(1),
            "{d:?} -> {back:?}"
        );
    }
    assert_eq!(quantize_rtt(Duration::ZERO), 0);
    assert_eq!(quantize_rtt(Duration::from_secs(5_000)), 255);
}

#[test]
fn backoff_stays_within_k_grtt_and_leans_late_for_large_groups() {
    let mut rng = AgentRng::from_seed(5);
    let max = Duration::from_millis(100);
    let draws: Vec<Duration> = (0..2_000)
        .map(|_| random_backoff(&mut rng, max, 1_000.0))
        .collect();
    assert!(draws.iter().all(|&d| d <= max));
    let early = draws.iter().filter(|&&d| d < max / 2).count();
    // P(t < max/2) = (e^(λ/2) − 1)/(e^λ − 1) ≈ 2 % for λ = ln 1000 + 1.
    assert!(
        (10..100).contains(&early),
        "{early} of 2000 in the first half"
    );
}

#[test]
fn grtt_follows_the_probe_answers() {
    let mut sc = SenderConfig::new(NodeId(0), TEST_GROUP);
    sc.receivers = vec![NodeId(1)];
    let mut s = Sender::new(sc);
    assert_eq!(s.grtt(), Duration::from_millis(500));
    for i in 0..12u64 {
        let t = Time::from_secs(i);
        s.handle_timeout(t);
        while s.poll_transmit().is_some() {}
        // The probe sent at `t` comes back 10 ms later, held 2 ms by the receiver.
        let ack = wire::Message::Ack {
            server: 0,
            grtt_response_us: (i * 1_000_000).max(1) + 2_000,
            ack_type: AckType::Cc,
            cc_sequence: i as u16 + 1,
            object: 0,
            block: 0,
            symbol: 0,
        };
        let d = testkit::datagram(1, false, &Message::Norm(ack));
        s.handle_packet(t + Duration::from_millis(10), NodeId(1), &d);
    }
    let g = s.grtt();
    // The round trip is 8 ms; from 0.5 s the estimate halves its distance each probe.
    assert!(g >= Duration::from_millis(8), "GRTT {g:?}");
    assert!(g < Duration::from_millis(9), "GRTT {g:?}");
}

#[test]
fn deploy_puts_the_source_in_the_group_and_acks_every_receiver() {
    let receivers = [NodeId(2), NodeId(3)];
    let layout = Layout::new(NodeId(1), GroupId(9), &receivers);
    let d = deploy(&layout, &Params::default());
    assert_eq!(d.source.receivers, receivers.to_vec());
    assert_eq!(
        d.groups,
        vec![(GroupId(9), vec![NodeId(1), NodeId(2), NodeId(3)])]
    );
    assert!(d.receivers.iter().all(|r| r.group == GroupId(9)));
    assert_eq!(d.source.fec.k, 64);
    assert_eq!(d.source.fec.parity_max, 16);
}

#[test]
fn a_nack_restarts_the_flush_rounds_and_the_repair_follows_the_grtt_of_now() {
    // Found on the testbed's tree (5 % loss on every link): the first NACK armed the
    // aggregation at (K + 1) × 0.5 s; the probes then brought the GRTT to a few ms, the flush
    // rounds (2·GRTT each) ran out first, and the sender ended with 0 repairs sent.
    let mut sc = SenderConfig::new(NodeId(0), TEST_GROUP);
    sc.receivers = vec![NodeId(1)];
    let mut s = Sender::new(sc);
    let t0 = Time::ZERO;
    s.handle_timeout(t0);
    for i in 0..64u8 {
        s.send(t0, Bytes::from(vec![i; 100])).unwrap();
    }
    s.close(t0);
    s.handle_timeout(t0);
    while s.poll_transmit().is_some() {}
    let nack = |first: u16| {
        let mut raw = Vec::new();
        let r = wire::Request {
            object: 0,
            block: 0,
            first,
            count: 1,
        };
        wire::Requests::encode(vec![r], &mut raw);
        raw
    };
    let deliver = |s: &mut Sender, at: Time, raw: &[u8]| {
        let requests = wire::Requests::from_raw(raw).unwrap();
        let m = wire::Message::Nack {
            server: 0,
            grtt_response_us: 0,
            requests,
        };
        s.handle_packet(
            at,
            NodeId(1),
            &testkit::datagram(1, false, &Message::Norm(m)),
        );
    };
    let first = Time::from_millis(100);
    deliver(&mut s, first, &nack(64));
    let k1 = Params::default().backoff_k + 1.0;
    let late = first + Duration::from_millis(500).mul_f64(k1);
    assert_eq!(s.timers.deadline(SKey::Repair), Some(late));
    s.rounds = 7;
    // The probe of t = 0 comes back after 8 ms: at the next probe the GRTT halves its way.
    let ack = wire::Message::Ack {
        server: 0,
        grtt_response_us: 1,
        ack_type: AckType::Cc,
        cc_sequence: 1,
        object: 0,
        block: 0,
        symbol: 0,
    };
    s.handle_packet(
        Time::from_millis(8),
        NodeId(1),
        &testkit::datagram(1, false, &Message::Norm(ack)),
    );
    s.handle_timeout(Time::from_secs(1));
    while s.poll_transmit().is_some() {}
    let g = s.grtt();
    assert!(g < Duration::from_millis(300), "GRTT {g:?}");
    let second = Time::from_millis(1100);
    deliver(&mut s, second, &nack(65));
    assert_eq!(s.rounds, 0, "a NACK restarts the flush rounds");
    let due = second + g.mul_f64(k1);
    assert!(due < late);
    assert_eq!(s.timers.deadline(SKey::Repair), Some(due));
}

#[test]
fn acking_nodes_are_every_receiver_up_to_one_ack_req_then_spread() {
    let few: Vec<NodeId> = (1..=10).map(NodeId).collect();
    assert_eq!(acking_nodes(&few), few);
    let many: Vec<NodeId> = (1..=1000).map(NodeId).collect();
    let named = acking_nodes(&many);
    assert_eq!(named.len(), wire::MAX_ACKING);
    assert_eq!(named[0], NodeId(1));
    assert!(named.windows(2).all(|w| w[0] < w[1]), "distinct, in order");
    // Spread: the last named one is in the last 1/MAX_ACKING of the group.
    assert!(named[wire::MAX_ACKING - 1].0 >= 1000 - 1000 / wire::MAX_ACKING as u32);
}

#[test]
fn deploy_raises_the_group_size_estimate_to_the_group() {
    let many: Vec<NodeId> = (1..=5000).map(NodeId).collect();
    let layout = Layout::new(NodeId(0), TEST_GROUP, &many);
    let d = deploy(&layout, &Params::default());
    assert_eq!(d.source.receivers.len(), wire::MAX_ACKING);
    assert!(d.receivers.iter().all(|r| r.gsize == 5000.0));
    let few = &many[..10];
    let d = deploy(&Layout::new(NodeId(0), TEST_GROUP, few), &Params::default());
    assert!(d.receivers.iter().all(|r| r.gsize == spec::GSIZE as f64));
    assert_eq!(d.source.receivers, few);
}
