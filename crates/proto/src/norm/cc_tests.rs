use super::*;

fn fb(flags: u8, rtt_ms: u64, rate: f64) -> Feedback {
    Feedback {
        flags,
        rtt: Duration::from_millis(rtt_ms),
        loss: 0.0,
        rate,
    }
}

fn sender() -> SenderCc {
    SenderCc::new(Config {
        initial_rate: 100_000,
        ..Config::default()
    })
}

fn at(ms: u64) -> Time {
    Time::from_millis(ms)
}

#[test]
fn slow_start_doubles_at_most_and_ends_with_the_first_feedback_that_saw_loss() {
    let mut s = sender();
    let rtt = Some(Duration::from_millis(10));
    s.on_feedback(at(10), 7, &fb(cc_flag::START, 10, 1e9), rtt);
    assert_eq!(s.clr(), Some(7));
    assert_eq!(s.rate(), 200_000);
    assert!(s.slow_start());
    s.on_feedback(at(20), 7, &fb(cc_flag::START, 10, 1e9), rtt);
    assert_eq!(s.rate(), 400_000);
    // Loss: the equation's rate, taken at once.
    s.on_feedback(at(30), 7, &fb(cc_flag::RTT, 10, 150_000.0), rtt);
    assert!(!s.slow_start());
    assert_eq!(s.rate(), 150_000);
}

#[test]
fn the_rate_follows_loss_down_at_once_and_up_by_a_segment_per_rtt_per_rtt() {
    let mut s = sender();
    let rtt = Some(Duration::from_millis(10));
    s.on_sent(1_000);
    s.on_feedback(at(0), 1, &fb(cc_flag::RTT, 10, 50_000.0), rtt);
    assert_eq!(s.rate(), 50_000);
    // More loss at the receiver: a lower rate.
    s.on_feedback(at(10), 1, &fb(cc_flag::RTT, 10, 20_000.0), rtt);
    assert_eq!(s.rate(), 20_000);
    // Less loss: up by 1,000 B · 0.01 s / (0.01 s)² = 100 kB/s per 10 ms at most.
    s.on_feedback(at(20), 1, &fb(cc_flag::RTT, 10, 1e7), rtt);
    assert_eq!(s.rate(), 120_000);
    s.on_feedback(at(25), 1, &fb(cc_flag::RTT, 10, 130_000.0), rtt);
    assert_eq!(s.rate(), 130_000);
}

#[test]
fn a_rate_reported_with_another_rtt_is_scaled_to_the_measured_one() {
    let mut s = sender();
    // Computed with the GRTT 100 ms; its RTT is 10 ms: ten times the rate.
    s.on_feedback(
        at(0),
        1,
        &fb(0, 100, 5_000.0),
        Some(Duration::from_millis(10)),
    );
    assert_eq!(s.rate(), 50_000);
}

#[test]
fn the_clr_moves_to_the_worse_receiver_and_back_when_it_recovers() {
    let mut s = sender();
    let rtt = Some(Duration::from_millis(10));
    s.on_feedback(at(0), 1, &fb(cc_flag::RTT, 10, 80_000.0), rtt);
    assert_eq!((s.clr(), s.plr()), (Some(1), None));
    // A better receiver changes nothing but the PLR.
    s.on_feedback(at(1), 2, &fb(cc_flag::RTT, 10, 90_000.0), rtt);
    assert_eq!((s.clr(), s.plr(), s.rate()), (Some(1), Some(2), 80_000));
    // A worse one becomes the CLR, the old CLR the PLR.
    s.on_feedback(at(2), 3, &fb(cc_flag::RTT, 10, 30_000.0), rtt);
    assert_eq!((s.clr(), s.plr(), s.rate()), (Some(3), Some(1), 30_000));
    // The CLR recovers above the PLR: the PLR limits now.
    s.on_feedback(at(3), 3, &fb(cc_flag::RTT, 10, 95_000.0), rtt);
    assert_eq!((s.clr(), s.plr()), (Some(1), Some(3)));
    // The probe lists both, with their flags and RTTs.
    let p = s.probe(Duration::from_millis(100));
    let flags: Vec<(u32, u8)> = p.nodes.iter().map(|n| (n.node, n.flags)).collect();
    assert_eq!(flags[0], (1, cc_flag::CLR | cc_flag::RTT));
    assert_eq!(flags[1], (3, cc_flag::PLR | cc_flag::RTT));
    assert!(flags.contains(&(2, cc_flag::RTT)));
    assert_eq!(
        s.probe_interval(Duration::from_millis(100)),
        Duration::from_millis(10)
    );
}

#[test]
fn a_silent_clr_is_dropped_and_the_rate_halved_within_its_bounds() {
    let mut s = SenderCc::new(Config {
        initial_rate: 100_000,
        max_rate: 60_000,
        min_rate: 10_000,
        ..Config::default()
    });
    assert_eq!(s.rate(), 60_000);
    s.on_feedback(at(0), 1, &fb(cc_flag::RTT, 10, 40_000.0), None);
    for _ in 0..=CLR_TIMEOUT_PROBES {
        s.probe(Duration::from_millis(10));
    }
    assert_eq!((s.clr(), s.rate()), (None, 20_000));
    s.on_feedback(at(100), 1, &fb(cc_flag::RTT, 10, 1.0), None);
    assert_eq!(s.rate(), 10_000);
}

#[test]
fn a_receiver_s_rate_falls_with_its_loss_and_only_the_limiting_ones_answer_at_once() {
    let grtt = Duration::from_millis(50);
    let mut r = ReceiverCc::new(Config::default(), 5, grtt);
    let mut seq = 0;
    // 1,000-byte packets every ms, no loss: twice the 1 MB/s received, START.
    for ms in 0..400 {
        r.on_packet(at(ms), 1_000);
        r.on_data(at(ms), seq, 1_000);
        seq += 1;
    }
    assert!((r.rate() - 2e6).abs() < 0.1e6, "{}", r.rate());
    assert_eq!(r.flags(), cc_flag::START);
    // One loss in every 100 packets, then one in every 20: the rate falls.
    let (mut rates, mut ms) = (Vec::new(), 400);
    for every in [100, 20] {
        for _ in 0..2_000 {
            ms += 1;
            let t = at(ms);
            r.on_packet(t, 1_000);
            seq += if seq % every == 0 { 2 } else { 1 };
            r.on_data(t, seq, 1_000);
        }
        rates.push(r.rate());
    }
    assert!(rates[1] < rates[0], "{rates:?}");
    assert_eq!(r.flags() & cc_flag::START, 0);
    let clr = |node, flags| CcNode {
        node,
        flags,
        rtt: quant::quantize_rtt(0.01),
        rate: 0,
    };
    let back = |_: &mut ReceiverCc| Duration::from_millis(3);
    let fast = quant::quantize_rate(1e9);
    // Listed as CLR: at once, and the RTT is the listed one.
    let a = r.on_probe(
        grtt,
        fast,
        [clr(5, cc_flag::CLR | cc_flag::RTT)].into_iter(),
        back,
    );
    assert_eq!(a, Answer::Now);
    assert!((r.rtt().as_secs_f64() - 0.01).abs() < 0.001);
    // Another is the CLR: below the sender's rate, after the back-off; above it, not at all.
    let a = r.on_probe(grtt, fast, [clr(9, cc_flag::CLR)].into_iter(), back);
    assert_eq!(a, Answer::After(Duration::from_millis(3)));
    let slow = quant::quantize_rate(1.0);
    assert_eq!(
        r.on_probe(grtt, slow, [clr(9, cc_flag::CLR)].into_iter(), back),
        Answer::No
    );
    // No CLR: everyone answers; a heard rate not much above its own suppresses it.
    let a = r.on_probe(grtt, slow, core::iter::empty(), back);
    assert_eq!(a, Answer::After(Duration::from_millis(3)));
    r.on_heard(2.0 * r.rate());
    assert!(!r.suppressed());
    r.on_heard(1.05 * r.rate());
    assert!(r.suppressed());
}

#[test]
fn a_receiver_without_norm_cc_answers_a_cc_rate_as_a_plain_probe() {
    use crate::rng::AgentRng;
    use crate::{Agent, NodeId};
    use rmcast_wire::norm as w;
    let c = crate::norm::ReceiverConfig::new(NodeId(2), NodeId(1));
    let mut r = crate::norm::Receiver::new(c, AgentRng::from_seed(1));
    let msg = w::Message::CcRate {
        cc_sequence: 3,
        send_ts_us: 1_000,
        grtt: quant::quantize_rtt(0.001),
        rate: quant::quantize_rate(1e6),
        nodes: w::CcNodes::from_raw(&[]).unwrap(),
    };
    let env = crate::outbox::envelope(0, NodeId(1), 0);
    let dg = rmcast_wire::Packet::to_vec(env, &rmcast_wire::Message::Norm(msg)).unwrap();
    r.handle_packet(Time::ZERO, NodeId(1), &dg);
    let at = r.poll_timeout().expect("an answer is due");
    r.handle_timeout(at);
    let t = r.poll_transmit().expect("the answer");
    let p = rmcast_wire::Packet::decode(&t.payload).unwrap();
    assert!(matches!(
        p.message,
        rmcast_wire::Message::Norm(w::Message::Ack {
            ack_type: w::AckType::Cc,
            cc_sequence: 3,
            ..
        })
    ));
}
