#![allow(clippy::unwrap_used)]
use super::*;

const MS: Duration = Duration::from_millis(1);

fn at(ms: u64) -> Time {
    Time::ZERO + MS * ms as u32
}

#[test]
fn the_equation_gives_rfc_5348_s_rate() {
    // s = 1000 B, R = 100 ms, p = 1 %: f = sqrt(2p/3) + 12 sqrt(3p/8) p (1 + 32 p^2).
    let f = (0.02f64 / 3.0).sqrt() + 12.0 * (0.03f64 / 8.0).sqrt() * 0.01 * (1.0 + 32e-4);
    let x = tcp_rate(1000.0, 0.1, 0.01);
    assert!((x - 1000.0 / (0.1 * f)).abs() < 1e-6 * x);
    assert!((x - 112_300.0).abs() < 200.0, "{x}");
    assert!(tcp_rate(1000.0, 0.1, 0.0).is_infinite());
    assert!(tcp_rate(1000.0, 0.1, 0.02) < x);
    assert!(tcp_rate(1000.0, 0.2, 0.01) < x);
}

#[test]
fn the_loss_rate_for_a_rate_inverts_the_equation() {
    for p in [1e-5, 1e-3, 0.01, 0.1, 0.5] {
        let x = tcp_rate(1400.0, 0.05, p);
        let q = loss_rate_for(1400.0, 0.05, x);
        assert!((q - p).abs() < 1e-6 * p.max(1e-3), "{p} {q}");
    }
}

#[test]
fn one_loss_every_hundred_packets_is_a_loss_event_rate_of_one_percent() {
    let mut h = LossHistory::default();
    let mut first = 0;
    let mut seq = 0u64;
    for i in 0..2_000u64 {
        if seq % 100 == 50 {
            seq += 1; // lost
        }
        if h.on_packet(at(i * 10), seq, MS) {
            first += 1;
            h.seed(100);
        }
        seq += 1;
    }
    assert_eq!(first, 1);
    assert!(h.has_loss());
    let p = h.loss_rate();
    assert!((p - 0.01).abs() < 0.0005, "{p}");
}

#[test]
fn losses_within_one_rtt_are_one_event() {
    let mut h = LossHistory::default();
    h.on_packet(at(0), 0, 100 * MS);
    assert!(h.on_packet(at(1), 2, 100 * MS)); // first loss
    h.seed(1_000);
    // Three more gaps within 100 ms: the same event.
    h.on_packet(at(20), 4, 100 * MS);
    h.on_packet(at(40), 7, 100 * MS);
    h.on_packet(at(60), 9, 100 * MS);
    assert_eq!(h.closed, vec![1_000]);
    // A gap after the RTT opens a new event and closes the interval before it.
    // (from the first loss of the event, 1, to the first of the next, 10).
    h.on_packet(at(200), 11, 100 * MS);
    assert_eq!(h.closed, vec![9, 1_000]);
    // Late and duplicate packets change nothing.
    h.on_packet(at(201), 10, 100 * MS);
    h.on_packet(at(202), 3, 100 * MS);
    assert_eq!(h.closed, vec![9, 1_000]);
}

#[test]
fn eight_intervals_are_kept_and_the_open_one_counts_when_it_raises_the_mean() {
    let mut h = LossHistory::default();
    h.seed(10);
    h.closed = vec![10; 8];
    h.open = 1;
    assert!((h.loss_rate() - 0.1).abs() < 1e-12);
    h.open = 1_000;
    assert!(h.loss_rate() < 0.02);
    let mut seq = 0;
    h.next = Some(0);
    h.event_at = Some(at(0));
    for i in 1..20u64 {
        seq += 11;
        h.on_packet(at(i * 1_000), seq, MS);
    }
    assert_eq!(h.closed.len(), 8);
}

fn status(round: u32, rate: u64, echo: (u32, u64, u32), clr: u32) -> Status {
    Status {
        round,
        rate,
        suppress: u64::MAX,
        clr,
        r_max_us: 20_000,
        echo,
        flags: STATUS_SLOW_START,
    }
}

#[test]
fn a_receiver_measures_its_rtt_from_the_echo_and_reports_twice_its_receive_rate_before_loss() {
    let mut rng = AgentRng::from_seed(1);
    let mut r = Receiver::new(Config::default(), 7);
    r.on_status(at(0), &status(0, 1_000_000, (0, 0, 0), 0), &mut rng);
    // 1,000-byte packets every millisecond: 1 MB/s.
    for i in 0..200u64 {
        r.on_data(at(i), i, 1_000);
    }
    let due = r.poll_timeout().unwrap();
    assert!(due <= at(4 * 20 + 1), "{due:?}");
    let fb = r.poll_feedback(due.max(at(200))).unwrap();
    assert_eq!(fb.flags, 0);
    assert!((fb.recv_rate as f64 - 1e6).abs() < 0.05e6, "{fb:?}");
    assert_eq!(fb.rate, 2 * fb.recv_rate);
    // The sender echoes it 3 ms later after holding it 1 ms: RTT 2 ms.
    let back = Time::ZERO + Duration::from_micros(fb.ts_us) + 3 * MS;
    r.on_status(
        back,
        &status(0, 1_000_000, (7, fb.ts_us, 1_000), 0),
        &mut rng,
    );
    assert_eq!(r.rtt(), 2 * MS);
    // Once per round.
    assert!(r.poll_feedback(back + 100 * MS).is_none());
}

#[test]
fn a_receiver_suppresses_feedback_above_a_lower_echoed_rate_and_the_clr_always_reports() {
    let mut rng = AgentRng::from_seed(2);
    let mut r = Receiver::new(Config::default(), 7);
    r.on_status(at(0), &status(0, 1_000_000, (0, 0, 0), 0), &mut rng);
    for i in 0..200u64 {
        r.on_data(at(i), i, 1_000);
    }
    let mut st = status(0, 1_000_000, (0, 0, 0), 0);
    st.suppress = 500_000; // someone reported half of what this receiver could take
    r.on_status(at(200), &st, &mut rng);
    for i in 200..1_000u64 {
        r.on_data(at(i), i, 1_000);
    }
    assert!(r.poll_feedback(at(1_000)).is_none());
    // Named CLR: reports at once and every feedback interval, whatever others said.
    st.clr = 7;
    r.on_status(at(1_000), &st, &mut rng);
    assert!(r.is_clr());
    assert!(r.poll_feedback(at(1_000)).is_some());
    let next = r.poll_timeout().unwrap();
    assert!(next > at(1_000));
    assert!(r.poll_feedback(next).is_some());
}

fn fb(rate: u64, recv: u64, flags: u8, rtt_us: u32) -> Feedback {
    Feedback {
        round: 0,
        ts_us: 5,
        rtt_us,
        rate,
        recv_rate: recv,
        loss_ppm: 0,
        flags,
    }
}

#[test]
fn a_receive_rate_measured_before_data_stopped_does_not_stand() {
    let mut rng = AgentRng::from_seed(4);
    let mut r = Receiver::new(Config::default(), 7);
    r.on_status(at(0), &status(0, 1_000_000, (0, 0, 0), 7), &mut rng);
    for i in 0..200u64 {
        r.on_data(at(i), i, 1_000);
    }
    let fb = r.poll_feedback(at(200)).unwrap();
    assert!(fb.recv_rate > 900_000, "{fb:?}");
    // Nothing for a second: the CLR's next report says so.
    let fb = r.poll_feedback(at(1_200)).unwrap();
    assert!(fb.recv_rate < 100_000, "{fb:?}");
}

#[test]
fn slow_start_doubles_each_round_up_to_twice_the_lowest_receive_rate() {
    let cfg = Config {
        initial_rtt: 10 * MS,
        initial_rate: 100_000,
        ..Config::default()
    };
    let mut s = Sender::new(cfg);
    s.on_sent(at(0), 1_000);
    assert!(s.poll_status(at(0)).is_some());
    // No report of what arrives: the rate holds.
    let end = s.poll_timeout().unwrap();
    s.handle_timeout(end);
    assert_eq!(s.rate(), 100_000);
    s.on_feedback(end, 3, &fb(200_000, 100_000, FEEDBACK_RTT, 1_000));
    s.on_feedback(end, 4, &fb(300_000, 150_000, FEEDBACK_RTT, 2_000));
    let st = s.poll_status(end).unwrap();
    assert_eq!(st.suppress, 200_000);
    // Of two receivers with measured RTTs, neither the CLR when it spoke, the newer is echoed.
    assert_eq!(st.echo.0, 4);
    let end = s.poll_timeout().unwrap();
    s.handle_timeout(end);
    assert_eq!(s.rate(), 200_000);
    s.on_feedback(end, 3, &fb(1_000_000, 150_000, FEEDBACK_RTT, 1_000));
    let end = s.poll_timeout().unwrap();
    s.handle_timeout(end);
    assert_eq!(s.rate(), 300_000, "capped at twice the lowest receive rate");
    // The largest RTT was 2 ms; this round only 1 ms was reported: it decays by a tenth.
    assert_eq!(s.r_max(), Duration::from_micros(1_800));
    // Loss ends slow start at the reported rate.
    s.on_feedback(
        end,
        4,
        &fb(120_000, 150_000, FEEDBACK_LOSS | FEEDBACK_RTT, 2_000),
    );
    assert!(!s.slow_start());
    assert_eq!(s.rate(), 120_000);
    assert_eq!(s.clr(), Some(4));
}

#[test]
fn the_sender_follows_the_clr_down_at_once_and_up_by_a_packet_per_rtt_squared() {
    let cfg = Config {
        initial_rtt: 100 * MS,
        initial_rate: 1_000_000,
        ..Config::default()
    };
    let mut s = Sender::new(cfg);
    s.on_sent(at(0), 1_000);
    let loss = FEEDBACK_LOSS | FEEDBACK_RTT;
    s.on_feedback(at(10), 5, &fb(800_000, 0, loss, 100_000));
    assert_eq!((s.rate(), s.clr()), (800_000, Some(5)));
    // A higher rate from someone else changes nothing; a lower one takes over.
    s.on_feedback(at(20), 6, &fb(900_000, 0, loss, 100_000));
    assert_eq!((s.rate(), s.clr()), (800_000, Some(5)));
    s.on_feedback(at(30), 6, &fb(600_000, 0, loss, 100_000));
    assert_eq!((s.rate(), s.clr()), (600_000, Some(6)));
    // The CLR allows more: one 1,000-byte packet per 100 ms per 100 ms → +10 kB/s per 100 ms.
    s.on_feedback(at(130), 6, &fb(2_000_000, 0, loss, 100_000));
    assert!((s.rate() as i64 - 610_000).abs() < 100, "{}", s.rate());
    // A CLR silent for ten feedback intervals is dropped and the rate halved.
    let rate = s.rate();
    s.handle_timeout(at(130) + 100 * MS * CLR_TIMEOUT_RTTS);
    assert_eq!(s.clr(), None);
    assert_eq!(s.rate(), rate / 2);
}

#[test]
fn the_feedback_timer_favours_receivers_with_low_rates() {
    // Over many draws, a receiver at a tenth of the sending rate fires earlier on average.
    let mut rng = AgentRng::from_seed(3);
    let mut mean = [0.0f64; 2];
    for (k, recv) in [(0, 50_000u64), (1, 500_000)] {
        for i in 0..200u32 {
            let mut r = Receiver::new(Config::default(), 9);
            r.on_status(at(0), &status(i, 1_000_000, (0, 0, 0), 0), &mut rng);
            for j in 0..100u64 {
                r.on_data(at(j), j, (recv / 1_000) as usize);
            }
            r.on_status(at(100), &status(i + 1, 1_000_000, (0, 0, 0), 0), &mut rng);
            mean[k] += r
                .poll_timeout()
                .unwrap()
                .saturating_since(at(100))
                .as_secs_f64();
        }
    }
    assert!(mean[0] < mean[1], "{mean:?}");
}

#[test]
fn a_receiver_without_loss_sets_no_limit_once_slow_start_has_ended() {
    // The CLR has seen no loss and the sender, out of slow start, sends 1,500-byte packets
    // at 1,000 B/s. Before, it reported twice a receive rate measured over 50-ms windows,
    // which held no packet: a rate of 0, which pinned the sender at its floor for good.
    let mut rng = AgentRng::from_seed(5);
    let mut r = Receiver::new(Config::default(), 7);
    let mut st = status(0, 1_000, (0, 0, 0), 7);
    st.flags = 0;
    r.on_status(at(0), &st, &mut rng);
    let mut reports = 0;
    for ms in 0..20_000u64 {
        if ms % 1_500 == 0 {
            r.on_data(at(ms), ms / 1_500, 1_500);
        }
        if let Some(fb) = r.poll_feedback(at(ms)) {
            reports += 1;
            assert_eq!(fb.rate, u64::MAX, "at {ms} ms: {fb:?}");
            assert_eq!(fb.flags & FEEDBACK_LOSS, 0);
        }
    }
    assert!(reports > 100, "{reports}");
}

#[test]
fn a_receive_rate_at_a_few_packets_per_window_is_measured_not_zero() {
    // Slow start at 16,000 B/s: a 1,500-byte packet every 94 ms. Windows of 50 ms read 0
    // most of the time; windows of four packets measure the rate.
    let mut rng = AgentRng::from_seed(6);
    let mut r = Receiver::new(Config::default(), 7);
    r.on_status(at(0), &status(0, 16_000, (0, 0, 0), 7), &mut rng);
    let mut seen = Vec::new();
    for ms in 0..5_000u64 {
        if ms % 94 == 0 {
            r.on_data(at(ms), ms / 94, 1_500);
        }
        if let Some(fb) = r.poll_feedback(at(ms)) {
            if ms > 1_000 {
                seen.push(fb.recv_rate);
            }
        }
    }
    assert!(!seen.is_empty());
    for x in &seen {
        assert!((12_000..=20_000).contains(x), "{seen:?}");
    }
}

#[test]
fn a_loss_during_slow_start_is_reported_past_suppression() {
    // A lossless receiver reported 10 kB/s (twice what it receives), so the round's
    // suppression rate is 10 kB/s; this receiver then loses a packet, and its equation rate
    // (1 ms RTT) is far above that. Before, it stayed silent and slow start never ended.
    let mut rng = AgentRng::from_seed(7);
    let mut r = Receiver::new(Config::default(), 7);
    let mut st = status(0, 1_000_000, (0, 0, 0), 9);
    st.r_max_us = 1_000;
    r.on_status(at(0), &st, &mut rng);
    for i in (0..200u64).filter(|i| *i != 100) {
        r.on_data(at(i), i, 1_000);
    }
    st.round = 1;
    st.suppress = 10_000;
    r.on_status(at(200), &st, &mut rng);
    assert!(r.rate() > 100_000.0, "{}", r.rate());
    let due = r.poll_timeout().unwrap();
    let fb = r.poll_feedback(due).expect("the loss is reported");
    assert_ne!(fb.flags & FEEDBACK_LOSS, 0, "{fb:?}");
    // Out of slow start the same receiver is suppressed as before.
    st.round = 2;
    st.flags = 0;
    r.on_status(at(300), &st, &mut rng);
    let due = r.poll_timeout().unwrap();
    assert!(r.poll_feedback(due).is_none());
}

#[test]
fn every_packet_from_the_sender_counts_towards_the_receive_rate() {
    // 500 kB/s of new data and 500 kB/s of repairs and control: 1 MB/s received.
    let mut rng = AgentRng::from_seed(8);
    let mut r = Receiver::new(Config::default(), 7);
    r.on_status(at(0), &status(0, 1_000_000, (0, 0, 0), 7), &mut rng);
    for i in 0..400u64 {
        r.on_data(at(i), i, 500);
        r.on_other(at(i), 500);
    }
    let fb = r.poll_feedback(at(400)).unwrap();
    assert!((fb.recv_rate as f64 - 1e6).abs() < 0.05e6, "{fb:?}");
}

#[test]
fn the_clr_lowers_its_rate_at_once_when_its_rtt_rises_and_raises_it_when_the_rtt_falls() {
    // RFC 5348 §4.5: with RTT samples around 5 ms, a sample of 10 ms (a queue filling) scales
    // the CLR's equation rate by √5/√10 before the smoothed RTT has moved much; a sample of
    // 2 ms raises it. A receiver that is not the CLR reports the plain equation.
    let run = |clr: u32, last_rtt_ms: u64| {
        let mut rng = AgentRng::from_seed(6);
        let mut r = Receiver::new(Config::default(), 7);
        let mut st = status(0, 1_000_000, (0, 0, 0), clr);
        st.flags = 0;
        r.on_status(at(0), &st, &mut rng);
        // One loss in a thousand packets.
        let mut seq = 0;
        for ms in 0..2_000u64 {
            seq += if ms == 1_000 { 2 } else { 1 };
            r.on_data(at(ms), seq, 1_000);
        }
        let echo = |r: &mut Receiver, rng: &mut AgentRng, now: Time, rtt_ms: u64| {
            let sent = now - MS * rtt_ms as u32;
            let ts = sent.saturating_since(Time::ZERO).as_micros() as u64;
            r.on_status(now, &status(0, 1_000_000, (7, ts, 0), clr), rng);
        };
        for i in 0..40 {
            echo(&mut r, &mut rng, at(2_000 + 10 * i), 5);
        }
        let steady = r.rate();
        echo(&mut r, &mut rng, at(2_500), last_rtt_ms);
        (steady, r.rate(), r.rtt())
    };
    let (steady, up, rtt) = run(7, 10);
    // The smoothed RTT moved by 5 % of the step; the rate fell by about √2 besides.
    assert!(rtt < 6 * MS, "{rtt:?}");
    let expected = (5.0f64 / 10.0).sqrt();
    assert!(
        up / steady < expected * 1.02 && up / steady > expected * 0.9,
        "{steady} {up}"
    );
    let (steady, down, _) = run(7, 2);
    assert!(down > steady * 1.3, "{steady} {down}");
    // Not the CLR: the smoothed RTT (gain 0.5) goes to 7.5 ms and the rate, ∝ 1/R, to 2/3.
    let (steady, plain, rtt) = run(9, 10);
    assert_eq!(rtt, Duration::from_micros(7_500));
    assert!(
        (plain / steady - 2.0 / 3.0).abs() < 0.01,
        "not the CLR: {steady} {plain}"
    );
}
