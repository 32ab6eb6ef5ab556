//! One emulated link measured against its settings (root; skipped with a message otherwise),
//! with the tolerances of issue 61: the round trip within 5 % + 0.1 ms of twice the delay and
//! transmission time, the rate within 2 %, the loss within its binomial 95 % interval.

#![allow(clippy::unwrap_used)]

use rmcast_lab::emu::chain::Chain;
use rmcast_lab::emu::{measure, wire_bytes, MediumSpec};
use rmcast_sim::loss::LossModel;
use std::time::Duration;

fn spec(rate_bps: u64, delay_ms: f64, queue: usize) -> MediumSpec {
    MediumSpec {
        rate_bps,
        delay_ns: (delay_ms * 1e6) as u64,
        jitter_ns: None,
        reorder: false,
        queue: Some(queue),
    }
}

#[test]
fn one_link_holds_its_delay_rate_and_loss() {
    if let Err(why) = rmcast_lab::netns::available() {
        eprintln!("skipped: {why}");
        return;
    }
    // Delay and rate: 2 ms, 20 Mbit/s, a queue of 50 frames, no loss.
    let s = spec(20_000_000, 2.0, 50);
    let chain = Chain::create(1, &s, None, 1).unwrap();
    let rtts = measure::round_trips(&chain, 100, 56, Duration::from_millis(5)).unwrap();
    assert!(rtts.len() >= 95, "{} of 100 echoed", rtts.len());
    let mut sorted = rtts.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    // A 56-byte payload is a 98-byte frame: delay plus its transmission each way.
    let expect = 2.0 * (2e-3 + s.tx_ns(wire_bytes(98)) as f64 / 1e9);
    assert!(
        (median - expect).abs() <= 0.05 * expect + 1e-4,
        "median round trip {median} s, configured {expect} s"
    );
    // Offered at twice the rate, 1,514-byte frames come through at the rate.
    let wire = wire_bytes(1514);
    let gap = Duration::from_nanos(s.tx_ns(wire) / 2);
    let st = measure::stream(&chain, 3000, 1472, gap).unwrap();
    let rate = ((st.received - 1) * wire * 8) as f64 / st.span_s;
    assert!(
        (rate / 20e6 - 1.0).abs() <= 0.02,
        "{rate} bit/s through a 20 Mbit/s link ({st:?})"
    );
    assert!(st.received < st.sent, "the queue dropped nothing: {st:?}");
    let queue_drops: u64 = chain.emulators.iter().map(|e| e.stats().queue_drops).sum();
    assert!(queue_drops > 0);
    drop(chain);

    // Loss: 10 % each way at 100 Mbit/s, a stream at half the rate (no queue drops).
    let p = 0.1;
    let s = spec(100_000_000, 0.5, 100);
    let model = LossModel::Bernoulli { p };
    let chain = Chain::create(1, &s, Some(&model), 7).unwrap();
    // A few round trips first, so that neighbour discovery is done before the count.
    measure::round_trips(&chain, 10, 56, Duration::from_millis(5)).unwrap();
    let n = 5000;
    let gap = Duration::from_nanos(2 * s.tx_ns(wire));
    let st = measure::stream(&chain, n, 1000, gap).unwrap();
    assert_eq!(st.sent, n);
    let lost = (st.sent - st.received) as f64 / n as f64;
    let half = 1.96 * (p * (1.0 - p) / n as f64).sqrt();
    assert!(
        (lost - p).abs() <= half,
        "lost {lost} of the frames, p = {p} (95 % interval +- {half})"
    );
    let queue_drops: u64 = chain.emulators.iter().map(|e| e.stats().queue_drops).sum();
    assert_eq!(queue_drops, 0);
}

/// A shared 10 Mbit/s medium (seed 000's and 002's Ethernet): two hosts sending at 8 Mbit/s
/// each to a third get 10 Mbit/s through together, and every frame reaches both other hosts.
#[test]
fn a_shared_medium_carries_its_rate_for_all_members() {
    use std::net::UdpSocket;
    use std::sync::Arc;
    if let Err(why) = rmcast_lab::netns::available() {
        eprintln!("skipped: {why}");
        return;
    }
    let seg = Arc::new(rmcast_lab::netns::Segment::create(3).unwrap());
    let emu = rmcast_lab::emu::bed::shared_medium(&seg, 10_000_000).unwrap();
    let to = std::net::SocketAddr::from((seg.addr(2), 47_321));
    let (tx, rx) = std::sync::mpsc::channel();
    let s2 = seg.clone();
    let counter = std::thread::spawn(move || {
        s2.enter(2).unwrap();
        let sock = UdpSocket::bind(to).unwrap();
        sock.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        tx.send(()).unwrap();
        let mut buf = [0u8; 2048];
        let (mut n, mut first, mut last) = (0u64, None, std::time::Instant::now());
        while sock.recv_from(&mut buf).is_ok() {
            last = std::time::Instant::now();
            first.get_or_insert(last);
            n += 1;
        }
        (n, last.duration_since(first.unwrap()).as_secs_f64())
    });
    rx.recv().unwrap();
    // 1,472-byte datagrams (1,538 wire bytes) every 1.538 ms: 8 Mbit/s from each sender.
    let senders: Vec<_> = (0..2)
        .map(|h| {
            let s = seg.clone();
            std::thread::spawn(move || {
                s.enter(h).unwrap();
                let sock = UdpSocket::bind((s.addr(h), 0)).unwrap();
                let t0 = std::time::Instant::now();
                for i in 0..650u32 {
                    let due = t0 + Duration::from_micros(1538) * i;
                    if let Some(d) = due.checked_duration_since(std::time::Instant::now()) {
                        std::thread::sleep(d);
                    }
                    sock.send_to(&[7u8; 1472], to).unwrap();
                }
            })
        })
        .collect();
    for s in senders {
        s.join().unwrap();
    }
    let (n, span) = counter.join().unwrap();
    let st = emu.stop().unwrap();
    assert_eq!(n, 1300, "{st:?}");
    let rate = ((n - 1) * wire_bytes(1514) * 8) as f64 / span;
    assert!(
        (rate / 10e6 - 1.0).abs() <= 0.02,
        "{rate} bit/s through a 10 Mbit/s medium ({st:?})"
    );
    // Each frame went to both other members.
    assert_eq!(st.delivered + st.send_failures, 2 * st.frames_in, "{st:?}");
}
