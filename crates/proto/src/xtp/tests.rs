use super::*;
use crate::testkit::{done_failed, Harness};
use crate::SenderAgent;
use crate::{Stats, Transmit};
use rmcast_wire::Packet;
use rmcast_wire::PacketClass;
use rmcast_wire::{Envelope, FLAG_RETRANSMISSION};

const G: GroupId = GroupId(1);
const D: Duration = Duration::from_millis(1);

/// Drop decision: (from, to, decoded packet header flags, message) -> drop?
type DropFn = Box<dyn FnMut(u32, u32, u8, &wire::Message<'_>) -> bool>;

/// The harness as a full mesh with a fixed delay and a scripted drop rule: agent 0 sends to
/// the group of every other agent, and every datagram sent is logged.
fn scripted(agents: Vec<Box<dyn Agent>>, mut drop: DropFn) -> Harness {
    let mut h = Harness::new(D, 0.0, 0);
    let n = agents.len() as u32;
    for a in agents {
        h.add(a);
    }
    h.set_group(G, (1..n).map(NodeId).collect());
    h.log_sent();
    h.drop_when(Box::new(move |from, to, datagram| {
        let p = Packet::decode(datagram).unwrap();
        let Message::Xtp(m) = &p.message else {
            panic!("not an xtp datagram")
        };
        drop(from.0, to.0, p.header.flags, m)
    }));
    for i in 0..n {
        h.drain(NodeId(i));
    }
    h
}

/// A sender built from `cfg` at node 0 and a default receiver at node 1, nothing lost.
fn lossless_pair(cfg: SenderConfig) -> Harness {
    scripted(
        vec![
            Box::new(Sender::new(cfg)),
            Box::new(Receiver::new(ReceiverConfig::new(NodeId(1)))),
        ],
        Box::new(|_, _, _, _| false),
    )
}

fn receivers(n: u32) -> Vec<NodeId> {
    (1..=n).map(NodeId).collect()
}

fn pattern(len: usize, salt: u8) -> Bytes {
    Bytes::from(
        (0..len)
            .map(|i| (i as u8).wrapping_mul(31).wrapping_add(salt))
            .collect::<Vec<_>>(),
    )
}

/// One 1,000-byte write in ten 100-byte packets; the receiver loses the first transmissions
/// of packets 3 and 7.
fn scripted_run(retx: Retx) -> (Harness, Stats) {
    let mut cfg = SenderConfig::thesis(NodeId(0), G, receivers(1), true);
    cfg.retx = retx;
    cfg.maxdata = 100;
    let agents: Vec<Box<dyn Agent>> = vec![
        Box::new(Sender::new(cfg)),
        Box::new(Receiver::new(ReceiverConfig::new(NodeId(1)))),
    ];
    let drop: DropFn = Box::new(|_, to, flags, m| {
        to == 1
            && flags & FLAG_RETRANSMISSION == 0
            && matches!(m, wire::Message::Data { seq: 3 | 7, .. })
    });
    let mut s = scripted(agents, drop);
    s.run_until(Time::from_millis(5));
    s.with_sender(NodeId(0), |a, now| {
        a.send(now, pattern(1000, 1)).unwrap();
        a.close(now);
    });
    s.run_until(Time::from_secs(10));
    let st = s.agent(NodeId(0)).unwrap().stats().clone();
    (s, st)
}

#[test]
fn go_back_n_resends_from_the_gap_selective_only_the_losses() {
    let (gbn, gst) = scripted_run(Retx::GoBackN);
    let (sel, sst) = scripted_run(Retx::Selective);
    // Go-back-N: the FASTNAK for packet 3 sends 3..9 again (7 packets); packet 7's loss is
    // covered by that round.
    assert_eq!(gst.repairs_sent, 7, "{gst:?}");
    // Selective: the FASTNAK asks for 3, the status answering packet 9's SREQ for 7.
    assert_eq!(sst.repairs_sent, 2, "{sst:?}");
    let resent = |s: &Harness| -> Vec<u64> {
        s.sent
            .iter()
            .filter_map(|(_, from, _, p)| {
                let pk = Packet::decode(p).unwrap();
                match (from.0, pk.header.class(), pk.message) {
                    (0, PacketClass::RepairData, Message::Xtp(wire::Message::Data { seq, .. })) => {
                        Some(seq)
                    }
                    _ => None,
                }
            })
            .collect()
    };
    assert_eq!(resent(&gbn), vec![3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(resent(&sel), vec![3, 7]);
    for s in [&gbn, &sel] {
        assert_eq!(delivered(s, 1), vec![pattern(1000, 1)]);
        assert!(s.events[0].iter().any(|(_, e)| matches!(
            e,
            Event::MessageDone {
                seq: 0,
                failed: false,
                ..
            }
        )));
        assert!(s.events[0].iter().any(|(_, e)| *e == Event::Completed));
    }
    // No WTIMER expiry was needed: FASTNAK and the write's SREQ did the work.
    assert_eq!(gst.timeouts, 0);
    assert_eq!(sst.timeouts, 0);
}

fn cntl(sync: u16, rseq: u64) -> Vec<u8> {
    Packet::to_vec(
        Envelope {
            session: 0,
            source: 1,
            flags: 0,
        },
        &Message::Xtp(wire::Message::Cntl(Status {
            rseq,
            echo: sync,
            options: 0,
            alloc: rseq + 256,
            spans: Spans::EMPTY,
        })),
    )
    .unwrap()
}

fn sync_of(t: &Transmit) -> Option<(u16, bool)> {
    match Packet::decode(&t.payload).ok()?.message {
        Message::Xtp(wire::Message::First { sync, options, .. })
        | Message::Xtp(wire::Message::Data { sync, options, .. }) => {
            Some((sync, options & opt::SREQ != 0))
        }
        Message::Xtp(wire::Message::Cntl(s)) => Some((s.echo, s.options & opt::SREQ != 0)),
        _ => None,
    }
}

/// Drive a sender whose one receiver answers FIRST and then goes silent; return the WTIMER
/// values armed (ms) and the time of the abort.
fn backoff_sequence(cap: Option<Duration>) -> (Vec<u64>, Time, Sender) {
    let mut cfg = SenderConfig::thesis(NodeId(0), G, receivers(1), true);
    cfg.wtimer.cap = cap;
    let mut s = Sender::new(cfg);
    s.handle_timeout(Time::ZERO);
    let first = s.poll_transmit().unwrap();
    let (sync, sreq) = sync_of(&first).unwrap();
    assert!(sreq, "FIRST carries SREQ");
    // The receiver answers FIRST after 2 ms: RTT sample 2 ms, base = max(100 ms, 4 ms).
    s.handle_packet(Time::from_millis(2), NodeId(1), &cntl(sync, 0));
    assert!(s.can_send());
    s.send(Time::from_millis(2), pattern(500, 2)).unwrap();
    assert!(!s.can_send(), "blocked on acknowledgment");
    let data = s.poll_transmit().unwrap();
    assert_eq!(
        sync_of(&data).map(|x| x.1),
        Some(true),
        "write's last packet has SREQ"
    );
    let mut values = Vec::new();
    let mut last = Time::from_millis(2);
    while let Some(t) = s.poll_timeout() {
        assert!(t > last);
        values.push((t - last).as_millis() as u64);
        last = t;
        s.handle_timeout(t);
        while s.poll_transmit().is_some() {}
        if s.aborted() {
            break;
        }
        assert!(s.in_handshake());
        assert!(!s.can_send() || s.aborted());
    }
    (values, last, s)
}

#[test]
fn wtimer_backs_off_exponentially_uncapped_until_ctimeout_aborts() {
    let (v, at, mut s) = backoff_sequence(None);
    // WTIMER: 100, 200, 400, … ms; CTIMEOUT (60 s from the first expiry at 102 ms) ends it.
    assert_eq!(
        v,
        vec![100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 9000]
    );
    assert_eq!(at, Time::from_millis(2 + 100 + 60_000));
    assert_eq!(s.counters().wtimer_expiries, 9);
    assert_eq!(s.counters().max_wtimer_ns, 51_200_000_000);
    assert_eq!(done_failed(&mut s, 0), Some(true));
    assert_eq!(s.send(at, Bytes::from_static(b"x")), Err(SendError::Closed));
    s.close(at);
    assert_eq!(s.poll_event(), Some(Event::Completed));
    assert_eq!(s.stats().failed, 1);
}

#[test]
fn wtimer_back_off_capped_at_one_second() {
    let (v, at, s) = backoff_sequence(Some(Duration::from_secs(1)));
    assert_eq!(&v[..6], &[100, 200, 400, 800, 1000, 1000]);
    assert!(v[..v.len() - 1].iter().skip(4).all(|&x| x == 1000));
    assert_eq!(
        at,
        Time::from_millis(2 + 100 + 60_000),
        "CTIMEOUT still 60 s"
    );
    assert!(s.aborted());
    assert_eq!(s.counters().max_wtimer_ns, 1_000_000_000);
}

/// A thesis sender for `n` receivers that sent FIRST at 0, had node 1's answer at 2 ms and
/// was then given a 10-byte write; with FIRST's sync number.
fn first_answered_by_node_1(n: u32) -> (Sender, u16) {
    let cfg = SenderConfig::thesis(NodeId(0), G, receivers(n), true);
    let mut s = Sender::new(cfg);
    s.handle_timeout(Time::ZERO);
    let (sync, _) = sync_of(&s.poll_transmit().unwrap()).unwrap();
    s.handle_packet(Time::from_millis(2), NodeId(1), &cntl(sync, 0));
    s.send(Time::from_millis(2), pattern(10, 3)).unwrap();
    (s, sync)
}

#[test]
fn answered_handshake_stops_ctimeout_and_ends_the_back_off() {
    let (mut s, sync) = first_answered_by_node_1(2);
    assert!(
        s.poll_transmit().is_none(),
        "no data before every receiver answered FIRST"
    );
    s.handle_packet(Time::from_millis(3), NodeId(2), &cntl(sync, 0));
    s.poll_transmit().unwrap();
    // Two expiries: WTIMER 100 then 200 ms, the handshake under way, CTIMEOUT armed.
    for _ in 0..2 {
        let t = s.poll_timeout().unwrap();
        s.handle_timeout(t);
    }
    assert_eq!(s.backoff(), 2);
    assert_eq!(s.wtimer_value(), Duration::from_millis(400));
    let _ = s.poll_transmit().unwrap();
    let hs = s.poll_transmit().unwrap();
    assert!(s.poll_transmit().is_none());
    let (hsync, sreq) = sync_of(&hs).unwrap();
    assert!(sreq);
    // One receiver answers: still in the handshake, back-off kept, no data may go.
    s.handle_packet(Time::from_millis(800), NodeId(1), &cntl(hsync, 1));
    assert!(s.in_handshake());
    assert_eq!(s.backoff(), 2);
    assert!(!s.can_send());
    // The second answers: handshake over, write done, back-off ends, CTIMEOUT stopped.
    s.handle_packet(Time::from_millis(801), NodeId(2), &cntl(hsync, 1));
    assert!(!s.in_handshake());
    assert_eq!(s.backoff(), 0);
    assert!(s.can_send());
    assert_eq!(s.poll_timeout(), None, "no WTIMER, no CTIMEOUT pending");
    assert_eq!(done_failed(&mut s, 0), Some(false));
    // Far beyond 60 s later nothing has aborted.
    s.handle_timeout(Time::from_secs(1_000));
    assert!(!s.aborted());
}

/// A status round's answers survive its retries: node 2 answers the write's SREQ, node 1
/// only the second handshake request; the round is complete then (each answer carries the
/// receiver's whole state), though no request was answered by both.
#[test]
fn handshake_counts_an_answer_to_any_request_of_the_round() {
    let (mut s, sync) = first_answered_by_node_1(2);
    s.handle_packet(Time::from_millis(3), NodeId(2), &cntl(sync, 0));
    let (dsync, sreq) = sync_of(&s.poll_transmit().unwrap()).unwrap();
    assert!(sreq, "the write's packet asks for status");
    s.handle_packet(Time::from_millis(5), NodeId(2), &cntl(dsync, 1));
    let mut asked = Vec::new();
    for _ in 0..2 {
        let t = s.poll_timeout().unwrap();
        s.handle_timeout(t);
        asked.push(sync_of(&s.poll_transmit().unwrap()).unwrap().0);
    }
    assert!(s.in_handshake());
    assert_eq!(s.backoff(), 2);
    // A stale answer from an earlier round does not count.
    s.handle_packet(Time::from_millis(400), NodeId(1), &cntl(sync, 1));
    assert!(s.in_handshake());
    s.handle_packet(Time::from_millis(401), NodeId(1), &cntl(asked[1], 1));
    assert!(!s.in_handshake());
    assert_eq!(s.backoff(), 0);
    assert!(s.can_send());
    assert_eq!(s.poll_timeout(), None, "no WTIMER, no CTIMEOUT pending");
    assert_eq!(done_failed(&mut s, 0), Some(false));
}

/// Handshake answers are not RTT samples (Karn): only the FIRST's answer at 2 ms counts.
#[test]
fn rtt_samples_come_only_from_first_transmissions() {
    let (mut s, _) = first_answered_by_node_1(1);
    s.poll_transmit().unwrap();
    let t = s.poll_timeout().unwrap();
    s.handle_timeout(t);
    let (hsync, _) = sync_of(&s.poll_transmit().unwrap()).unwrap();
    // A very late answer to the handshake: were it a sample, 2·SRTT would exceed 100 ms.
    s.handle_packet(t + Duration::from_secs(5), NodeId(1), &cntl(hsync, 1));
    assert_eq!(s.wtimer_value(), Duration::from_millis(100));
}

fn run_harness(cfg: SenderConfig, n: u32, drop: f64, writes: &[Bytes], seed: u64) -> Harness {
    let mut h = Harness::new(D, drop, seed);
    h.add(Box::new(Sender::new(cfg)));
    for r in 1..=n {
        h.add(Box::new(Receiver::new(ReceiverConfig::new(NodeId(r)))));
    }
    h.set_group(G, (0..=n).map(NodeId).collect());
    let mut next = 0;
    let mut closed = false;
    let mut limit = Time::ZERO;
    for _ in 0..2_000_000 {
        while next < writes.len() && h.can_send(NodeId(0)) {
            let w = writes[next].clone();
            h.with_sender(NodeId(0), |a, now| a.send(now, w).unwrap());
            next += 1;
        }
        if next == writes.len() && !closed {
            closed = true;
            h.with_sender(NodeId(0), |a, now| a.close(now));
        }
        if h.events[0].iter().any(|(_, e)| *e == Event::Completed) {
            let t = h.now() + Duration::from_secs(1);
            h.run_until(t);
            break;
        }
        limit += Duration::from_millis(1);
        h.run_until(limit);
    }
    h
}

fn digest(v: &[Bytes]) -> Vec<(usize, u64)> {
    v.iter()
        .map(|b| {
            let h = b.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &x| {
                (h ^ u64::from(x)).wrapping_mul(0x100_0000_01b3)
            });
            (b.len(), h)
        })
        .collect()
}

/// The data of every message delivered, in delivery order.
fn delivered_data(events: &[(Time, Event)]) -> Vec<Bytes> {
    events
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Delivered { data, .. } => Some(data.clone()),
            _ => None,
        })
        .collect()
}

fn delivered(h: &Harness, i: usize) -> Vec<Bytes> {
    delivered_data(&h.events[i])
}

#[test]
fn end_to_end_on_the_harness_with_loss_both_schemes() {
    let writes: Vec<Bytes> = (0..40).map(|i| pattern(500 + 97 * i, i as u8)).collect();
    for (name, mk) in [
        (
            "thesis",
            SenderConfig::thesis as fn(_, _, _, _) -> SenderConfig,
        ),
        ("improved", SenderConfig::improved),
    ] {
        for seed in 1..4 {
            let cfg = mk(NodeId(0), G, receivers(3), true);
            let h = run_harness(cfg, 3, 0.05, &writes, seed);
            let a = h.agent(NodeId(0)).unwrap();
            assert!(
                h.events[0].iter().any(|(_, e)| *e == Event::Completed),
                "{name} seed {seed}: {:?} at {:?}",
                a.stats(),
                h.now()
            );
            for r in 1..=3 {
                assert_eq!(
                    digest(&delivered(&h, r)),
                    digest(&writes),
                    "{name} seed {seed} receiver {r}"
                );
            }
            let done = h.events[0]
                .iter()
                .filter(|(_, e)| matches!(e, Event::MessageDone { failed: false, .. }))
                .count();
            assert_eq!(done, writes.len());
            assert!(h.agent(NodeId(0)).unwrap().stats().repairs_sent > 0);
        }
    }
}

#[test]
fn non_blocking_window_with_periodic_sreq_under_heavy_loss() {
    let writes: Vec<Bytes> = (0..200).map(|i| pattern(3000, i as u8)).collect();
    let mut cfg = SenderConfig::improved(NodeId(0), G, receivers(2), true);
    cfg.block_on_ack = false;
    cfg.window = 32;
    let h = run_harness(cfg, 2, 0.2, &writes, 9);
    for r in 1..=2 {
        assert_eq!(digest(&delivered(&h, r)), digest(&writes));
    }
}

#[test]
fn unreliable_multicast_delivers_complete_writes_only_and_never_asks() {
    let writes: Vec<Bytes> = (0..100).map(|i| pattern(2000, i as u8)).collect();
    let mut cfg = SenderConfig::thesis(NodeId(0), G, receivers(2), true);
    cfg.error_control = false;
    cfg.block_on_ack = false;
    let h = run_harness(cfg, 2, 0.1, &writes, 5);
    assert!(h.events[0].iter().any(|(_, e)| *e == Event::Completed));
    for r in 1..=2 {
        let got = delivered(&h, r);
        assert!(got.len() < writes.len() && got.len() > 50, "{}", got.len());
        // Each delivered write is one of the sent writes, in order.
        let mut it = writes.iter();
        for g in &got {
            assert!(it.any(|w| w == g));
        }
        assert_eq!(h.agent(NodeId(r as u32)).unwrap().stats().control_sent, 0);
    }
    assert_eq!(h.agent(NodeId(0)).unwrap().stats().repairs_sent, 0);
}

#[test]
fn unicast_mode_sends_to_the_one_receiver() {
    let writes: Vec<Bytes> = (0..20).map(|i| pattern(4000, i as u8)).collect();
    let cfg = SenderConfig::thesis(NodeId(0), G, receivers(1), false);
    let mut s = lossless_pair(cfg);
    s.run_until(Time::from_millis(5));
    for w in &writes {
        s.with_sender(NodeId(0), |a, now| a.send(now, w.clone()).unwrap());
        s.run_until(s.now() + Duration::from_secs(1));
    }
    assert_eq!(digest(&delivered(&s, 1)), digest(&writes));
    assert!(s
        .sent
        .iter()
        .filter(|(_, f, _, _)| *f == NodeId(0))
        .all(|(_, _, d, _)| *d == Dest::Node(NodeId(1))));
}

#[test]
fn late_joiner_starts_at_its_join_point_without_back_fill() {
    let writes: Vec<Bytes> = (0..30).map(|i| pattern(3000, i as u8)).collect();
    let mut cfg = SenderConfig::thesis(NodeId(0), G, receivers(1), true);
    cfg.accept_joins = true;
    let mut h = Harness::new(D, 0.0, 1);
    h.add(Box::new(Sender::new(cfg)));
    h.add(Box::new(Receiver::new(ReceiverConfig::new(NodeId(1)))));
    h.add(Box::new(Receiver::new(ReceiverConfig::new(NodeId(2)))));
    h.set_group(G, vec![NodeId(0), NodeId(1)]);
    let mut next = 0;
    for step in 0..100_000 {
        if step == 50 {
            h.set_group(G, vec![NodeId(0), NodeId(1), NodeId(2)]);
        }
        if next < writes.len() && h.can_send(NodeId(0)) {
            let w = writes[next].clone();
            h.with_sender(NodeId(0), |a, now| a.send(now, w).unwrap());
            next += 1;
        }
        if next == writes.len() {
            h.with_sender(NodeId(0), |a, now| a.close(now));
            break;
        }
        let t = h.now() + Duration::from_millis(1);
        h.run_until(t);
    }
    h.run_until(Time::from_secs(100));
    assert_eq!(digest(&delivered(&h, 1)), digest(&writes));
    let late = delivered(&h, 2);
    assert!(
        !late.is_empty() && late.len() < writes.len(),
        "{}",
        late.len()
    );
    // A contiguous suffix: from its join point on, nothing before.
    assert_eq!(digest(&late), digest(&writes[writes.len() - late.len()..]));
    assert!(h.events[0].iter().any(|(_, e)| *e == Event::Completed));
}

#[test]
fn a_joiner_lacking_released_packets_is_not_waited_for() {
    let mut cfg = SenderConfig::improved(NodeId(0), G, receivers(1), true);
    cfg.accept_joins = true;
    let mut s = lossless_pair(cfg);
    s.run_until(Time::from_millis(5));
    for i in 0..5 {
        s.with_sender(NodeId(0), |a, now| a.send(now, pattern(3000, i)).unwrap());
        s.run_until(s.now() + Duration::from_secs(1));
    }
    // Receiver 1 holds everything, so the sender released it; node 2 reports a status that
    // lacks the very first packet.
    let ignored = s.agent(NodeId(0)).unwrap().stats().ignored;
    s.with_agent(NodeId(0), |a, now| {
        a.handle_packet(now, NodeId(2), &cntl(0, 0))
    });
    s.with_sender(NodeId(0), |a, now| a.send(now, pattern(3000, 9)).unwrap());
    s.with_sender(NodeId(0), |a, now| a.close(now));
    s.run_until(s.now() + Duration::from_secs(5));
    assert_eq!(delivered(&s, 1).len(), 6);
    assert!(s.events[0].iter().any(|(_, e)| *e == Event::Completed));
    assert!(s.agent(NodeId(0)).unwrap().stats().ignored > ignored);
}

#[test]
fn coalescing_packs_small_writes_into_one_packet() {
    let mut cfg = SenderConfig::thesis(NodeId(0), G, receivers(1), true);
    cfg.block_on_ack = false;
    cfg.coalesce = true;
    let mut s = lossless_pair(cfg);
    let writes: Vec<Bytes> = (0..10).map(|i| pattern(100, i)).collect();
    // Queue all ten before the association is established (FIRST not yet answered).
    for w in &writes {
        s.with_sender(NodeId(0), |a, now| a.send(now, w.clone()).unwrap());
    }
    s.with_sender(NodeId(0), |a, now| a.close(now));
    s.run_until(Time::from_secs(5));
    assert_eq!(digest(&delivered(&s, 1)), digest(&writes));
    assert_eq!(s.agent(NodeId(0)).unwrap().stats().data_sent, 1);
    assert!(s.events[0].iter().any(|(_, e)| *e == Event::Completed));
}

#[test]
fn malformed_and_foreign_packets_are_counted_not_fatal() {
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(1)));
    r.handle_packet(Time::ZERO, NodeId(0), b"garbage");
    assert_eq!(r.stats().malformed, 1);
    let mut p = cntl(1, 0);
    // Another session.
    p[8..12].copy_from_slice(&7u32.to_be_bytes());
    r.handle_packet(Time::ZERO, NodeId(0), &p);
    assert_eq!(r.stats().ignored, 1);
    let mut s = Sender::new(SenderConfig::thesis(NodeId(0), G, receivers(1), true));
    s.handle_packet(Time::ZERO, NodeId(5), &cntl(1, 0));
    assert_eq!(s.stats().ignored, 1, "status from a stranger");
    // A bad RECS payload is counted, not a panic.
    let bad = Packet::to_vec(
        Envelope::default(),
        &Message::Xtp(wire::Message::Data {
            seq: 0,
            sync: 0,
            options: opt::RECS | opt::EOM,
            payload: &[0, 9, 1],
        }),
    )
    .unwrap();
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(1)));
    r.handle_packet(Time::ZERO, NodeId(0), &bad);
    assert_eq!(r.stats().malformed, 1);
}

/// Found by the `receiver` fuzz target (docs/fuzzing.md): a DATA numbered `u64::MAX`, the
/// first a receiver saw or one it could accept, moved its window past the end of the sequence
/// space (an overflow: a panic with overflow checks, a window back at 0 without). The last
/// sequence number is never accepted.
#[test]
fn data_at_the_end_of_the_sequence_space_is_refused_not_an_overflow() {
    let data = |seq, options| {
        Packet::to_vec(
            Envelope::default(),
            &Message::Xtp(wire::Message::Data {
                seq,
                sync: 0,
                options,
                payload: b"x",
            }),
        )
        .unwrap()
    };
    // A status request there: the status's alloc (base + buffer) saturates.
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(1)));
    r.handle_packet(
        Time::ZERO,
        NodeId(0),
        &data(u64::MAX - 1, opt::EOM | opt::SREQ),
    );
    assert!(r.poll_transmit().is_some(), "the status is sent");
    for options in [opt::EOM, opt::EOM | opt::NOERR] {
        let mut r = Receiver::new(ReceiverConfig::new(NodeId(1)));
        r.handle_packet(Time::ZERO, NodeId(0), &data(u64::MAX, options));
        assert_eq!(r.stats().delivered, 0);
        assert_eq!(r.stats().ignored, 1);
        let mut r = Receiver::new(ReceiverConfig::new(NodeId(1)));
        r.handle_packet(Time::ZERO, NodeId(0), &data(u64::MAX - 1, options));
        r.handle_packet(Time::ZERO, NodeId(0), &data(u64::MAX, options));
        assert_eq!(
            r.stats().ignored,
            1,
            "u64::MAX refused after u64::MAX - 1 moved the window to it"
        );
    }
}
