#![allow(clippy::unwrap_used)]
use super::*;
use crate::pgm::{ReceiverConfig, SourceConfig};
use crate::testkit::{message, Harness, TEST_GROUP};

/// A PGM source and `n` receivers with TFMCC on a mesh with 100 µs one way and `drop` loss
/// per copy; the application offers messages whenever the source takes them, for `secs`.
/// The mesh has no bandwidth: without loss only `max_rate` (30 MB/s) stops slow start.
fn run(n: u32, drop: f64, secs: u64) -> (Harness, u64) {
    let cc = tfmcc::Config {
        initial_rtt: Duration::from_millis(20),
        max_rate: 30_000_000,
        ..tfmcc::Config::default()
    };
    let mut h = Harness::new(Duration::from_micros(100), drop, 5);
    let mut c = SourceConfig::new(NodeId(0), TEST_GROUP);
    c.cc = Some(cc);
    let s = h.add(Box::new(PacedSource::new(Source::new(c), cc)));
    let ids: Vec<NodeId> = (1..=n).map(NodeId).collect();
    for &id in &ids {
        let mut c = ReceiverConfig::new(id, s);
        c.cc = Some(cc);
        // NAK timers for a 200-µs round trip (the seed's are 500 and 1,000 ms).
        c.nak_repeat = Duration::from_millis(20);
        c.nak_rdata = Duration::from_millis(40);
        let r = Receiver::new(c, AgentRng::from_seed(u64::from(id.0)));
        let fb = AgentRng::from_seed(100 + u64::from(id.0));
        h.add(Box::new(FeedbackReceiver::new(r, cc, fb)));
    }
    h.set_group(TEST_GROUP, ids);
    let mut next = 0u64;
    let end = Time::from_secs(secs);
    let mut t = Time::ZERO;
    while t < end {
        h.with_sender(s, |a, now| {
            while a.can_send() {
                a.send(now, message(next)).unwrap();
                next += 1;
            }
        });
        t += Duration::from_micros(500);
        h.run_to(t);
    }
    (h, next)
}

fn source(h: &mut Harness) -> &mut PacedSource {
    let a = h.agent_mut(NodeId(0)).unwrap().as_any_mut().unwrap();
    a.downcast_mut::<PacedSource>().unwrap()
}

#[test]
fn without_loss_slow_start_climbs_and_every_receiver_measures_its_rtt() {
    let (mut h, sent) = run(3, 0.0, 1);
    let s = source(&mut h);
    assert!(s.cc().slow_start(), "no loss, no end of slow start");
    // From 16 kB/s, doubling every round (20 ms at least) for a second: the cap.
    assert_eq!(s.cc().rate(), 30_000_000);
    assert!(sent > 10_000, "{sent}");
    for id in 1..=3u32 {
        let a = h.agent_mut(NodeId(id)).unwrap().as_any_mut().unwrap();
        let r = a.downcast_mut::<FeedbackReceiver>().unwrap();
        let rtt = r.cc().rtt();
        assert!(
            rtt >= Duration::from_micros(200) && rtt < Duration::from_millis(2),
            "receiver {id}: {rtt:?}"
        );
    }
}

#[test]
fn with_one_percent_loss_the_rate_settles_near_the_tcp_equation_and_everything_arrives() {
    let (mut h, sent) = run(4, 0.01, 3);
    let s = source(&mut h);
    assert!(!s.cc().slow_start());
    assert!(s.cc().clr().is_some());
    // Mean message size 16 + 150 bytes plus ~40 of headers; RTT 200 µs; p about 1 %.
    let x = tfmcc::tcp_rate(206.0, 200e-6, 0.01);
    let rate = s.cc().rate() as f64;
    assert!(
        rate > x / 4.0 && rate < x * 4.0,
        "rate {rate:.0} B/s, equation {x:.0}"
    );
    h.with_sender(NodeId(0), |a, now| a.close(now));
    h.run_until(Time::from_secs(20));
    for id in 1..=4usize {
        assert_eq!(h.delivered_seqs(id).len() as u64, sent, "receiver {id}");
    }
}
