use super::*;
use crate::outbox::envelope;
use crate::testkit::Harness;
use crate::GroupId;
use rmcast_wire::FLAG_RETRANSMISSION;
use rmcast_wire::{Message, Packet};

const G: GroupId = GroupId(1);

fn cfg(node: u32, n: usize, d: Duration) -> Config {
    let mut c = Config::new(NodeId(node), G, NodeId(0), n);
    c.distances = DistanceSource::Configured((0..n as u32).map(|i| (NodeId(i), d)).collect());
    c.session_interval = None;
    c
}

fn pkt(from: u32, msg: wire::Message<'_>, flags: u8) -> Vec<u8> {
    Packet::to_vec(envelope(0, NodeId(from), flags), &Message::Srm(msg)).unwrap()
}

fn data(seq: u64) -> Vec<u8> {
    pkt(
        0,
        wire::Message::Data {
            seq,
            payload: b"abc",
        },
        0,
    )
}

/// A first-round REQUEST from `from` for the source's (node 0's) `seq`.
fn request(from: u32, seq: u64) -> Vec<u8> {
    let msg = wire::Message::Request {
        sender: 0,
        round: 1,
        seq,
        dist_ns: 0,
    };
    pkt(from, msg, 0)
}

/// A first-round REPAIR from `from`, answering `requester`'s request for `seq`.
fn repair(from: u32, requester: u32, seq: u64, payload: &[u8]) -> Vec<u8> {
    let msg = wire::Message::Repair {
        sender: 0,
        requester,
        round: 1,
        seq,
        dist_ns: 0,
        payload,
    };
    pkt(from, msg, FLAG_RETRANSMISSION)
}

fn drain(m: &mut Member) -> Vec<wire::Kind> {
    let mut v = Vec::new();
    while let Some(t) = m.poll_transmit() {
        let p = Packet::decode(&t.payload).unwrap();
        if let Message::Srm(m) = p.message {
            v.push(m.kind());
        }
    }
    v
}

#[test]
fn request_timer_is_uniform_in_c1d_c1c2d() {
    let d = Duration::from_millis(10);
    for seed in 0..200 {
        let mut m = Member::new(cfg(1, 4, d), AgentRng::from_seed(seed));
        let t0 = Time::from_secs(1);
        m.handle_packet(t0, NodeId(0), &data(1)); // seq 0 missing
        let at = m.poll_timeout().unwrap();
        let wait = at - t0;
        assert!(wait >= d * 2 && wait <= d * 4, "{wait:?}");
        assert!(matches!(
            m.poll_event(),
            Some(Event::LossDetected { seq: 0 })
        ));
    }
}

/// A distance of zero (measured so on a LAN under load) made the request timer re-fire at
/// the same instant forever: `handle_timeout` never returned and its outbox grew until the
/// process ran out of memory (found by the srm socket tests). Each expiry now sends one
/// request and re-arms later.
#[test]
fn a_zero_distance_does_not_re_fire_the_request_timer_at_the_same_instant() {
    let mut m = Member::new(cfg(1, 4, Duration::ZERO), AgentRng::from_seed(1));
    let t0 = Time::from_secs(1);
    m.handle_packet(t0, NodeId(0), &data(1)); // seq 0 missing
    for _ in 0..10 {
        let at = m.poll_timeout().unwrap();
        m.handle_timeout(at);
        assert_eq!(drain(&mut m), vec![wire::Kind::Request]);
        assert!(m.poll_timeout().unwrap() > at);
    }
}

#[test]
fn repair_timer_is_uniform_in_d1d_d1d2d_of_the_requester() {
    let d = Duration::from_millis(10);
    for seed in 0..200 {
        let mut c = cfg(1, 4, d);
        if let DistanceSource::Configured(m) = &mut c.distances {
            m.insert(NodeId(2), Duration::from_millis(30));
        }
        let mut m = Member::new(c, AgentRng::from_seed(seed));
        m.handle_packet(Time::ZERO, NodeId(0), &data(0));
        let t0 = Time::from_secs(1);
        let req = request(2, 0);
        m.handle_packet(t0, NodeId(2), &req);
        let wait = m.poll_timeout().unwrap() - t0;
        assert!(
            wait >= Duration::from_millis(30) && wait <= Duration::from_millis(60),
            "{wait:?}"
        );
    }
}

#[test]
fn hearing_a_request_backs_off_and_ignore_window_holds() {
    let d = Duration::from_millis(10);
    let mut m = Member::new(cfg(1, 4, d), AgentRng::from_seed(7));
    let t0 = Time::from_secs(1);
    m.handle_packet(t0, NodeId(0), &data(1));
    let first = m.poll_timeout().unwrap();
    let req = request(2, 0);
    let t1 = t0 + Duration::from_millis(5);
    m.handle_packet(t1, NodeId(2), &req);
    let second = m.poll_timeout().unwrap();
    // backed off: interval doubled, uniform in [2·C1·d, 2·(C1+C2)·d] from t1.
    assert!(
        second - t1 >= d * 4 && second - t1 <= d * 8,
        "{:?}",
        second - t1
    );
    assert!(drain(&mut m).is_empty(), "suppressed: no request sent");
    assert_eq!(m.srm_stats().backoffs, 1);
    // a second request inside the ignore window changes nothing
    m.handle_packet(t1 + Duration::from_millis(1), NodeId(3), &req);
    assert_eq!(m.poll_timeout().unwrap(), second);
    assert_eq!(m.srm_stats().backoffs, 1);
    let _ = first;
    // the request fires eventually and backs off again (×2 once more)
    m.handle_timeout(second);
    assert_eq!(drain(&mut m), vec![wire::Kind::Request]);
    let third = m.poll_timeout().unwrap();
    assert!(third - second >= d * 8 && third - second <= d * 16);
    // the repair arrives: no more requests, hold-down of 3·d, then state gone
    let rep = repair(4, 1, 0, b"x");
    m.handle_packet(second + d, NodeId(4), &rep);
    assert_eq!(m.poll_timeout().unwrap(), second + d + d * 3);
    m.handle_timeout(second + d * 4);
    assert!(drain(&mut m).is_empty());
    assert_eq!(m.poll_timeout(), None);
}

#[test]
fn hearing_a_repair_suppresses_a_pending_repair() {
    let d = Duration::from_millis(10);
    let mut m = Member::new(cfg(1, 4, d), AgentRng::from_seed(3));
    m.handle_packet(Time::ZERO, NodeId(0), &data(0));
    let t0 = Time::from_secs(1);
    let req = request(2, 0);
    m.handle_packet(t0, NodeId(2), &req);
    let rep = repair(3, 2, 0, b"abc");
    m.handle_packet(t0 + Duration::from_millis(1), NodeId(3), &rep);
    m.handle_timeout(t0 + Duration::from_secs(10));
    assert!(drain(&mut m).is_empty());
    assert_eq!(m.srm_stats().suppressed, 1);
    assert_eq!(m.srm_stats().repairs_sent, 0);
}

#[test]
fn adaptive_sender_of_request_lowers_c1_within_bounds() {
    let d = Duration::from_millis(10);
    let mut c = cfg(1, 20, d);
    c.adaptive = true;
    let mut m = Member::new(c, AgentRng::from_seed(1));
    m.handle_packet(Time::ZERO, NodeId(0), &data(1));
    let at = m.poll_timeout().unwrap();
    m.handle_timeout(at);
    let (c1, ..) = m.params();
    assert!((c1 - 1.9).abs() < 1e-9, "{c1}");
    // first repair: D1 = D2 = log10 G, bounded
    m.handle_packet(Time::from_secs(2), NodeId(0), &data(0));
    m.handle_packet(Time::from_secs(3), NodeId(0), &data(2));
    let req = request(2, 2);
    m.handle_packet(Time::from_secs(4), NodeId(2), &req);
    let (_, _, d1, d2) = m.params();
    assert!(
        (d1 - 20f64.log10()).abs() < 1e-9 && (d2 - 20f64.log10()).abs() < 1e-9,
        "{d1} {d2}"
    );
}

/// Member 1 (adaptive, G = 20) repairs seq 0 for member 2, hears `others` more first-round
/// repairs of it during its hold-down, then a request for seq 1 arrives: the timer
/// parameters (D1, D2) that request's repair timer is drawn with.
fn adaptive_repair_params_after(others: u32) -> (f64, f64) {
    let d = Duration::from_millis(10);
    let mut c = cfg(1, 20, d);
    c.adaptive = true;
    let mut m = Member::new(c, AgentRng::from_seed(5));
    m.handle_packet(Time::ZERO, NodeId(0), &data(0));
    m.handle_packet(Time::ZERO, NodeId(0), &data(1));
    let t0 = Time::from_secs(1);
    m.handle_packet(t0, NodeId(2), &request(2, 0));
    let fire = m.poll_timeout().unwrap();
    m.handle_timeout(fire);
    assert_eq!(drain(&mut m), vec![wire::Kind::Repair]);
    // Sending lowered D1 by 0.1.
    let lg = 20f64.log10();
    let (_, _, d1, d2) = m.params();
    assert!(
        (d1 - (lg - 0.1)).abs() < 1e-9 && (d2 - lg).abs() < 1e-9,
        "{d1} {d2}"
    );
    for k in 0..others {
        let at = fire + Duration::from_millis(1 + u64::from(k));
        m.handle_packet(at, NodeId(3 + k), &repair(3 + k, 2, 0, b"abc"));
    }
    m.handle_packet(t0 + Duration::from_secs(1), NodeId(2), &request(2, 1));
    let (_, _, d1, d2) = m.params();
    (d1, d2)
}

#[test]
fn adaptive_repairer_counts_its_own_repair_and_those_heard_in_hold_down() {
    let lg = 20f64.log10();
    // Its own repair and two more: 3 duplicates (≥ 1), so both parameters go up (D1 back to
    // its bound log10 G), as ns-2's `recompute-repair-params` does.
    let (d1, d2) = adaptive_repair_params_after(2);
    assert!((d1 - lg).abs() < 1e-9, "{d1}");
    assert!((d2 - (lg + 0.5)).abs() < 1e-9, "{d2}");
    // Its own repair alone: it was the closest repairer, so D2 comes down by 0.1.
    let (d1, d2) = adaptive_repair_params_after(0);
    assert!((d1 - (lg - 0.1)).abs() < 1e-9, "{d1}");
    assert!((d2 - (lg - 0.1)).abs() < 1e-9, "{d2}");
}

#[test]
fn session_messages_give_distances() {
    let mut a = Member::new(
        {
            let mut c = Config::new(NodeId(1), G, NodeId(0), 3);
            c.session_interval = Some(Duration::from_secs(1));
            c
        },
        AgentRng::from_seed(1),
    );
    let mut b = Member::new(
        {
            let mut c = Config::new(NodeId(2), G, NodeId(0), 3);
            c.session_interval = Some(Duration::from_secs(1));
            c
        },
        AgentRng::from_seed(2),
    );
    let one_way = Duration::from_millis(7);
    // a sends at 0, b hears at 7 ms; b sends at 100 ms, a hears at 107 ms.
    a.handle_timeout(Time::ZERO);
    let sa = a.poll_transmit().unwrap();
    b.handle_packet(Time::ZERO + one_way, NodeId(1), &sa.payload);
    b.handle_timeout(Time::from_millis(100));
    let sb = b.poll_transmit().unwrap();
    a.handle_packet(Time::from_millis(100) + one_way, NodeId(2), &sb.payload);
    assert_eq!(a.distance(NodeId(2)), one_way);
}

fn run_e2e(n: usize, drop: f64, seed: u64, adaptive: bool, msgs: u64) -> (Harness, Vec<NodeId>) {
    let delay = Duration::from_millis(5);
    let mut h = Harness::new(delay, drop, seed);
    let mut ids = Vec::new();
    for i in 0..n as u32 {
        let mut c = cfg(i, n, delay);
        c.adaptive = adaptive;
        c.session_interval = Some(Duration::from_millis(200));
        ids.push(h.add(Box::new(Member::new(
            c,
            AgentRng::derive(seed, NodeId(i), 0),
        ))));
    }
    h.set_group(G, ids.clone());
    for k in 0..msgs {
        h.run_until(Time::from_millis(10 * k));
        h.with_sender(ids[0], |a, now| {
            a.send(now, crate::testkit::message(k)).unwrap();
        });
    }
    h.run_until(Time::from_secs(60));
    (h, ids)
}

#[test]
fn end_to_end_every_member_gets_every_packet_in_order_under_loss() {
    for (seed, adaptive) in [(1, false), (2, true), (3, false)] {
        let (h, ids) = run_e2e(8, 0.1, seed, adaptive, 200);
        assert!(h.stats.copies_dropped > 100);
        let receivers = ids[1..].iter().map(|r| r.0 as usize);
        crate::testkit::assert_delivered(&h, receivers, 200, &format!("srm seed {seed}"));
    }
}

/// A SESSION message from the source (node 0) announcing `next_seq`, with no entries.
fn session(next_seq: u64) -> Vec<u8> {
    let mut raw = Vec::new();
    wire::SessionEntries::encode(std::iter::empty(), &mut raw);
    let entries = wire::SessionEntries::from_raw(&raw).unwrap();
    let msg = wire::Message::Session {
        ts: 0,
        next_seq,
        entries,
    };
    pkt(0, msg, 0)
}

/// The REQUESTs a member sent since the last call, by sequence number.
fn requests(m: &mut Member) -> Vec<u64> {
    std::iter::from_fn(|| m.poll_transmit())
        .filter_map(|t| match Packet::decode(&t.payload).unwrap().message {
            Message::Srm(wire::Message::Request { seq, .. }) => Some(seq),
            _ => None,
        })
        .collect()
}

/// Found by the `receiver` fuzz target (docs/fuzzing.md): one SESSION message whose `next_seq`
/// is far ahead but inside the receive window made a member request 60,000 packets within one
/// request interval, and again at every back-off. The budget sends at most
/// [`REQUESTS_PER_ROUND`] requests per round (the first request interval, `(C1 + C2)·d`); the
/// others wait, and over the rounds every loss is requested.
#[test]
fn a_session_far_ahead_costs_at_most_the_budget_per_round_and_every_loss_is_requested() {
    let d = Duration::from_millis(10);
    let mut m = Member::new(cfg(1, 3, d), AgentRng::from_seed(7));
    let next = 60_000;
    m.handle_packet(Time::ZERO, NodeId(0), &session(next));
    assert!(
        requests(&mut m).is_empty(),
        "requests wait for their timers"
    );
    // Every first request timer ends within [C1·d, (C1+C2)·d] = [20, 40] ms; the round that
    // starts with the first of them lasts 4·d = 40 ms.
    let mut asked = std::collections::BTreeSet::new();
    let mut first_round = 0;
    while let Some(now) = m.poll_timeout() {
        m.handle_timeout(now);
        let sent = requests(&mut m);
        if now < Time::from_millis(60) {
            first_round += sent.len();
        }
        asked.extend(sent);
        if asked.len() == next as usize {
            break;
        }
        assert!(now < Time::from_secs(10), "only {} requested", asked.len());
    }
    assert_eq!(
        first_round, REQUESTS_PER_ROUND,
        "requests in the first round"
    );
    assert_eq!(asked, (0..next).collect());
}

/// Found by reading the gap detection beside the test above: a SESSION's `next_seq` beyond
/// the receive window made the member detect every loss up to it (2^64 for `u64::MAX`: the
/// receive never returned), and a REQUEST for `u64::MAX` overflowed `seq + 1`.
#[test]
fn a_member_tracks_losses_only_inside_its_window() {
    let mut c = cfg(1, 3, Duration::from_millis(10));
    c.window = 16;
    let mut m = Member::new(c, AgentRng::from_seed(7));
    let losses = |m: &mut Member| crate::budget::losses_detected(m);
    m.handle_packet(Time::ZERO, NodeId(0), &session(1_000));
    assert_eq!(losses(&mut m), 16, "losses beyond the window");
    m.handle_packet(Time::ZERO, NodeId(0), &session(u64::MAX));
    m.handle_packet(Time::ZERO, NodeId(2), &request(2, u64::MAX));
    assert_eq!(losses(&mut m), 0);
}

/// The times a lone receiver (node 1) sends its first `rounds` session messages, interval 1 s,
/// jitter `j`.
fn session_times(j: f64, rounds: usize) -> Vec<Duration> {
    let mut c = cfg(1, 4, Duration::from_millis(5));
    c.session_interval = Some(Duration::from_secs(1));
    c.session_jitter = j;
    let mut m = Member::new(c, AgentRng::from_seed(3));
    let mut times = Vec::new();
    let mut now = Time::ZERO;
    while times.len() < rounds {
        m.handle_timeout(now);
        for k in drain(&mut m) {
            if k == wire::Kind::Session {
                times.push(now.saturating_since(Time::ZERO));
            }
        }
        now = m.poll_timeout().expect("session timer armed");
    }
    times
}

/// ns-2's `SRM/session`: each interval `sessionDelay_ × uniform(0.9, 1.1)`, so members'
/// session messages drift apart instead of leaving together every second; jitter 0 keeps
/// the exact period.
#[test]
fn session_intervals_are_jittered_as_in_ns2() {
    let gaps = |t: Vec<Duration>| -> Vec<f64> {
        t.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect()
    };
    let exact = gaps(session_times(0.0, 20));
    assert!(exact.iter().all(|&g| (g - 1.0).abs() < 1e-9), "{exact:?}");
    let jittered = gaps(session_times(crate::srm::spec::SESSION_JITTER, 200));
    assert!(
        jittered.iter().all(|&g| (0.9..=1.1).contains(&g)),
        "{jittered:?}"
    );
    let (lo, hi) = jittered
        .iter()
        .fold((f64::MAX, f64::MIN), |(l, h), &g| (l.min(g), h.max(g)));
    assert!(lo < 0.91 && hi > 1.09, "spread over the range: {lo}..{hi}");
    let mean = jittered.iter().sum::<f64>() / jittered.len() as f64;
    assert!((mean - 1.0).abs() < 0.01, "mean interval {mean}");
}

/// A SESSION message from the source (node 0) echoing `echo_ts` to member 1 with no delay:
/// heard at `echo_ts + 2·d`, it makes member 1's distance to the source `d`.
fn echo(echo_ts: Time) -> Vec<u8> {
    let mut raw = Vec::new();
    let entry = wire::SessionEntry {
        node: 1,
        echo_ts: echo_ts.as_nanos(),
        delay_us: 0,
    };
    wire::SessionEntries::encode(std::iter::once(entry), &mut raw);
    let entries = wire::SessionEntries::from_raw(&raw).unwrap();
    let msg = wire::Message::Session {
        ts: 0,
        next_seq: 0,
        entries,
    };
    pkt(0, msg, 0)
}

/// Member 1 hears the source's echo at `now`, so that its distance to the source is `d`.
fn learn_distance(m: &mut Member, now: Time, d: Duration) {
    m.handle_packet(now, NodeId(0), &echo(now - d * 2));
    assert_eq!(m.distance(NodeId(0)), d);
}

/// Found by the srm socket test (`netns_frames`, a receiver killed mid-transfer): a
/// receiver sat on one missing packet for seconds while repairs flowed, and reported nothing
/// within the sender's `--final-wait`. Its distance to the source, measured from SESSION
/// echoes, is a round trip through two hosts' queues: mostly under a millisecond, but one
/// sample of tens of milliseconds (measured up to 200 ms under load) came just as the
/// request timer backed off to its limit, and the timer, up to 128·d away, was set seconds
/// ahead and kept there after the next samples fell back. Now a request timer follows the
/// distance down: the next request goes out at most `(C1 + C2)·32·d` after the estimate
/// falls back, never later than first set.
#[test]
fn a_request_timer_drawn_with_a_transient_long_distance_follows_it_back_down() {
    let lan = Duration::from_millis(1);
    let spike = Duration::from_millis(80);
    for seed in 0..50 {
        let mut c = cfg(1, 5, lan);
        c.distances = DistanceSource::SessionMessages;
        c.follow_falling_distance = true;
        let mut m = Member::new(c, AgentRng::from_seed(seed));
        let t0 = Time::from_secs(1);
        learn_distance(&mut m, t0, lan);
        m.handle_packet(t0, NodeId(0), &data(1)); // seq 0 missing
                                                  // No repair comes: the request backs off to the limit (2^5).
        for _ in 0..5 {
            let at = m.poll_timeout().unwrap();
            m.handle_timeout(at);
            assert_eq!(requests(&mut m), vec![0]);
        }
        // One late echo just before the next request: it is drawn with 80 ms.
        let at = m.poll_timeout().unwrap();
        learn_distance(&mut m, at, spike);
        m.handle_timeout(at);
        assert_eq!(requests(&mut m), vec![0]);
        let stale = m.poll_timeout().unwrap();
        assert!(stale - at >= spike * 64, "{:?}", stale - at);
        // The next session message from the source measures the LAN again.
        let now = at + Duration::from_millis(100);
        learn_distance(&mut m, now, lan);
        let next = m.poll_timeout().unwrap();
        assert!(next <= stale, "never later than first set");
        assert!(
            next <= now.max(at + lan * 128),
            "seed {seed}: the next request {:?} after the distance fell back",
            next - now
        );
        m.handle_timeout(next);
        assert_eq!(requests(&mut m), vec![0]);
    }
}

/// The other direction: a request timer is never pushed back by a longer distance, and a
/// request the budget deferred (no timer) is left to its round.
#[test]
fn a_longer_distance_leaves_an_armed_request_timer_alone() {
    let lan = Duration::from_millis(1);
    let mut c = cfg(1, 5, lan);
    c.distances = DistanceSource::SessionMessages;
    c.follow_falling_distance = true;
    let mut m = Member::new(c, AgentRng::from_seed(3));
    let t0 = Time::from_secs(1);
    learn_distance(&mut m, t0, lan);
    m.handle_packet(t0, NodeId(0), &data(1));
    let at = m.poll_timeout().unwrap();
    learn_distance(&mut m, t0 + lan, Duration::from_millis(50));
    assert_eq!(m.poll_timeout(), Some(at));
}

/// The seed's model (the default, ns-2's): an armed request timer keeps its deadline when
/// the distance falls.
#[test]
fn without_following_an_armed_request_timer_keeps_its_deadline() {
    let mut c = cfg(1, 5, Duration::from_millis(1));
    c.distances = DistanceSource::SessionMessages;
    let mut m = Member::new(c, AgentRng::from_seed(3));
    let t0 = Time::from_secs(1);
    learn_distance(&mut m, t0, Duration::from_millis(50));
    m.handle_packet(t0, NodeId(0), &data(1));
    let at = m.poll_timeout().unwrap();
    learn_distance(
        &mut m,
        t0 + Duration::from_millis(1),
        Duration::from_millis(1),
    );
    assert_eq!(m.poll_timeout(), Some(at));
}
