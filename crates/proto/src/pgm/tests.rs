use super::*;
use crate::SenderAgent;
use crate::{GroupId, IfaceId, RouteDecision, RouterAgent};
use rmcast_wire::Packet;
use std::collections::BTreeSet;

pub(super) const G: GroupId = GroupId(1);

pub(super) fn pkt(from: u32, msg: wire::Message<'_>) -> Vec<u8> {
    let retransmission = matches!(
        msg,
        wire::Message::Rdata { .. } | wire::Message::Parity { .. }
    );
    crate::testkit::datagram(from, retransmission, &msg.into())
}

pub(super) fn odata(seq: u64, payload: &[u8]) -> Vec<u8> {
    pkt(0, wire::Message::Odata { seq, payload })
}

pub(super) fn rdata(seq: u64, payload: &[u8]) -> Vec<u8> {
    pkt(0, wire::Message::Rdata { seq, payload })
}

fn spm(lead: u64) -> Vec<u8> {
    pkt(
        0,
        wire::Message::Spm {
            spm_seq: 0,
            trail: 0,
            lead,
        },
    )
}

pub(super) fn ne() -> NetworkElement {
    NetworkElement::new(NeConfig::new(NodeId(50), G))
}

/// `nak` from node `from` arrives at the network element on `iface`, on its way up to the
/// source (node 0).
/// A network element that node 7's NAK for `seq` reached from below through `iface`; with
/// the NAK.
fn ne_after_nak(seq: u64, iface: u32) -> (NetworkElement, Vec<u8>) {
    let mut r = ne();
    let nak = pkt(7, wire::Message::Nak { seq });
    up(&mut r, iface, 7, &nak);
    (r, nak)
}

pub(super) fn up(r: &mut NetworkElement, iface: u32, from: u32, nak: &[u8]) -> RouteDecision {
    r.on_packet(
        Time::ZERO,
        IfaceId(iface),
        NodeId(from),
        Dest::Node(NodeId(0)),
        nak,
    )
}

/// A NAK for `seq` from node 5 reaches the source at `at` ms: what it multicasts in answer
/// (every answer goes to the group).
fn answers(s: &mut Source, at: u64, seq: u64) -> Vec<&'static str> {
    s.handle_packet(
        Time::from_millis(at),
        NodeId(5),
        &pkt(5, wire::Message::Nak { seq }),
    );
    let mut kinds = Vec::new();
    while let Some(t) = s.poll_transmit() {
        assert_eq!(t.dest, Dest::Group(G));
        match Packet::decode(&t.payload).unwrap().message {
            Message::Pgm(wire::Message::Ncf { .. }) => kinds.push("ncf"),
            Message::Pgm(wire::Message::Rdata { .. }) => kinds.push("rdata"),
            m => panic!("unexpected {m:?}"),
        }
    }
    kinds
}

#[test]
fn ne_forwards_first_nak_absorbs_later_ones_and_confirms_each() {
    let mut r = ne();
    let nak = pkt(7, wire::Message::Nak { seq: 4 });
    let d = up(&mut r, 2, 7, &nak);
    assert_eq!(d, RouteDecision::Forward);
    let ncf = r.poll_transmit().unwrap();
    assert_eq!(ncf.via, Some(vec![IfaceId(2)]));
    assert_eq!(ncf.transmit.dest, Dest::Group(G));
    let d = up(&mut r, 3, 8, &nak);
    assert_eq!(d, RouteDecision::Consume);
    assert_eq!(r.poll_transmit().unwrap().via, Some(vec![IfaceId(3)]));
    let d = up(&mut r, 2, 9, &nak);
    assert_eq!(d, RouteDecision::Consume);
    assert_eq!(r.interfaces(4), vec![IfaceId(2), IfaceId(3)]);
    assert_eq!(r.state_len(), 1);
}

/// RFC 3208's NAK_ELIM_IVL: a repeat NAK is discarded only within `nak_elim` of the last one
/// forwarded; after it, one goes upstream again (its RDATA was lost, or the source held the
/// first off), the interfaces that asked are kept, and the state lives on from then.
#[test]
fn ne_forwards_a_repeat_nak_after_the_elimination_interval() {
    let mut c = NeConfig::new(NodeId(50), G);
    c.nak_elim = Some(Duration::from_millis(20));
    let mut r = NetworkElement::new(c);
    let nak = pkt(7, wire::Message::Nak { seq: 4 });
    let at = |r: &mut NetworkElement, ms: u64, iface: u32| {
        let t = Time::from_millis(ms);
        r.on_packet(t, IfaceId(iface), NodeId(7), Dest::Node(NodeId(0)), &nak)
    };
    assert_eq!(at(&mut r, 0, 1), RouteDecision::Forward);
    assert_eq!(at(&mut r, 19, 2), RouteDecision::Consume);
    assert_eq!(at(&mut r, 20, 1), RouteDecision::Forward);
    assert_eq!(at(&mut r, 30, 1), RouteDecision::Consume);
    assert_eq!(r.interfaces(4), vec![IfaceId(1), IfaceId(2)]);
    assert_eq!((r.naks_forwarded, r.naks_absorbed), (2, 2));
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(2020)));
    // The seed's model (the default): discarded while the state lives.
    let mut r = ne();
    assert_eq!(at(&mut r, 0, 1), RouteDecision::Forward);
    assert_eq!(at(&mut r, 1999, 1), RouteDecision::Consume);
}

#[test]
fn ne_rdata_goes_only_where_asked_and_clears_state() {
    let (mut r, nak) = ne_after_nak(4, 3);
    let rdata = rdata(4, b"x");
    let d = r.on_packet(Time::ZERO, IfaceId(0), NodeId(0), Dest::Group(G), &rdata);
    assert_eq!(d, RouteDecision::ForwardOn(vec![IfaceId(3)]));
    assert_eq!(r.state_len(), 0);
    // a second RDATA (a repeated retransmission) finds no state and is discarded
    let d = r.on_packet(Time::ZERO, IfaceId(0), NodeId(0), Dest::Group(G), &rdata);
    assert_eq!(d, RouteDecision::Consume);
    assert_eq!(r.rdata_discarded, 1);
    // a NAK after the RDATA passed recreates state and is forwarded again
    let d = up(&mut r, 1, 9, &nak);
    assert_eq!(d, RouteDecision::Forward);
    assert_eq!(r.peak_state(), 1);
}

#[test]
fn ne_state_expires() {
    let (mut r, _) = ne_after_nak(1, 1);
    let t = r.poll_timeout().unwrap();
    assert_eq!(t, Time::from_secs(2));
    r.handle_timeout(t);
    assert_eq!(r.state_len(), 0);
    assert_eq!(
        r.on_packet(
            Time::ZERO,
            IfaceId(0),
            NodeId(0),
            Dest::Group(G),
            &odata(9, b"")
        ),
        RouteDecision::Forward
    );
}

#[test]
fn source_answers_every_nak_or_batches_with_delay() {
    let mut s = Source::new(SourceConfig::new(NodeId(0), G));
    s.send(Time::ZERO, Bytes::from_static(b"a")).unwrap();
    while s.poll_transmit().is_some() {}
    let nak = pkt(5, wire::Message::Nak { seq: 0 });
    for _ in 0..3 {
        s.handle_packet(Time::ZERO, NodeId(5), &nak);
    }
    assert_eq!(s.stats().repairs_sent, 3);
    let mut c = SourceConfig::new(NodeId(0), G);
    c.repair_delay = Duration::from_millis(20);
    c.spm_interval = None;
    let mut s = Source::new(c);
    s.send(Time::ZERO, Bytes::from_static(b"a")).unwrap();
    for i in 0..3 {
        s.handle_packet(Time::from_millis(i), NodeId(5), &nak);
    }
    assert_eq!(s.stats().repairs_sent, 0);
    s.handle_timeout(Time::from_millis(20));
    assert_eq!(s.stats().repairs_sent, 1);
}

/// With a hold-off, a burst of NAKs for one packet (receivers sharing a loss, or a flood) is
/// answered by one NCF and one RDATA; a NAK after the hold-off is answered again; other
/// packets are not held off.
#[test]
fn source_answers_a_burst_of_naks_once_per_holdoff() {
    let mut c = SourceConfig::new(NodeId(0), G);
    c.spm_interval = None;
    c.rdata_holdoff = Duration::from_millis(20);
    let mut s = Source::new(c);
    s.send(Time::ZERO, Bytes::from_static(b"a")).unwrap();
    s.send(Time::ZERO, Bytes::from_static(b"b")).unwrap();
    while s.poll_transmit().is_some() {}
    assert_eq!(answers(&mut s, 1, 0), ["ncf", "rdata"]);
    for at in 2..21 {
        assert!(answers(&mut s, at, 0).is_empty(), "at {at} ms");
    }
    assert_eq!(answers(&mut s, 5, 1), ["ncf", "rdata"]);
    assert_eq!(answers(&mut s, 21, 0), ["ncf", "rdata"]);
    assert_eq!(s.stats().repairs_sent, 3);
    assert_eq!((s.naks_received, s.naks_held_off), (22, 19));
}

#[test]
fn receiver_naks_at_once_with_zero_backoff_and_ncf_moves_it_to_wait_data() {
    let mut r = Receiver::new(
        ReceiverConfig::new(NodeId(3), NodeId(0)),
        AgentRng::from_seed(1),
    );
    r.handle_packet(Time::ZERO, NodeId(0), &odata(1, b"b"));
    let t = r.poll_transmit().unwrap();
    assert_eq!(t.dest, Dest::Node(NodeId(0)));
    assert!(matches!(
        r.poll_event(),
        Some(Event::LossDetected { seq: 0 })
    ));
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(500)));
    r.handle_packet(
        Time::from_millis(10),
        NodeId(0),
        &pkt(0, wire::Message::Ncf { seq: 0 }),
    );
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(1010)));
    r.handle_packet(Time::from_millis(20), NodeId(0), &rdata(0, b"a"));
    let got: Vec<_> = std::iter::from_fn(|| r.poll_event()).collect();
    assert_eq!(
        got,
        vec![
            Event::Delivered {
                seq: 0,
                data: Bytes::from_static(b"a")
            },
            Event::Delivered {
                seq: 1,
                data: Bytes::from_static(b"b")
            }
        ]
    );
    assert_eq!(r.poll_timeout(), None);
}

#[test]
fn receiver_backoff_is_suppressed_by_ncf() {
    let mut c = ReceiverConfig::new(NodeId(3), NodeId(0));
    c.nak_backoff = Duration::from_millis(50);
    let mut r = Receiver::new(c, AgentRng::from_seed(4));
    r.handle_packet(Time::ZERO, NodeId(0), &spm(1));
    let t = r.poll_timeout().unwrap();
    assert!(t <= Time::from_millis(50));
    r.handle_packet(
        Time::ZERO,
        NodeId(0),
        &pkt(0, wire::Message::Ncf { seq: 0 }),
    );
    r.handle_timeout(t);
    assert!(r.poll_transmit().is_none(), "NAK suppressed");
}

/// The source (with SPMs every 100 ms) and five receivers (NAK timers 30 ms) on the full
/// mesh with 10 % loss (no routers: the source answers every NAK itself), `messages` sent
/// 5 ms apart, run for 20 s; every receiver must hold every message. The source's repairs.
fn harness_run(fec_k: u16, messages: u64, what: &str) -> u64 {
    harness(fec_k, 0, messages, 5, what).0
}

/// [`harness_run`] with `proactive` parity symbols after each block and messages `gap_ms`
/// apart: the source's repairs and the NAKs (packet and block) the receivers sent.
fn harness(fec_k: u16, proactive: u16, messages: u64, gap_ms: u64, what: &str) -> (u64, u64) {
    harness_with(fec_k, proactive, 1, messages, gap_ms, what)
}

/// [`harness`] with receivers naming up to `nak_list` losses per NAK.
pub(super) fn harness_with(
    fec_k: u16,
    proactive: u16,
    nak_list: u16,
    messages: u64,
    gap_ms: u64,
    what: &str,
) -> (u64, u64) {
    let delay = Duration::from_millis(5);
    let mut h = crate::testkit::Harness::new(delay, 0.1, 9);
    let mut sc = SourceConfig::new(NodeId(0), G);
    sc.spm_interval = Some(Duration::from_millis(100));
    sc.fec_k = fec_k;
    sc.fec_proactive = proactive;
    let src = h.add(Box::new(Source::new(sc)));
    let mut ids = vec![src];
    for i in 1..6 {
        let mut rc = ReceiverConfig::new(NodeId(i), src);
        rc.nak_repeat = Duration::from_millis(30);
        rc.nak_rdata = Duration::from_millis(30);
        rc.fec_k = fec_k;
        rc.fec_proactive = proactive;
        rc.nak_list = nak_list;
        ids.push(h.add(Box::new(Receiver::new(
            rc,
            AgentRng::derive(9, NodeId(i), 0),
        ))));
    }
    h.set_group(G, ids.clone());
    for k in 0..messages {
        h.run_until(Time::from_millis(gap_ms * k));
        h.with_sender(src, |a, now| {
            a.send(now, crate::testkit::message(k)).unwrap()
        });
    }
    h.run_until(Time::from_secs(20));
    assert!(h.stats.copies_dropped > 100);
    let receivers = ids[1..].iter().map(|r| r.0 as usize);
    crate::testkit::assert_delivered(&h, receivers, messages, what);
    let naks = ids[1..]
        .iter()
        .map(|&r| h.agent(r).unwrap().stats().control_sent)
        .sum();
    (h.agent(src).unwrap().stats().repairs_sent, naks)
}

#[test]
fn harness_end_to_end_exactly_once_in_order() {
    harness_run(0, 300, "pgm end to end");
}

#[test]
fn source_reports_completed_only_after_linger_and_then_stops_spms() {
    let mut s = Source::new(SourceConfig::new(NodeId(0), G));
    s.close(Time::from_secs(1));
    assert_eq!(s.poll_event(), None);
    let mut now = Time::ZERO;
    while let Some(t) = s.poll_timeout() {
        now = t;
        s.handle_timeout(t);
        if s.poll_event() == Some(Event::Completed) {
            break;
        }
    }
    assert_eq!(now, Time::from_secs(6));
    assert_eq!(s.poll_timeout(), None);
}

#[test]
fn the_transmit_window_holds_the_source_until_every_receiver_delivered() {
    let mut c = SourceConfig::new(NodeId(0), G);
    c.txw = Some(3);
    c.spm_interval = None;
    let mut s = Source::new(c);
    for _ in 0..3 {
        assert!(s.can_send());
        s.send(Time::ZERO, Bytes::from_static(b"data")).unwrap();
    }
    assert!(
        !s.can_send(),
        "three packets beyond the trail fill a window of three"
    );
    while s.poll_transmit().is_some() {}
    s.delivered_by_all(Time::ZERO, 2);
    assert!(s.can_send(), "two delivered by all open two places");
    // The newest three packets are kept, delivered or not: a receiver that restarts (NAKing
    // from 0) is repaired from them.
    assert_eq!(
        answers(&mut s, 0, 0),
        ["ncf", "rdata"],
        "kept for a restart"
    );
    // A report beyond what was sent releases no more than was sent.
    s.delivered_by_all(Time::ZERO, 99);
    for _ in 0..3 {
        assert!(s.can_send());
        s.send(Time::ZERO, Bytes::from_static(b"more")).unwrap();
    }
    assert!(!s.can_send());
    while s.poll_transmit().is_some() {}
    // Six sent, three delivered: only the newest three are kept.
    assert!(answers(&mut s, 0, 2).is_empty(), "older than the window");
    assert_eq!(
        answers(&mut s, 0, 3),
        ["ncf", "rdata"],
        "RDATA for a packet in the window"
    );
}

#[test]
fn without_a_transmit_window_reports_change_nothing() {
    let mut s = Source::new(SourceConfig::new(NodeId(0), G));
    for _ in 0..5 {
        s.send(Time::ZERO, Bytes::from_static(b"data")).unwrap();
    }
    s.delivered_by_all(Time::ZERO, 5);
    while s.poll_transmit().is_some() {}
    assert_eq!(
        answers(&mut s, 0, 0),
        ["ncf", "rdata"],
        "RDATA: the simulator's source keeps everything"
    );
}

/// Found by the `receiver` fuzz target (docs/fuzzing.md): one forged SPM whose lead is far
/// ahead made the receiver start NAK state for every sequence number up to it (2^64 for
/// `lead = u64::MAX`: the receive never returned), and an NCF for `u64::MAX` overflowed.
/// Losses are tracked only inside the receive window, where data can still be accepted.
#[test]
fn receiver_tracks_losses_only_inside_its_window() {
    let mut c = ReceiverConfig::new(NodeId(3), NodeId(0));
    c.window = 16;
    let mut r = Receiver::new(c, AgentRng::from_seed(4));
    let spm = |lead| spm(lead);
    let losses = |r: &mut Receiver| crate::budget::losses_detected(r);
    r.handle_packet(Time::ZERO, NodeId(0), &spm(1_000));
    assert_eq!(losses(&mut r), 16, "losses beyond the window");
    for lead in [1 << 40, u64::MAX] {
        r.handle_packet(Time::ZERO, NodeId(0), &spm(lead));
    }
    r.handle_packet(
        Time::ZERO,
        NodeId(0),
        &pkt(0, wire::Message::Ncf { seq: u64::MAX }),
    );
    assert_eq!(losses(&mut r), 0);
    // The window moves on: data at its base makes room for one more loss, which the next
    // SPM announces.
    r.handle_packet(Time::ZERO, NodeId(0), &odata(0, b"x"));
    r.handle_packet(Time::ZERO, NodeId(0), &spm(u64::MAX));
    assert_eq!(losses(&mut r), 1);
}

/// A receiver (adaptive NAK timers with floor `nak_rto_min`, or fixed) that has just found
/// seq 0 lost: ODATA 1 arrived at time 0.
fn receiver_losing_seq_0(nak_rto_min: Option<Duration>) -> Receiver {
    let mut c = ReceiverConfig::new(NodeId(3), NodeId(0));
    c.nak_rto_min = nak_rto_min;
    let mut r = Receiver::new(c, AgentRng::from_seed(1));
    r.handle_packet(Time::ZERO, NodeId(0), &odata(1, b"d"));
    r
}

#[test]
fn adaptive_receiver_repeats_after_the_measured_repair_round_trip() {
    // seq 0 lost: NAK at once; before any sample the fixed 500 ms stand
    let mut r = receiver_losing_seq_0(Some(Duration::from_millis(30)));
    assert!(r.poll_transmit().is_some());
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(500)));
    // NCF 4 ms later: RTO = 4 + 4·2 = 12 ms, below the 30-ms floor
    let ncf = pkt(0, wire::Message::Ncf { seq: 0 });
    r.handle_packet(Time::from_millis(4), NodeId(0), &ncf);
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(34)));
    // the RDATA was lost: NAKed again at 34 ms (not 1,004)
    r.handle_timeout(Time::from_millis(34));
    assert!(r.poll_transmit().is_some(), "NAK repeated");
    assert_eq!(r.stats().timeouts, 1);
    // the repeated NAK's answer is no sample (Karn); the RDATA completes the loss
    r.handle_packet(Time::from_millis(300), NodeId(0), &ncf);
    r.handle_packet(Time::from_millis(301), NodeId(0), &rdata(0, b"a"));
    assert_eq!(r.stats().delivered, 2);
    assert_eq!(r.poll_timeout(), None);
    // the next loss starts from the measured timeout (the back-off was seq 0's own)
    r.handle_packet(Time::from_millis(400), NodeId(0), &odata(3, b"d"));
    assert!(r.poll_transmit().is_some());
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(430)));
}

/// A burst of losses NAKed together that times out together backs off per loss: each loss's
/// next wait is the timeout doubled once per wait of its own that ran out since the last
/// sample, not the cap, and a fresh sample starts the doublings again. Found on sockets (a
/// receiver behind a relay whose link was down for 200 ms): with one estimator backing off
/// per expiry, hundreds of expiries doubled the timeout to its 1-s cap, Karn's rule then
/// found no fresh sample among the repeated NAKs, and every later lost repair waited 1 s.
/// A receiver with adaptive timers (30-ms floor) that lost packets 0..200 (ODATA 200
/// revealed them, each NAKed at once), all confirmed 10 ms later: 200 equal samples, so the
/// timeout is 10 ms (and the 1-us granularity), below the floor. Returns it and that timeout.
fn burst_confirmed() -> (Receiver, Duration) {
    let mut c = ReceiverConfig::new(NodeId(3), NodeId(0));
    c.nak_rto_min = Some(Duration::from_millis(30));
    let mut r = Receiver::new(c, AgentRng::from_seed(1));
    r.handle_packet(Time::ZERO, NodeId(0), &odata(200, b"d"));
    assert_eq!(naks(&mut r).len(), 200);
    for seq in 0..200 {
        let ncf = pkt(0, wire::Message::Ncf { seq });
        r.handle_packet(Time::from_millis(10), NodeId(0), &ncf);
    }
    (r, Duration::from_millis(10) + Duration::from_micros(1))
}

#[test]
fn a_burst_of_expiries_backs_off_per_loss() {
    let (mut r, rto) = burst_confirmed();
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(40)));
    // no RDATA within the floor: 200 waits run out together and are NAKed again (the round's
    // budget, 1,024 NAKs, has room for all of this test's); each waits the timeout doubled
    // once, still the floor, not nak_repeat's 500 ms
    r.handle_timeout(Time::from_millis(40));
    assert_eq!(naks(&mut r).len(), 200);
    assert_eq!(r.stats().timeouts, 200);
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(70)));
    // unanswered again: doubled twice (40 ms), above the floor
    r.handle_timeout(Time::from_millis(70));
    assert_eq!(naks(&mut r).len(), 200);
    let third = Time::from_millis(70) + rto * 4;
    assert_eq!(r.poll_timeout(), Some(third));
    // a new loss meanwhile starts from the timeout, and its answer is a fresh sample
    r.handle_packet(Time::from_millis(80), NodeId(0), &odata(202, b"d"));
    assert_eq!(naks(&mut r), vec![201]);
    let ncf = pkt(0, wire::Message::Ncf { seq: 201 });
    r.handle_packet(Time::from_millis(90), NodeId(0), &ncf);
    r.handle_packet(Time::from_millis(91), NodeId(0), &rdata(201, b"r"));
    // so when the 200 run out a third time their doublings start again: the floor, where
    // without the sample they would wait the timeout doubled three times (80 ms)
    r.handle_timeout(third);
    assert_eq!(naks(&mut r).len(), 200);
    assert_eq!(r.stats().timeouts, 600);
    assert_eq!(r.poll_timeout(), Some(third + Duration::from_millis(30)));
}

/// A repair that gets through clears the back-offs as a fresh sample does. Behind a slow port
/// most NAKs are repeats, whose answers are no samples (Karn), while repairs stream in:
/// counting samples alone, a loss whose repair was lost several times waited its doubled
/// timeout (up to the 1-s cap) while the port idled (issue 59's uneven bridge).
#[test]
fn a_repair_getting_through_clears_the_back_offs() {
    let (mut r, rto) = burst_confirmed();
    // two waits run out: the next is the timeout doubled twice (40 ms), above the floor
    r.handle_timeout(Time::from_millis(40));
    assert_eq!(naks(&mut r).len(), 200);
    r.handle_timeout(Time::from_millis(70));
    assert_eq!(naks(&mut r).len(), 200);
    let third = Time::from_millis(70) + rto * 4;
    assert_eq!(r.poll_timeout(), Some(third));
    // the repair of one of them arrives (no sample: it was NAKed three times)
    r.handle_packet(Time::from_millis(80), NodeId(0), &rdata(0, b"r"));
    // so when the other 199 run out a third time their doublings start again: the floor
    r.handle_timeout(third);
    assert_eq!(naks(&mut r).len(), 199);
    assert_eq!(r.poll_timeout(), Some(third + Duration::from_millis(30)));
}

/// After an NCF a receiver waits the repair round trip's timeout plus the measured delay from
/// an NCF to its repair: the NCF leaves the source at once, its repair waits in the source's
/// paced queue. Behind a slow port that queue held 100-200 ms, the 30-ms waits ran out while
/// the repairs were still queued, and most NAKs asked for repairs queued already.
#[test]
fn the_wait_for_a_repair_counts_its_delay_behind_the_ncf() {
    let mut r = receiver_losing_seq_0(Some(Duration::from_millis(30)));
    assert!(r.poll_transmit().is_some());
    let ncf = |seq| pkt(0, wire::Message::Ncf { seq });
    // NCF 4 ms later (the repair round trip's timeout is the 30-ms floor); no delay measured
    // yet, so the repair is awaited for the floor alone
    r.handle_packet(Time::from_millis(4), NodeId(0), &ncf(0));
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(34)));
    // its repair comes 20 ms after the NCF: the first delay sample (timeout 20 + 4 x 10 ms)
    r.handle_packet(Time::from_millis(24), NodeId(0), &rdata(0, b"a"));
    // the next loss: NAK at 100 ms, NCF at 104 ms, awaited for 30 + 60 ms
    r.handle_packet(Time::from_millis(100), NodeId(0), &odata(3, b"d"));
    assert!(r.poll_transmit().is_some());
    r.handle_packet(Time::from_millis(104), NodeId(0), &ncf(2));
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(194)));
}

/// Behind a slow port the NCF is dropped as everything else is, and the repair comes after
/// the source's queue of repairs: taken as a round trip, that delay made the NAK timers 1 s
/// (issue 59). Only a confirmation measures the round trip.
#[test]
fn data_that_comes_before_any_ncf_is_no_round_trip_sample() {
    let mut r = receiver_losing_seq_0(Some(Duration::from_millis(30)));
    assert!(r.poll_transmit().is_some());
    // NCF 4 ms later: RTO at the 30-ms floor; the repair follows
    r.handle_packet(
        Time::from_millis(4),
        NodeId(0),
        &pkt(0, wire::Message::Ncf { seq: 0 }),
    );
    r.handle_packet(Time::from_millis(5), NodeId(0), &rdata(0, b"a"));
    // seq 2 lost: NAKed once at 100 ms, its NCF lost, its repair 29 ms later (as a sample it
    // would raise the timeout to 4 + 25 / 8 + 4 x 7.75 = 38 ms)
    r.handle_packet(Time::from_millis(100), NodeId(0), &odata(3, b"d"));
    assert_eq!(naks(&mut r), vec![2]);
    r.handle_packet(Time::from_millis(129), NodeId(0), &rdata(2, b"c"));
    // seq 4 lost: its NAK is repeated after the floor, not after 38 ms
    r.handle_packet(Time::from_millis(200), NodeId(0), &odata(5, b"f"));
    assert_eq!(naks(&mut r), vec![4]);
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(230)));
    assert_eq!(r.stats().delivered, 4, "0-3; 5 waits for 4");
}

#[test]
fn adaptive_waits_never_exceed_the_fixed_timers() {
    let mut r = receiver_losing_seq_0(Some(Duration::from_millis(30)));
    // an answer 800 ms late: RTO 2.4 s, capped by nak_rdata (1 s)
    let ncf = pkt(0, wire::Message::Ncf { seq: 0 });
    r.handle_packet(Time::from_millis(800), NodeId(0), &ncf);
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(1800)));
    // and a NAK's wait by nak_repeat (500 ms)
    r.handle_packet(Time::from_millis(900), NodeId(0), &odata(3, b"d"));
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(1400)));
}

#[test]
fn fixed_receiver_keeps_the_seed_s_timers() {
    let mut r = receiver_losing_seq_0(None);
    let ncf = pkt(0, wire::Message::Ncf { seq: 0 });
    r.handle_packet(Time::from_millis(4), NodeId(0), &ncf);
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(1004)));
}

/// The NAKs a receiver sent since the last call, by sequence number.
fn naks(r: &mut Receiver) -> Vec<u64> {
    std::iter::from_fn(|| r.poll_transmit())
        .filter_map(|t| match Packet::decode(&t.payload).unwrap().message {
            Message::Pgm(wire::Message::Nak { seq }) => Some(seq),
            _ => None,
        })
        .collect()
}

/// Found by the `receiver` fuzz target (docs/fuzzing.md): one SPM whose lead is far ahead but
/// inside the receive window made the receiver NAK every packet up to it at once (60,000
/// datagrams in one instant), and again every repeat interval. The budget sends at most
/// [`REQUESTS_PER_ROUND`] NAKs per round; the others wait, and over the rounds every loss is
/// NAKed.
#[test]
fn a_lead_far_ahead_costs_at_most_the_budget_per_round_and_every_loss_is_naked() {
    let mut r = Receiver::new(
        ReceiverConfig::new(NodeId(3), NodeId(0)),
        AgentRng::from_seed(1),
    );
    let lead = 60_000;
    r.handle_packet(Time::ZERO, NodeId(0), &spm(lead));
    let first = naks(&mut r);
    assert_eq!(first.len(), REQUESTS_PER_ROUND, "NAKs at once");
    assert_eq!(first, (0..REQUESTS_PER_ROUND as u64).collect::<Vec<_>>());
    let mut asked: BTreeSet<u64> = first.into_iter().collect();
    let mut rounds = 1;
    while asked.len() < lead as usize {
        let now = r.poll_timeout().expect("the waiting NAKs keep a timer");
        r.handle_timeout(now);
        let sent = naks(&mut r);
        assert!(
            sent.len() <= REQUESTS_PER_ROUND,
            "{} NAKs at {now:?}",
            sent.len()
        );
        asked.extend(sent);
        rounds += 1;
        assert!(rounds <= 200, "only {} losses NAKed", asked.len());
    }
    assert_eq!(asked, (0..lead).collect());
    // A round is one NAK repeat interval (500 ms). The source never answers, so the repeats
    // of earlier NAKs share the rounds with the first ones: at most twice the rounds a budget
    // of first NAKs alone would take.
    assert!(
        rounds <= 2 * lead.div_ceil(REQUESTS_PER_ROUND as u64),
        "{rounds} rounds"
    );
}

/// The budget defers, it does not drop: data for a waiting loss ends its wait, an NCF moves it
/// to waiting for the data, and a source that answers every NAK repairs the whole storm.
#[test]
fn losses_the_budget_deferred_are_repaired_once_the_source_answers() {
    let mut r = Receiver::new(
        ReceiverConfig::new(NodeId(3), NodeId(0)),
        AgentRng::from_seed(1),
    );
    let lead = 3 * REQUESTS_PER_ROUND as u64;
    r.handle_packet(Time::ZERO, NodeId(0), &spm(lead));
    let mut now = Time::ZERO;
    loop {
        let sent = naks(&mut r);
        assert!(sent.len() <= REQUESTS_PER_ROUND);
        for seq in sent {
            r.handle_packet(now, NodeId(0), &rdata(seq, b"r"));
        }
        if r.stats().delivered == lead {
            break;
        }
        now = r.poll_timeout().expect("losses wait for a round");
        r.handle_timeout(now);
    }
    assert_eq!(now, Time::from_millis(1_000), "three rounds of 500 ms");
    assert_eq!(r.poll_timeout(), None, "nothing left to ask for");
}

// ------------------------------------------------------------------ FEC repair

/// A source with blocks of `k` that sent `n` one-byte-and-more messages (without SPMs).
fn fec_source(k: u16, n: u64) -> Source {
    let mut c = SourceConfig::new(NodeId(0), G);
    c.spm_interval = None;
    c.fec_k = k;
    let mut s = Source::new(c);
    for i in 0..n {
        s.send(Time::ZERO, crate::testkit::message(i)).unwrap();
    }
    while s.poll_transmit().is_some() {}
    s
}

/// What the source multicasts for a block NAK: the BNCF's total and the parity indices.
fn block_answer(s: &mut Source, block: u64, total: u16) -> (Option<u16>, Vec<u16>) {
    s.handle_packet(
        Time::ZERO,
        NodeId(5),
        &pkt(5, wire::Message::BlockNak { block, total }),
    );
    let (mut ncf, mut parity) = (None, Vec::new());
    while let Some(t) = s.poll_transmit() {
        match Packet::decode(&t.payload).unwrap().message {
            Message::Pgm(wire::Message::BlockNcf { block: b, total }) => {
                assert_eq!(b, block);
                ncf = Some(total);
            }
            Message::Pgm(wire::Message::Parity {
                block: b, index, k, ..
            }) => {
                assert_eq!((b, k), (block, 4));
                parity.push(index);
            }
            m => panic!("unexpected {m:?}"),
        }
    }
    (ncf, parity)
}

#[test]
fn source_answers_a_block_nak_with_the_next_unused_parity_indices() {
    let mut s = fec_source(4, 6);
    assert_eq!(block_answer(&mut s, 0, 2), (Some(2), vec![0, 1]));
    // a NAK asking for no more than was sent is confirmed, not answered
    assert_eq!(block_answer(&mut s, 0, 1), (Some(2), vec![]));
    assert_eq!(block_answer(&mut s, 0, 3), (Some(3), vec![2]));
    // block 1 is not whole yet (6 of its 8 packets): no answer
    assert_eq!(block_answer(&mut s, 1, 1), (None, vec![]));
    assert_eq!(s.stats().repairs_sent, 3);
    assert_eq!(s.block_naks_received, 3);
    // with FEC off a block NAK is ignored
    let mut plain = fec_source(0, 4);
    plain.handle_packet(
        Time::ZERO,
        NodeId(5),
        &pkt(5, wire::Message::BlockNak { block: 0, total: 1 }),
    );
    assert!(plain.poll_transmit().is_none());
}

fn block_nak(block: u64, total: u16) -> Vec<u8> {
    pkt(7, wire::Message::BlockNak { block, total })
}

fn parity_pkt(block: u64, index: u16) -> Vec<u8> {
    pkt(
        0,
        wire::Message::Parity {
            block,
            index,
            k: 4,
            payload: b"pp",
        },
    )
}

/// The BNCF total a network element sent down, and where.
fn ne_ncf(r: &mut NetworkElement) -> (u16, Vec<IfaceId>) {
    let t = r.poll_transmit().unwrap();
    match Packet::decode(&t.transmit.payload).unwrap().message {
        Message::Pgm(wire::Message::BlockNcf { total, .. }) => (total, t.via.unwrap()),
        m => panic!("unexpected {m:?}"),
    }
}

/// With an elimination interval a repeat block NAK asking no more parity goes up again
/// once the interval has passed since the last one forwarded.
#[test]
fn ne_forwards_a_repeat_block_nak_after_the_elimination_interval() {
    let mut c = NeConfig::new(NodeId(50), G);
    c.nak_elim = Some(Duration::from_millis(20));
    let mut r = NetworkElement::new(c);
    let nak = block_nak(3, 1);
    let at = |r: &mut NetworkElement, ms: u64| {
        let t = Time::from_millis(ms);
        r.on_packet(t, IfaceId(1), NodeId(7), Dest::Node(NodeId(0)), &nak)
    };
    assert_eq!(at(&mut r, 0), RouteDecision::Forward);
    assert_eq!(at(&mut r, 10), RouteDecision::Consume);
    assert_eq!(at(&mut r, 25), RouteDecision::Forward);
    assert_eq!(at(&mut r, 30), RouteDecision::Consume);
}

#[test]
fn ne_forwards_a_block_nak_only_when_it_asks_for_more_and_parity_where_asked() {
    let mut r = ne();
    let down = |r: &mut NetworkElement, index| {
        r.on_packet(
            Time::ZERO,
            IfaceId(0),
            NodeId(0),
            Dest::Group(G),
            &parity_pkt(3, index),
        )
    };
    assert_eq!(up(&mut r, 2, 7, &block_nak(3, 1)), RouteDecision::Forward);
    assert_eq!(ne_ncf(&mut r), (1, vec![IfaceId(2)]));
    assert_eq!(up(&mut r, 3, 8, &block_nak(3, 1)), RouteDecision::Consume);
    assert_eq!(ne_ncf(&mut r), (1, vec![IfaceId(3)]));
    assert_eq!(up(&mut r, 3, 9, &block_nak(3, 2)), RouteDecision::Forward);
    assert_eq!(ne_ncf(&mut r), (2, vec![IfaceId(3)]));
    assert_eq!(r.naks_forwarded, 2);
    // both asked parity 0 and 1; after the second, nobody waits for more
    let both = RouteDecision::ForwardOn(vec![IfaceId(2), IfaceId(3)]);
    assert_eq!(down(&mut r, 0), both);
    assert_eq!(down(&mut r, 1), both);
    assert_eq!(down(&mut r, 2), RouteDecision::Consume);
    // a later round: a receiver that knows of two parity symbols needs one more
    assert_eq!(up(&mut r, 2, 7, &block_nak(3, 3)), RouteDecision::Forward);
    assert_eq!(ne_ncf(&mut r), (3, vec![IfaceId(2)]));
    assert_eq!(down(&mut r, 2), RouteDecision::ForwardOn(vec![IfaceId(2)]));
    // the state expires as a packet's does
    assert_eq!(r.state_len(), 1);
    r.handle_timeout(Time::from_secs(2));
    assert_eq!(r.state_len(), 0);
}

/// The receiver's datagrams since the last call, as (kind, block or seq, total).
fn sent(r: &mut Receiver) -> Vec<(&'static str, u64, u16)> {
    std::iter::from_fn(|| r.poll_transmit())
        .map(|t| match Packet::decode(&t.payload).unwrap().message {
            Message::Pgm(wire::Message::BlockNak { block, total }) => ("bnak", block, total),
            Message::Pgm(wire::Message::Nak { seq }) => ("nak", seq, 0),
            m => panic!("unexpected {m:?}"),
        })
        .collect()
}

/// With adaptive timers a block NAK's round trip is measured as a packet NAK's is: before,
/// a receiver repaired by parity alone took no sample and waited the fixed 1,000 ms for each
/// lost parity symbol (on a 10 %-loss bridge, FEC pgm's 2-MB transfer took 1.5-2.5 s against
/// 0.1-0.5 s without FEC, and sometimes ran past the sender's 5-s final wait).
#[test]
fn adaptive_receiver_measures_the_block_nak_round_trip() {
    let mut c = ReceiverConfig::new(NodeId(3), NodeId(0));
    c.fec_k = 4;
    c.nak_rto_min = Some(Duration::from_millis(30));
    let mut r = Receiver::new(c, AgentRng::from_seed(1));
    r.handle_packet(Time::ZERO, NodeId(0), &odata(0, b"a"));
    r.handle_packet(Time::ZERO, NodeId(0), &odata(4, b"b"));
    assert_eq!(sent(&mut r), vec![("bnak", 0, 3)]);
    // before any sample the fixed nak_repeat stands
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(500)));
    // the BNCF 4 ms later is a sample: RTO 12 ms, so the parity is awaited for the 30-ms floor
    let ncf = pkt(0, wire::Message::BlockNcf { block: 0, total: 3 });
    r.handle_packet(Time::from_millis(4), NodeId(0), &ncf);
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(34)));
    // the parity was lost: asked again at 34 ms; the repeat's answer is no sample (Karn)
    r.handle_timeout(Time::from_millis(34));
    assert_eq!(sent(&mut r), vec![("bnak", 0, 6)]);
    r.handle_packet(Time::from_millis(300), NodeId(0), &ncf);
    assert_eq!(
        r.poll_timeout(),
        Some(Time::from_millis(330)),
        "the timeout doubled once (24 ms), still the floor; 1,000 ms without the sample"
    );
}

#[test]
fn receiver_naks_a_block_once_its_end_is_known_and_decodes_from_parity() {
    let msgs: Vec<Bytes> = (0..4).map(crate::testkit::message).collect();
    let par = crate::fec::parity(&msgs, 0, 2).unwrap();
    let mut c = ReceiverConfig::new(NodeId(3), NodeId(0));
    c.fec_k = 4;
    let mut r = Receiver::new(c, AgentRng::from_seed(1));
    // packets 1 and 3 are lost; the block's end is not known until packet 4 (block 1)
    r.handle_packet(Time::ZERO, NodeId(0), &odata(0, &msgs[0]));
    r.handle_packet(Time::ZERO, NodeId(0), &odata(2, &msgs[2]));
    assert_eq!(
        sent(&mut r),
        vec![],
        "no NAK before the block's end is known"
    );
    r.handle_packet(Time::ZERO, NodeId(0), &odata(4, b"next"));
    assert_eq!(sent(&mut r), vec![("bnak", 0, 2)]);
    // the network element's confirmation says two parity symbols are coming
    let ncf = pkt(0, wire::Message::BlockNcf { block: 0, total: 2 });
    r.handle_packet(Time::from_millis(1), NodeId(0), &ncf);
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(1001)));
    let parity = |i: u16| {
        pkt(
            0,
            wire::Message::Parity {
                block: 0,
                index: i,
                k: 4,
                payload: &par[usize::from(i)],
            },
        )
    };
    // parity 0 is lost, parity 1 arrives: one symbol short
    r.handle_packet(Time::from_millis(20), NodeId(0), &parity(1));
    assert_eq!(r.stats().delivered, 1, "one symbol short");
    // after the wait it asks for one symbol beyond the two sent
    r.handle_timeout(Time::from_millis(1001));
    assert_eq!(sent(&mut r), vec![("bnak", 0, 3)]);
    // any new parity symbol completes it: every packet delivered, in order
    let p2 = crate::fec::parity(&msgs, 2, 1).unwrap();
    r.handle_packet(
        Time::from_millis(1003),
        NodeId(0),
        &pkt(
            0,
            wire::Message::Parity {
                block: 0,
                index: 2,
                k: 4,
                payload: &p2[0],
            },
        ),
    );
    let got: Vec<Event> = std::iter::from_fn(|| r.poll_event())
        .filter(|e| matches!(e, Event::Delivered { .. }))
        .collect();
    let want: Vec<Event> = (0..4)
        .map(|i| Event::Delivered {
            seq: i,
            data: msgs[i as usize].clone(),
        })
        .chain([Event::Delivered {
            seq: 4,
            data: Bytes::from_static(b"next"),
        }])
        .collect();
    assert_eq!(got, want);
    assert_eq!(r.poll_timeout(), None, "nothing left to ask for");
    // parity for the finished block is ignored, and asks for nothing
    r.handle_packet(Time::from_millis(1004), NodeId(0), &parity(0));
    assert_eq!(sent(&mut r), vec![]);
    assert_eq!(r.poll_timeout(), None);
}

/// A loss in a block that never ends (the stream stops mid-block) is repaired by RDATA.
#[test]
fn a_loss_in_a_block_that_does_not_end_is_naked_packet_by_packet() {
    let mut c = ReceiverConfig::new(NodeId(3), NodeId(0));
    c.fec_k = 4;
    let mut r = Receiver::new(c, AgentRng::from_seed(1));
    r.handle_packet(Time::ZERO, NodeId(0), &odata(1, b"b"));
    assert_eq!(sent(&mut r), vec![]);
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(500)));
    r.handle_timeout(Time::from_millis(500));
    assert_eq!(sent(&mut r), vec![("nak", 0, 0)]);
    r.handle_packet(Time::from_millis(510), NodeId(0), &rdata(0, b"a"));
    assert_eq!(r.stats().delivered, 2);
}

/// Five receivers with 10 % loss on the full mesh (no network elements: the source sees every
/// NAK): with FEC every packet arrives, with fewer repairs than RDATA takes.
#[test]
fn harness_end_to_end_with_fec_delivers_everything_with_fewer_repairs() {
    let rdata = harness_run(0, 320, "without FEC");
    let parity = harness_run(16, 320, "fec_k 16");
    assert!(parity < rdata, "parity {parity}, RDATA {rdata}");
}

/// Proactive parity: two parity symbols after each block of 16 at 10 % loss repair most
/// blocks before anyone NAKs; every packet still arrives. (Messages 1 ms apart: a block ends
/// within the receivers' 30-ms `nak_repeat`, so losses wait for it instead of going the
/// packet-by-packet way.)
#[test]
fn harness_end_to_end_with_proactive_parity_needs_fewer_naks() {
    let (_, on_demand) = harness(16, 0, 320, 1, "fec_k 16");
    let (repairs, proactive) = harness(16, 2, 320, 1, "fec_k 16, 2 proactive");
    eprintln!("NAKs: {on_demand} on demand, {proactive} with 2 proactive ({repairs} repairs)");
    // 20 blocks, 2 symbols each unasked; the rest on demand.
    assert!(repairs >= 40, "{repairs}");
    assert!(
        2 * proactive < on_demand,
        "NAKs with proactive parity {proactive}, on demand only {on_demand}"
    );
}

/// A source sends `fec_proactive` parity symbols right after each block's last packet, and
/// a block NAK is then answered from the next index.
#[test]
fn the_source_sends_proactive_parity_after_each_block_and_naks_go_on_from_there() {
    let mut c = SourceConfig::new(NodeId(0), G);
    c.spm_interval = None;
    c.fec_k = 4;
    c.fec_proactive = 2;
    let mut s = Source::new(c);
    let kinds = |s: &mut Source| {
        let mut v = Vec::new();
        while let Some(t) = s.poll_transmit() {
            if let Ok(p) = Packet::decode(&t.payload) {
                v.push(match p.message {
                    Message::Pgm(wire::Message::Odata { seq, .. }) => ("odata", seq),
                    Message::Pgm(wire::Message::Parity { block, index, .. }) => {
                        ("parity", block * 100 + u64::from(index))
                    }
                    Message::Pgm(wire::Message::BlockNcf { total, .. }) => {
                        ("bncf", u64::from(total))
                    }
                    _ => ("other", 0),
                });
            }
        }
        v
    };
    for i in 0..3 {
        s.send(Time::ZERO, Bytes::from(vec![i as u8; 10])).unwrap();
    }
    assert_eq!(
        kinds(&mut s),
        vec![("odata", 0), ("odata", 1), ("odata", 2)]
    );
    s.send(Time::ZERO, Bytes::from(vec![3u8; 10])).unwrap();
    assert_eq!(
        kinds(&mut s),
        vec![("odata", 3), ("parity", 0), ("parity", 1)]
    );
    let nak = pkt(5, wire::Message::BlockNak { block: 0, total: 3 });
    s.handle_packet(Time::from_millis(1), NodeId(5), &nak);
    assert_eq!(kinds(&mut s), vec![("bncf", 3), ("parity", 2)]);
}

/// A receiver that expects one proactive parity symbol per block does not NAK a block whose
/// last packet arrived until that symbol (or a later packet) came; the symbol repairs it.
#[test]
fn a_receiver_waits_for_proactive_parity_before_naking_a_block() {
    let msgs: Vec<Bytes> = (0..8).map(crate::testkit::message).collect();
    let par = crate::fec::parity(&msgs[..4], 0, 1).unwrap();
    let mut c = ReceiverConfig::new(NodeId(3), NodeId(0));
    c.fec_k = 4;
    c.fec_proactive = 1;
    let mut r = Receiver::new(c, AgentRng::from_seed(1));
    for seq in [0, 2, 3] {
        r.handle_packet(Time::ZERO, NodeId(0), &odata(seq, &msgs[seq as usize]));
    }
    assert_eq!(sent(&mut r), vec![], "the block's parity is still to come");
    let p = pkt(
        0,
        wire::Message::Parity {
            block: 0,
            index: 0,
            k: 4,
            payload: &par[0],
        },
    );
    r.handle_packet(Time::ZERO, NodeId(0), &p);
    assert_eq!(sent(&mut r), vec![]);
    assert_eq!(r.stats().delivered, 4);
    // Block 1 loses packet 5 and its proactive symbol: the next block's first packet ends
    // it, and the receiver NAKs for one symbol beyond the proactive one, which it counts as
    // sent though it never saw it.
    for seq in [4, 6, 7] {
        r.handle_packet(Time::ZERO, NodeId(0), &odata(seq, &msgs[seq as usize]));
    }
    assert_eq!(sent(&mut r), vec![]);
    r.handle_packet(Time::ZERO, NodeId(0), &odata(8, b"next"));
    assert_eq!(sent(&mut r), vec![("bnak", 1, 2)]);
}
