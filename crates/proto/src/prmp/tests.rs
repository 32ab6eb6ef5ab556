use super::*;
use crate::testkit::DoneOrder::AnyOrder;
use crate::testkit::TEST_GROUP as GROUP;
use crate::testkit::*;
use crate::Outbox;
use crate::SenderAgent;
use rmcast_wire::Packet;
use rmcast_wire::{Envelope, FLAG_RETRANSMISSION};

/// A node that never answers (a crashed child).
struct Dead(Outbox);
impl Agent for Dead {
    fn handle_packet(&mut self, _: Time, _: NodeId, p: &[u8]) {
        self.0.stats.count_received(p);
    }
    fn handle_timeout(&mut self, _: Time) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    crate::outbox_field!(0);
}

struct Setup {
    /// The live receivers are nodes `1..=base.receivers`; `dead` more nodes follow them.
    base: GroupTest,
    dead: u32,
    window: u64,
    consume_rate: Option<u64>,
    silent: u32,
}

impl Setup {
    fn new(receivers: u32, window: u64, drop: f64) -> Self {
        Setup {
            base: GroupTest::new(receivers, drop, 200, 7, Duration::from_micros(1500)),
            dead: 0,
            window,
            consume_rate: None,
            silent: 40,
        }
    }

    fn run(&self) -> Harness {
        let live = self.base.receivers;
        let members = GroupTest {
            receivers: live + self.dead,
            ..self.base
        };
        members.run(
            |nodes| {
                let mut cfg = SenderConfig::new(NodeId(0), GROUP, nodes);
                cfg.window = self.window;
                cfg.queue_limit = usize::MAX;
                cfg.max_silent_polls = self.silent;
                cfg.initial_rtt = Duration::from_millis(10);
                Box::new(Sender::new(cfg).unwrap())
            },
            |r| -> Box<dyn Agent> {
                if r.0 <= live {
                    let mut rc = ReceiverConfig::new(r, self.window);
                    rc.consume_rate = self.consume_rate;
                    Box::new(Receiver::new(rc))
                } else {
                    Box::new(Dead(Outbox::new()))
                }
            },
        )
    }
}

#[test]
fn end_to_end_pf_and_pf_iw_at_0_5_20_percent_drop() {
    for receivers in [1, 5, 20, 60] {
        for (variant, window) in [("PF", 64), ("PF-IW", 200)] {
            for drop in [0.0, 0.05, 0.20] {
                let setup = Setup::new(receivers, window, drop);
                let h = setup.run();
                let what = format!("{variant} {receivers} rx, drop {drop}");
                let s = setup.base.assert_repairs_follow_loss(&h, AnyOrder, &what);
                assert_eq!(s.evicted, 0, "{what}: nobody removed");
                let responses = setup.base.receivers_control_sent(&h);
                println!(
                    "prmp e2e: {what}: {} msgs in {:?}, {} repairs, {} poll timeouts, {} explicit polls, {} responses",
                    setup.base.messages,
                    h.now(),
                    s.repairs_sent,
                    s.timeouts,
                    s.control_sent,
                    responses
                );
            }
        }
    }
}

#[test]
fn polling_keeps_responses_below_one_per_packet_per_child() {
    // Full feedback would cost NC × DP responses; polling asks each child only now and then.
    let setup = Setup::new(20, 200, 0.0);
    let h = setup.run();
    setup.base.assert_reliable(&h, AnyOrder, "lossless");
    let responses = setup.base.receivers_control_sent(&h);
    assert!(
        responses < 20 * setup.base.messages / 2,
        "{responses} responses"
    );
    // RR = 1500/s bounds the planned rate: the transfer lasts at least responses / RR.
    let floor = Duration::from_secs_f64(responses as f64 / 1500.0);
    assert!(h.now().saturating_since(Time::ZERO) + Duration::from_millis(20) >= floor);
}

#[test]
fn runs_are_deterministic() {
    let mut setup = Setup::new(10, 16, 0.2);
    assert_setup_deterministic(&mut setup, |s| &mut s.base, Setup::run, 7, 8);
}

#[test]
fn slow_consumers_block_the_window_and_explicit_polls_unblock_it() {
    // S = 8 and children consuming 500 packets/s (half the IPG rate): the window closes, the
    // parent must send explicit POLLs (trigger (b): buffers full of unconsumed packets).
    for drop in [0.0, 0.05] {
        let mut setup = Setup::new(4, 8, drop);
        setup.consume_rate = Some(500);
        setup.base.messages = 100;
        let h = setup.run();
        let what = format!("slow consumers, drop {drop}");
        let s = setup.base.assert_reliable_sender(&h, AnyOrder, &what);
        assert!(
            s.control_sent > 0,
            "{what}: explicit POLL packets were needed"
        );
        // Consumption, not the network, sets the pace: 100 packets at 500/s take >= 198 ms.
        assert!(h.now() >= Time::from_millis(198), "{what}: {:?}", h.now());
    }
}

#[test]
fn silent_child_is_removed_and_the_window_opens() {
    for drop in [0.0, 0.05] {
        let mut setup = Setup::new(5, 16, drop);
        setup.dead = 1;
        setup.silent = 4;
        let h = setup.run();
        let what = format!("dead child, drop {drop}");
        let s = setup.base.assert_reliable_sender(&h, AnyOrder, &what);
        assert_eq!(s.evicted, 1, "{what}");
        // It was polled at least `silent` times before removal: every one timed out.
        assert!(s.timeouts >= 4, "{what}");
    }
}

// ---- hand-driven sender tests ----

fn sender(n: u32, f: impl FnOnce(&mut SenderConfig)) -> Sender {
    let mut cfg = SenderConfig::new(NodeId(0), GROUP, (1..=n).map(NodeId).collect());
    cfg.initial_rtt = Duration::from_millis(2);
    cfg.queue_limit = usize::MAX;
    f(&mut cfg);
    Sender::new(cfg).unwrap()
}

/// Drain `s` and return the stamps `ts` of the polls (POLL or DATA+POLL) it sent, in order.
fn poll_stamps(s: &mut Sender) -> Vec<u64> {
    drain(s)
        .into_iter()
        .filter_map(|(_, p)| match p.message {
            Message::Prmp(wire::Message::Poll { ts, .. } | wire::Message::DataPoll { ts, .. }) => {
                Some(ts)
            }
            _ => None,
        })
        .collect()
}

fn drain(s: &mut Sender) -> Vec<(Dest, Packet<'static>)> {
    let mut v = Vec::new();
    while let Some(t) = s.poll_transmit() {
        let bytes: &'static [u8] = Vec::leak(t.payload.to_vec());
        v.push((t.dest, Packet::decode(bytes).unwrap()));
    }
    v
}

/// A RESP from `node` for the poll with `ts`: `le`, `hr` and the received set.
fn resp(node: u32, ts: u64, seq: u64, le: u64, hr: Option<u64>, got: &[u64]) -> Vec<u8> {
    let mut bitmap = Vec::new();
    if let Some(h) = hr.filter(|&h| h >= le) {
        bitmap.resize(((h - le + 1) as usize).div_ceil(8), 0u8);
        for &g in got {
            if g >= le && g <= h {
                let k = (g - le) as usize;
                bitmap[k / 8] |= 1 << (k % 8);
            }
        }
    }
    Packet::to_vec(
        Envelope {
            session: 0,
            source: node,
            flags: 0,
        },
        &Message::Prmp(wire::Message::Resp {
            ts,
            seq,
            le,
            hr: hr.unwrap_or(wire::NO_HR),
            bitmap: &bitmap,
        }),
    )
    .unwrap()
}

fn data_seqs(out: &[(Dest, Packet<'_>)]) -> Vec<(Dest, u64, bool)> {
    out.iter()
        .filter_map(|(d, p)| match &p.message {
            Message::Prmp(wire::Message::Data { seq, .. })
            | Message::Prmp(wire::Message::DataPoll { seq, .. }) => {
                Some((*d, *seq, p.header.flags & FLAG_RETRANSMISSION != 0))
            }
            _ => None,
        })
        .collect()
}

/// The stamp `ts` of the first DATA+POLL in `out` (of packet `seq`, if given).
fn data_poll_ts(out: &[(Dest, Packet<'_>)], seq: Option<u64>) -> Option<u64> {
    out.iter().find_map(|(_, p)| match &p.message {
        Message::Prmp(wire::Message::DataPoll { seq: s, ts, .. })
            if seq.is_none_or(|q| q == *s) =>
        {
            Some(*ts)
        }
        _ => None,
    })
}

/// Ten children, one packet multicast at t = 0 with a poll of everyone.
fn ten_children_one_packet() -> (Sender, u64) {
    let mut s = sender(10, |_| {});
    s.send(Time::ZERO, message(0)).unwrap();
    let out = drain(&mut s);
    assert_eq!(out.len(), 1);
    let Message::Prmp(wire::Message::DataPoll { ts, cld, .. }) = &out[0].1.message else {
        panic!("first packet should poll: {:?}", out[0].1.message);
    };
    assert_eq!(cld.len(), 10);
    assert_eq!(out[0].0, Dest::Group(GROUP));
    (s, *ts)
}

#[test]
fn mtr_one_of_ten_is_unicast_three_of_ten_multicast() {
    // 1 of 10 nacks: COLLECTION until everyone answered, then a unicast to that child.
    let (mut s, ts) = ten_children_one_packet();
    let t = Time::from_millis(3);
    s.handle_packet(t, NodeId(1), &resp(1, ts, 0, 0, Some(0), &[]));
    assert_eq!(s.status(0), Some(Status::Collection));
    assert!(data_seqs(&drain(&mut s)).is_empty(), "still collecting");
    for r in 2..=10 {
        s.handle_packet(t, NodeId(r), &resp(r, ts, 0, 1, Some(0), &[0]));
    }
    assert_eq!(s.status(0), Some(Status::Retransmitted));
    let out = drain(&mut s);
    assert_eq!(data_seqs(&out), vec![(Dest::Node(NodeId(1)), 0, true)]);

    // 3 of 10 nack: |nacked| = 3 >= 20 % × 10 = 2, multicast at once (after the second
    // nack already: 2 >= 2).
    let (mut s, ts) = ten_children_one_packet();
    s.handle_packet(t, NodeId(1), &resp(1, ts, 0, 0, Some(0), &[]));
    assert!(data_seqs(&drain(&mut s)).is_empty());
    s.handle_packet(t, NodeId(2), &resp(2, ts, 0, 0, Some(0), &[]));
    s.handle_packet(t, NodeId(3), &resp(3, ts, 0, 0, Some(0), &[]));
    assert_eq!(s.status(0), Some(Status::Retransmitted));
    let out = drain(&mut s);
    assert_eq!(data_seqs(&out), vec![(Dest::Group(GROUP), 0, true)]);
}

#[test]
fn collection_decision_rule() {
    let ppm = 200_000; // 20 %
    assert_eq!(collection_decision(1, 0, 0, 10, ppm), Decision::Wait);
    assert_eq!(collection_decision(1, 9, 0, 10, ppm), Decision::Unicast);
    assert_eq!(collection_decision(1, 5, 4, 10, ppm), Decision::Unicast);
    assert_eq!(collection_decision(2, 0, 0, 10, ppm), Decision::Multicast);
    assert_eq!(collection_decision(3, 7, 0, 10, ppm), Decision::Multicast);
    // 20 % of 7 is 1.4: one nack is not enough, two are.
    assert_eq!(collection_decision(1, 0, 0, 7, ppm), Decision::Wait);
    assert_eq!(collection_decision(2, 0, 0, 7, ppm), Decision::Multicast);
    // MTR = 0: the first nack multicasts; MTR = 1: only when everyone nacked.
    assert_eq!(collection_decision(1, 0, 0, 10, 0), Decision::Multicast);
    assert_eq!(collection_decision(9, 0, 0, 10, 1_000_000), Decision::Wait);
    assert_eq!(
        collection_decision(9, 1, 0, 10, 1_000_000),
        Decision::Unicast
    );
}

/// At `t`, child 1 reports packet 0 missing and children `2..=last` acknowledge it, each
/// answering the poll stamped `ts`.
fn nack_from_1_acks_up_to(s: &mut Sender, t: Time, ts: u64, last: u32) {
    s.handle_packet(t, NodeId(1), &resp(1, ts, 0, 0, Some(0), &[]));
    for r in 2..=last {
        s.handle_packet(t, NodeId(r), &resp(r, ts, 0, 1, Some(0), &[0]));
    }
}

#[test]
fn obsolete_nack_does_not_retransmit_but_a_fresh_one_does() {
    let (mut s, ts0) = ten_children_one_packet();
    let t = Time::from_millis(3);
    nack_from_1_acks_up_to(&mut s, t, ts0, 10);
    let out = drain(&mut s);
    assert_eq!(data_seqs(&out), vec![(Dest::Node(NodeId(1)), 0, true)]);
    // The retransmission carried a poll to child 1 (trigger (a)): note its TS.
    let retx_ts = out
        .iter()
        .find_map(|(_, p)| match &p.message {
            Message::Prmp(wire::Message::DataPoll { ts, cld, .. }) if cld.contains(1) => Some(*ts),
            _ => None,
        })
        .expect("the unicast retransmission polls its child");
    assert!(retx_ts > ts0);
    // A nack answering the poll sent before the retransmission (RESP.TS < RTxT) is obsolete.
    let t2 = Time::from_millis(4);
    s.handle_packet(t2, NodeId(1), &resp(1, ts0, 0, 0, Some(0), &[]));
    s.handle_timeout(Time::from_millis(5));
    assert!(
        data_seqs(&drain(&mut s)).is_empty(),
        "obsolete nack retransmitted"
    );
    // A nack answering the retransmission's own poll is meaningful: unicast again.
    s.handle_packet(t2, NodeId(1), &resp(1, retx_ts, 0, 0, Some(0), &[]));
    s.handle_timeout(Time::from_millis(6));
    assert_eq!(
        data_seqs(&drain(&mut s)),
        vec![(Dest::Node(NodeId(1)), 0, true)]
    );
    // Once child 1 acks, the packet is fully acknowledged.
    s.handle_packet(
        Time::from_millis(8),
        NodeId(1),
        &resp(1, retx_ts, 0, 1, Some(0), &[0]),
    );
    assert_eq!(s.status(0), None);
    let mut got_done = false;
    while let Some(e) = s.poll_event() {
        got_done |= matches!(
            e,
            Event::MessageDone {
                seq: 0,
                failed: false,
                ..
            }
        );
    }
    assert!(got_done);
}

#[test]
fn recovery_waits_for_absent_children_only_until_they_are_repolled() {
    // Child 1 nacks, children 2..=9 ack, child 10 stays silent: COLLECTION waits until the
    // poll to child 10 times out (child 10 is then in repolled(0)) and unicasts to child 1.
    let (mut s, ts) = ten_children_one_packet();
    let t = Time::from_millis(1);
    nack_from_1_acks_up_to(&mut s, t, ts, 9);
    assert_eq!(s.status(0), Some(Status::Collection));
    assert!(data_seqs(&drain(&mut s)).is_empty());
    // RTO = 2 × RTT (initial 2 ms) = 4 ms; RTT samples of 1 ms were taken but the poll's
    // timeout was fixed when it was sent.
    let to = s.poll_timeout().unwrap();
    assert!(to <= Time::from_millis(4), "{to:?}");
    s.handle_timeout(Time::from_millis(4));
    assert_eq!(s.status(0), Some(Status::Retransmitted));
    assert_eq!(s.stats().timeouts, 1);
    let out = drain(&mut s);
    assert_eq!(data_seqs(&out), vec![(Dest::Node(NodeId(1)), 0, true)]);
    // Child 10 was repolled with priority (immediately: quota is free).
    let polled_10 = out.iter().any(|(d, p)| {
        *d == Dest::Node(NodeId(10))
            && matches!(&p.message, Message::Prmp(wire::Message::Poll { cld, .. }) if cld.contains(10))
    }) || s.planner().planned(9).is_some_and(|p| p.repoll);
    assert!(polled_10, "child 10 must be repolled: {out:?}");
}

#[test]
fn effective_window_closes_and_blocks_new_data() {
    let mut s = sender(2, |c| c.window = 4);
    for i in 0..10 {
        s.send(Time::ZERO, message(i)).unwrap();
    }
    // One packet per IPG until EW_p = 0.
    let mut sent = Vec::new();
    for ms in 0..10 {
        s.handle_timeout(Time::from_millis(ms));
        sent.extend(data_seqs(&drain(&mut s)));
    }
    assert_eq!(
        sent.iter().map(|x| x.1).collect::<Vec<_>>(),
        vec![0, 1, 2, 3]
    );
    assert_eq!(s.effective_window(), 0);
    assert_eq!(s.view().hs, Some(3));
    // Child 1 reports LE = 2: EW_p,1 = 2 + 4 − 4 = 2, but child 2 is still at LE = 0.
    s.handle_packet(
        Time::from_millis(10),
        NodeId(1),
        &resp(1, 0, 0, 2, Some(1), &[0, 1]),
    );
    assert_eq!(s.effective_window(), 0);
    assert!(data_seqs(&drain(&mut s)).is_empty());
    // Child 2 reports LE = 1: EW_p = min(2, 1) = 1, exactly one new packet goes (after
    // whatever explicit poll the responses made due, one IPG apart).
    s.handle_packet(
        Time::from_millis(10),
        NodeId(2),
        &resp(2, 0, 0, 1, Some(0), &[0]),
    );
    assert_eq!(s.effective_window(), 1);
    let mut out = data_seqs(&drain(&mut s));
    s.handle_timeout(Time::from_millis(11));
    out.extend(data_seqs(&drain(&mut s)));
    assert_eq!(out.iter().map(|x| x.1).collect::<Vec<_>>(), vec![4]);
    assert_eq!(s.effective_window(), 0);
}

#[test]
fn absent_responses_count_in_the_mpt_and_lead_to_removal() {
    let mut s = sender(2, |c| c.max_silent_polls = 3);
    s.send(Time::ZERO, message(0)).unwrap();
    let out = drain(&mut s);
    let Message::Prmp(wire::Message::DataPoll { ts, .. }) = &out[0].1.message else {
        panic!();
    };
    // Child 1 answers; child 2 never does.
    s.handle_packet(
        Time::from_millis(1),
        NodeId(1),
        &resp(1, *ts, 0, 1, Some(0), &[0]),
    );
    let mut t = Time::ZERO;
    for _ in 0..100 {
        let Some(next) = s.poll_timeout() else { break };
        t = next;
        s.handle_timeout(t);
        drain(&mut s);
    }
    assert_eq!(s.removed(), &[NodeId(2)]);
    assert_eq!(s.stats().evicted, 1);
    assert_eq!(s.stats().timeouts, 3);
    assert_eq!(
        s.status(0),
        None,
        "with child 2 gone, packet 0 is fully acknowledged"
    );
    assert!(t < Time::from_millis(100));
    // Later packets from the removed child are ignored.
    let ignored = s.stats().ignored;
    s.handle_packet(t, NodeId(2), &resp(2, *ts, 0, 1, Some(0), &[0]));
    assert_eq!(s.stats().ignored, ignored + 1);
}

#[test]
fn mpt_count_follows_resp_timestamps() {
    // Two silent polls, then a late response to the last absent one: count 2 → 1; then a
    // response to a later poll resets it to 0.
    let mut s = sender(1, |c| c.max_silent_polls = 10);
    s.send(Time::ZERO, message(0)).unwrap();
    s.send(Time::ZERO, message(1)).unwrap();
    drain(&mut s);
    let mut polls = Vec::new();
    let mut t;
    for _ in 0..2 {
        t = s.poll_timeout().unwrap();
        s.handle_timeout(t);
        polls.extend(poll_stamps(&mut s));
    }
    let timeouts = s.stats().timeouts;
    assert!(timeouts >= 1);
    let child = &s.children[0];
    assert_eq!(child.mpt_count as u64, timeouts);
    let last_absent = child.mpt_ts.as_nanos();
    s.handle_packet(
        Time::from_millis(30),
        NodeId(1),
        &resp(1, last_absent, 1, 0, Some(1), &[1]),
    );
    assert_eq!(s.children[0].mpt_count as u64, timeouts - 1);
    let later = *polls.last().unwrap();
    if later > last_absent {
        s.handle_packet(
            Time::from_millis(31),
            NodeId(1),
            &resp(1, later, 1, 0, Some(1), &[1]),
        );
        assert_eq!(s.children[0].mpt_count, 0);
    }
}

#[test]
fn explicit_poll_goes_at_npt_when_no_data_can_be_sent() {
    // One packet, then nothing to send: the planned poll for a child whose est lies ahead
    // goes as a POLL at NPT = est + IPG.
    let mut s = sender(20, |c| {
        c.response_rate = 500; // RQ = 5 per 10 ms epoch
    });
    s.send(Time::ZERO, message(0)).unwrap();
    let out = drain(&mut s);
    let Message::Prmp(wire::Message::DataPoll { cld, .. }) = &out[0].1.message else {
        panic!();
    };
    // initial RTT 2 ms: epoch 0 holds 5 responses, the rest are planned for later epochs.
    assert_eq!(cld.len(), 5);
    for (n, c) in s.planner().arc_entries() {
        assert!(c <= 5, "ARC[{n}] = {c}");
    }
    let est = s.planner().next_est().unwrap();
    assert_eq!(est, Time::from_millis(8)); // E_1 starts at 10 ms, minus the 2 ms RTT
                                           // The five polled children answer (acking packet 0), so no poll times out.
    let Message::Prmp(wire::Message::DataPoll { ts, .. }) = &out[0].1.message else {
        panic!();
    };
    for r in cld.iter() {
        s.handle_packet(
            Time::from_millis(3),
            NodeId(r),
            &resp(r, *ts, 0, 1, Some(0), &[0]),
        );
    }
    assert!(data_seqs(&drain(&mut s)).is_empty());
    // Nothing else to send: the next event is the NPT, one IPG after the earliest est.
    assert_eq!(s.poll_timeout(), Some(est + s.cfg.ipg));
    s.handle_timeout(est + s.cfg.ipg);
    let polls: Vec<usize> = drain(&mut s)
        .iter()
        .filter_map(|(_, p)| match &p.message {
            Message::Prmp(wire::Message::Poll { cld, seq, .. }) => {
                assert_eq!(*seq, 0, "POLL.SEQ = HS");
                Some(cld.len())
            }
            _ => None,
        })
        .collect();
    // Sent as unicasts (5 < 20 % of 20 is false: 5 >= 4, so one multicast POLL).
    assert_eq!(
        polls,
        vec![5],
        "one explicit POLL at NPT naming the five children"
    );
}

#[test]
fn receiver_window_hr_and_response() {
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(3), 8));
    let env = Envelope::default();
    let data = |seq| {
        Packet::to_vec(
            env,
            &Message::Prmp(wire::Message::Data { seq, payload: b"x" }),
        )
        .unwrap()
    };
    for seq in [0, 1, 3, 4] {
        r.handle_packet(Time::ZERO, NodeId(0), &data(seq));
    }
    assert_eq!((r.le(), r.hr()), (2, Some(4)));
    // A poll naming someone else raises HR to POLL.SEQ but gets no response.
    let mut raw = Vec::new();
    wire::ChildList::encode_ids([9], &mut raw);
    let poll = |ts, seq, raw: &[u8]| {
        Packet::to_vec(
            env,
            &Message::Prmp(wire::Message::Poll {
                ts,
                seq,
                cld: wire::ChildList::from_raw(raw).unwrap(),
            }),
        )
        .unwrap()
    };
    r.handle_packet(Time::ZERO, NodeId(0), &poll(5, 6, &raw));
    assert_eq!(r.hr(), Some(6));
    assert!(r.poll_transmit().is_none());
    let mut raw = Vec::new();
    wire::ChildList::encode_ids([9, 3], &mut raw);
    r.handle_packet(Time::ZERO, NodeId(0), &poll(77, 6, &raw));
    let t = r.poll_transmit().unwrap();
    assert_eq!(t.dest, Dest::Node(NodeId(0)));
    let p = Packet::decode(&t.payload).unwrap();
    assert_eq!(
        p.message,
        Message::Prmp(wire::Message::Resp {
            ts: 77,
            seq: 6,
            le: 2,
            hr: 6,
            bitmap: &[0b00110], // 2: no, 3: yes, 4: yes, 5: no, 6: no
        })
    );
    // A POLL.SEQ beyond LE + S is not from a legitimate parent: ignored.
    r.handle_packet(Time::ZERO, NodeId(0), &poll(78, 10, &raw));
    assert!(r.poll_transmit().is_none());
    // Garbage is counted, never a panic.
    r.handle_packet(Time::ZERO, NodeId(0), b"RM\x01\x05junk");
    assert_eq!(r.stats().malformed, 1);
}

#[test]
fn bad_configuration_is_refused() {
    let base = || SenderConfig::new(NodeId(0), GROUP, vec![NodeId(1)]);
    let mut c = base();
    c.window = 0;
    assert_eq!(Sender::new(c).unwrap_err(), ConfigError::Window);
    let mut c = base();
    c.response_rate = 50; // 50/s × 10 ms = 0.5 → RQ = 0
    assert_eq!(Sender::new(c).unwrap_err(), ConfigError::Quota(0));
    let mut c = base();
    c.epoch = Duration::from_micros(1500); // not a multiple of IPG
    assert_eq!(Sender::new(c).unwrap_err(), ConfigError::Epoch);
    let mut c = base();
    c.mtr = 1.5;
    assert!(matches!(Sender::new(c), Err(ConfigError::Mtr(_))));
    assert_eq!(base().response_quota(), 15);
}

#[test]
fn random_feedback_never_panics_and_arc_stays_within_rq() {
    use crate::rng::AgentRng;
    let mut rng = AgentRng::from_seed(5);
    let mut s = sender(30, |c| {
        c.response_rate = 800; // RQ = 8
        c.window = 16;
        c.max_silent_polls = 1_000;
    });
    let rq = s.planner().rq();
    assert_eq!(rq, 8);
    for i in 0..60 {
        s.send(Time::ZERO, message(i)).unwrap();
    }
    let mut now = Time::ZERO;
    let mut poll_ts: Vec<u64> = vec![0];
    for _ in 0..20_000 {
        now += Duration::from_micros(rng.range_inclusive(0, 700));
        if s.poll_timeout().is_some_and(|t| t <= now) {
            s.handle_timeout(now);
        }
        poll_ts.extend(poll_stamps(&mut s));
        let node = rng.range_inclusive(1, 32) as u32; // 31 and 32 are strangers
        let next = s.view().hs.map_or(0, |h| h + 1);
        let le = rng.range_inclusive(0, next);
        let hr = if rng.chance(0.1) || next == 0 {
            None
        } else {
            Some(rng.range_inclusive(le.saturating_sub(1), next - 1))
        };
        let got: Vec<u64> = (le..next).filter(|_| rng.chance(0.7)).collect();
        let ts = if rng.chance(0.8) {
            poll_ts[rng.range_inclusive(0, poll_ts.len() as u64 - 1) as usize]
        } else {
            rng.range_inclusive(0, u64::MAX)
        };
        let seq = rng.range_inclusive(0, next.saturating_sub(1));
        s.handle_packet(now, NodeId(node), &resp(node, ts, seq, le, hr, &got));
        if rng.chance(0.05) {
            let mut junk = resp(node, ts, seq, le, hr, &got);
            let j = rng.range_inclusive(0, junk.len() as u64 - 1) as usize;
            junk[j] ^= 0x5a;
            s.handle_packet(now, NodeId(node), &junk);
        }
        for (n, c) in s.planner().arc_entries() {
            assert!(c <= rq, "ARC[{n}] = {c} > RQ");
        }
        assert!(s.effective_window() <= 16);
    }
    println!("random feedback: {:?}, stats {:?}", s.view(), s.stats());
}

#[test]
fn random_packets_never_panic_a_receiver() {
    use crate::rng::AgentRng;
    let mut rng = AgentRng::from_seed(9);
    let mut rc = ReceiverConfig::new(NodeId(2), 32);
    rc.consume_rate = Some(2_000);
    let mut r = Receiver::new(rc);
    let mut now = Time::ZERO;
    let mut delivered = 0u64;
    for _ in 0..50_000 {
        now += Duration::from_micros(rng.range_inclusive(0, 300));
        if r.poll_timeout().is_some_and(|t| t <= now) {
            r.handle_timeout(now);
        }
        let base = r.le();
        let seq = base + rng.range_inclusive(0, 40);
        let mut raw = Vec::new();
        wire::ChildList::encode_ids([rng.range_inclusive(1, 3) as u32], &mut raw);
        let cld = wire::ChildList::from_raw(&raw).unwrap();
        let payload = [seq as u8; 3];
        let msg = match rng.range_inclusive(0, 2) {
            0 => wire::Message::Data {
                seq,
                payload: &payload,
            },
            1 => wire::Message::Poll {
                ts: now.as_nanos(),
                seq,
                cld,
            },
            _ => wire::Message::DataPoll {
                seq,
                ts: now.as_nanos(),
                poll_seq: seq + rng.range_inclusive(0, 3),
                cld,
                payload: &payload,
            },
        };
        let mut b = Packet::to_vec(Envelope::default(), &Message::Prmp(msg)).unwrap();
        if rng.chance(0.1) {
            let j = rng.range_inclusive(0, b.len() as u64 - 1) as usize;
            b[j] = rng.range_inclusive(0, 255) as u8;
        }
        r.handle_packet(now, NodeId(0), &b);
        while let Some(t) = r.poll_transmit() {
            let p = Packet::decode(&t.payload).unwrap();
            let Message::Prmp(wire::Message::Resp { le, hr, .. }) = p.message else {
                panic!("a receiver only sends RESP");
            };
            assert_eq!(le, r.le());
            assert!(hr == wire::NO_HR || hr < le + 32);
        }
        while let Some(e) = r.poll_event() {
            let Event::Delivered { seq, .. } = e else {
                panic!()
            };
            assert_eq!(seq, delivered, "in order, exactly once");
            delivered += 1;
        }
    }
    assert!(delivered > 1_000, "{delivered}");
}

/// Scale check beyond the paper's group sizes (ignored by default: it is a smoke test of
/// the data structures, run with `cargo test --release -- --ignored scale`).
#[test]
#[ignore]
fn scale_smoke_thousands_of_children() {
    for (receivers, drop) in [(1_000u32, 0.01), (5_000, 0.01)] {
        let mut setup = Setup::new(receivers, 64, drop);
        setup.base.messages = 100;
        let h = setup.run();
        let what = format!("{receivers} rx, drop {drop}");
        let s = setup.base.assert_reliable_sender(&h, AnyOrder, &what);
        println!(
            "prmp scale: {what}: {:?} virtual, {} repairs, {} timeouts",
            h.now(),
            s.repairs_sent,
            s.timeouts
        );
    }
}

#[test]
fn polls_too_large_for_one_datagram_are_split_not_lost() {
    let n = 20_000u32;
    let mut s = sender(n, |c| c.response_rate = 3_000_000); // RQ = 30,000
    s.send(Time::ZERO, message(0)).unwrap();
    // Logical polls by timestamp (a small POLL goes as one unicast copy per child).
    let mut polls: BTreeMap<u64, Vec<u32>> = BTreeMap::new();
    let mut copies = 0;
    let mut unicast_ids = Vec::new();
    // Up to 3 ms: before the first poll timeout (RTO = 2 × 2 ms).
    for ms in 0..4 {
        s.handle_timeout(Time::from_millis(ms));
        for (dest, p) in drain(&mut s) {
            if let Message::Prmp(
                wire::Message::Poll { cld, ts, .. } | wire::Message::DataPoll { cld, ts, .. },
            ) = p.message
            {
                copies += 1;
                if let Dest::Node(NodeId(k)) = dest {
                    assert_eq!(cld.iter().collect::<Vec<_>>(), vec![k]);
                    unicast_ids.push(k);
                }
                polls.entry(ts).or_default().extend(cld.iter());
            }
        }
    }
    // The second poll names fewer than MTR × NC = 4,000 children: one unicast copy per
    // child, each naming only that child.
    assert_eq!(polls.len(), 2, "one DATAPOLL and one POLL");
    let first = polls.values().next().unwrap().len();
    let second: Vec<u32> = unicast_ids;
    assert!(second.len() < 4_000);
    assert_eq!(copies, 1 + second.len());
    let mut named = BTreeSet::new();
    for &id in polls.values().next().unwrap().iter().chain(&second) {
        assert!(named.insert(id), "child {id} polled twice");
    }
    assert_eq!(named.len(), n as usize);
    assert_eq!(first + second.len(), n as usize);
}

/// A sender that woke late sends a burst at one `now` (it catches up on up to `ipg_slack` of
/// lateness, as on sockets). A poll on the burst's first retransmission, answered before the
/// burst's second retransmission arrived, nacks that packet; the poll went before it, so the
/// nack is obsolete (§2.5.1) — each transmission is stamped apart, and no needless unicast
/// follows. (When both bore the burst's `now`, the nack counted as new.)
#[test]
fn a_nack_answering_an_earlier_poll_of_the_same_burst_is_obsolete() {
    let mut s = sender(1, |c| {
        c.ipg = Duration::from_millis(1);
        c.ipg_slack = Duration::from_millis(50);
    });
    s.send(Time::ZERO, message(0)).unwrap();
    s.send(Time::ZERO, message(1)).unwrap();
    let first = drain(&mut s);
    s.handle_timeout(Time::from_millis(1));
    let second = drain(&mut s);
    let sent: Vec<u64> = data_seqs(&first)
        .into_iter()
        .chain(data_seqs(&second))
        .map(|(_, seq, _)| seq)
        .collect();
    assert_eq!(sent, vec![0, 1]);
    let ts0 = data_poll_ts(&first, None).expect("packet 0 polls the child");
    // 20 ms later the child reports both lost: two multicast retransmissions, one burst.
    let late = Time::from_millis(20);
    s.handle_packet(late, NodeId(1), &resp(1, ts0, 0, 0, Some(1), &[]));
    let burst = drain(&mut s);
    assert_eq!(
        data_seqs(&burst),
        vec![(Dest::Group(GROUP), 0, true), (Dest::Group(GROUP), 1, true)]
    );
    let polled_ts =
        data_poll_ts(&burst, Some(0)).expect("the first retransmission polls the child");
    // The child answers that poll having received 0 but not yet 1.
    s.handle_packet(
        Time::from_millis(21),
        NodeId(1),
        &resp(1, polled_ts, 0, 1, Some(1), &[0]),
    );
    s.handle_timeout(Time::from_millis(22));
    assert!(
        data_seqs(&drain(&mut s)).is_empty(),
        "a nack answering a poll sent before the retransmission repeated it"
    );
}

/// A child that received the whole window but consumed none of it holds `LE_p`: every packet
/// is acknowledged, yet the window stays closed with data waiting, so the parent must keep
/// polling it (trigger (b), §3 GM) — dropping the idle parent's polls (choice 8) here left
/// the transfer waiting for ever.
#[test]
fn a_window_full_of_unconsumed_packets_is_polled_until_it_opens() {
    let mut s = sender(1, |c| c.window = 4);
    for i in 0..6 {
        s.send(Time::ZERO, message(i)).unwrap();
    }
    let mut sent = Vec::new();
    let mut last_ts = None;
    let mut t = Time::ZERO;
    while t < Time::from_millis(100) {
        for (_, p) in drain(&mut s) {
            if let Message::Prmp(
                wire::Message::DataPoll { seq, .. } | wire::Message::Data { seq, .. },
            ) = &p.message
            {
                sent.push(*seq);
                if let Message::Prmp(wire::Message::DataPoll { ts, .. }) = &p.message {
                    last_ts = Some(*ts);
                }
            }
        }
        t += Duration::from_micros(100);
        if s.poll_timeout().is_some_and(|at| at <= t) {
            s.handle_timeout(t);
        }
        if sent.len() == 4 {
            break;
        }
    }
    assert_eq!(sent, vec![0, 1, 2, 3], "the window lets four go");
    // The child holds all four, unconsumed: LE = 0.
    let ts = last_ts.expect("a poll rode on the data");
    s.handle_packet(t, NodeId(1), &resp(1, ts, 3, 0, Some(3), &[0, 1, 2, 3]));
    assert_eq!(s.status(0), None, "every packet acknowledged");
    assert_eq!(s.effective_window(), 0);
    let mut polled = false;
    let end = t + Duration::from_millis(100);
    while t < end && !polled {
        t += Duration::from_micros(100);
        if s.poll_timeout().is_some_and(|at| at <= t) {
            s.handle_timeout(t);
        }
        polled = drain(&mut s)
            .iter()
            .any(|(_, p)| matches!(p.message, Message::Prmp(wire::Message::Poll { .. })));
    }
    assert!(
        polled,
        "the parent stopped polling a child that blocks its window"
    );
}
