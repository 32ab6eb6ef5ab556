use super::*;
use crate::testkit::DoneOrder::AnyOrder;
use crate::testkit::TEST_GROUP as GROUP;
use crate::testkit::*;
use crate::SenderAgent;
use rmcast_wire::Packet;
use rmcast_wire::{Envelope, FLAG_RETRANSMISSION};

struct Setup {
    base: GroupTest,
    window: u64,
    cumulative: bool,
}

impl Setup {
    fn new(receivers: u32, window: u64, drop: f64) -> Self {
        Setup {
            base: GroupTest::new(receivers, drop, 200, 11, Duration::from_micros(1500)),
            window,
            cumulative: false,
        }
    }

    fn run(&self) -> Harness {
        self.base.run(
            |receivers| {
                let mut cfg = SenderConfig::new(NodeId(0), GROUP, receivers);
                cfg.window = self.window;
                cfg.queue_limit = usize::MAX;
                cfg.initial_rtt = Duration::from_millis(10);
                Box::new(Sender::new(cfg).unwrap())
            },
            |r| {
                let mut c = ReceiverConfig::new(r, self.window);
                c.cumulative = self.cumulative;
                Box::new(Receiver::new(c))
            },
        )
    }
}

#[test]
fn a_cumulative_ack_makes_good_the_acks_lost_before_it() {
    // 20 receivers, 20 % of every packet (data and ACKs) dropped: with per-packet ACKs a
    // lost ACK costs a timeout and a global retransmission; with CUMACK the next ACK of that
    // receiver covers it.
    let mut retransmissions = Vec::new();
    for cumulative in [false, true] {
        let mut setup = Setup::new(20, 200, 0.20);
        setup.cumulative = cumulative;
        let h = setup.run();
        let what = format!("cumulative {cumulative}");
        let s = setup.base.assert_repairs_follow_loss(&h, AnyOrder, &what);
        for r in 1..=20 {
            let st = h.agent(NodeId(r)).unwrap().stats();
            assert_eq!(st.control_sent, st.packets_received, "{what}: rx {r}");
        }
        println!("ff {what}: {} global retransmissions", s.repairs_sent);
        retransmissions.push(s.repairs_sent);
    }
    assert!(
        retransmissions[1] * 10 < retransmissions[0] * 9,
        "per-packet, cumulative: {retransmissions:?} global retransmissions"
    );
}

#[test]
fn end_to_end_ff_and_ff_iw_at_0_5_20_percent_drop() {
    for receivers in [1u32, 5, 20, 60] {
        for (variant, v) in [("FF", Variant::Ff), ("FF-IW", Variant::FfIw)] {
            for drop in [0.0, 0.05, 0.20] {
                let setup = Setup::new(receivers, v.window(64, 200), drop);
                let h = setup.run();
                let what = format!("{variant} {receivers} rx, drop {drop}");
                let s = setup.base.assert_repairs_follow_loss(&h, AnyOrder, &what);
                // The only repair is the global retransmission on a timeout.
                assert_eq!(s.timeouts > 0, drop > 0.0, "{what}");
                // Every receiver acknowledges every copy it receives.
                for r in 1..=receivers {
                    let st = h.agent(NodeId(r)).unwrap().stats();
                    assert_eq!(st.control_sent, st.packets_received, "{what}: rx {r}");
                }
                println!(
                    "ff e2e: {what}: {} msgs in {:?}, {} global retransmissions, {} timeouts",
                    setup.base.messages,
                    h.now(),
                    s.repairs_sent,
                    s.timeouts
                );
            }
        }
    }
}

#[test]
fn runs_are_deterministic() {
    let mut setup = Setup::new(8, 16, 0.2);
    assert_setup_deterministic(&mut setup, |s| &mut s.base, Setup::run, 11, 12);
}

fn drain(s: &mut Sender) -> Vec<(Dest, u64, u64, bool)> {
    let mut v = Vec::new();
    while let Some(t) = s.poll_transmit() {
        let p = Packet::decode(&t.payload).unwrap();
        if let Message::Ff(wire::Message::Data { seq, ts, .. }) = p.message {
            v.push((t.dest, seq, ts, p.header.flags & FLAG_RETRANSMISSION != 0));
        }
    }
    v
}

fn ack(seq: u64, ts: u64) -> Vec<u8> {
    Packet::to_vec(
        Envelope::default(),
        &Message::Ff(wire::Message::Ack { seq, ts }),
    )
    .unwrap()
}

#[test]
fn window_timeout_and_global_retransmission() {
    let mut cfg = SenderConfig::new(NodeId(0), GROUP, vec![NodeId(1), NodeId(2)]);
    cfg.window = 3;
    cfg.initial_rtt = Duration::from_millis(5);
    cfg.queue_limit = 100;
    let mut s = Sender::new(cfg).unwrap();
    for i in 0..6 {
        s.send(Time::ZERO, message(i)).unwrap();
    }
    // RTO before any sample: 2 × 5 ms.
    assert_eq!(s.rto(), Duration::from_millis(10));
    let mut sent = Vec::new();
    for ms in 0..5 {
        s.handle_timeout(Time::from_millis(ms));
        sent.extend(drain(&mut s));
    }
    // Window 3: packets 0, 1, 2 one IPG apart, then blocked.
    assert_eq!(sent.iter().map(|x| x.1).collect::<Vec<_>>(), vec![0, 1, 2]);
    assert!(sent.iter().all(|x| x.0 == Dest::Group(GROUP) && !x.3));
    // Both ack 0 (RTT samples 3 ms and 4 ms; largest SRTT is now 5 ms at most... child 2
    // measured 4 ms): the window slides by one.
    s.handle_packet(Time::from_millis(3), NodeId(1), &ack(0, 0));
    s.handle_packet(Time::from_millis(4), NodeId(2), &ack(0, 0));
    assert_eq!(s.rto(), Duration::from_millis(8));
    s.handle_timeout(Time::from_millis(5));
    let out = drain(&mut s);
    assert_eq!(out.iter().map(|x| x.1).collect::<Vec<_>>(), vec![3]);
    // Only child 1 acks 1; nobody acks 2. At packet 1's timer (sent at 1 ms + 10 ms) the
    // sender multicasts it again — global retransmission even though child 1 has it.
    s.handle_packet(Time::from_millis(5), NodeId(1), &ack(1, 1_000_000));
    s.handle_timeout(Time::from_millis(11));
    let out = drain(&mut s);
    assert_eq!(out.len(), 1);
    assert_eq!(
        (out[0].0, out[0].1, out[0].3),
        (Dest::Group(GROUP), 1, true)
    );
    assert_eq!(s.stats().timeouts, 1);
    // A duplicate ACK is counted, not double-counted.
    s.handle_packet(Time::from_millis(12), NodeId(1), &ack(1, 1_000_000));
    assert_eq!(s.stats().duplicates, 1);
    // Removing child 2 leaves only child 1, who has acked 0 and 1.
    assert!(s.remove_receiver(Time::from_millis(12), NodeId(2)));
    let mut done = Vec::new();
    while let Some(e) = s.poll_event() {
        if let Event::MessageDone { seq, .. } = e {
            done.push(seq);
        }
    }
    assert_eq!(done, vec![0, 1]);
}

#[test]
fn receiver_acks_every_copy_it_can_hold() {
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(4), 4));
    let data = |seq: u64| {
        Packet::to_vec(
            Envelope::default(),
            &Message::Ff(wire::Message::Data {
                seq,
                ts: seq * 10,
                payload: b"p",
            }),
        )
        .unwrap()
    };
    for seq in [1, 0, 0, 9] {
        r.handle_packet(Time::ZERO, NodeId(0), &data(seq));
    }
    let mut acks = Vec::new();
    while let Some(t) = r.poll_transmit() {
        assert_eq!(t.dest, Dest::Node(NodeId(0)));
        if let Message::Ff(wire::Message::Ack { seq, ts }) =
            Packet::decode(&t.payload).unwrap().message
        {
            acks.push((seq, ts));
        }
    }
    // 9 is beyond the window (LE 2 + S 4): dropped without an ACK.
    assert_eq!(acks, vec![(1, 10), (0, 0), (0, 0)]);
    assert_eq!(r.stats().delivered, 2);
    assert_eq!(r.stats().duplicates, 1);
    assert_eq!(r.stats().ignored, 1);
}

#[test]
fn variants_map_to_windows_and_implosion() {
    assert_eq!(Variant::Ff.window(64, 1000), 64);
    assert_eq!(Variant::FfIw.window(64, 1000), 1000);
    assert_eq!(Variant::FfIwIt.window(64, 1000), 1000);
    assert!(Variant::Ff.implosion_limited() && Variant::FfIw.implosion_limited());
    assert!(!Variant::FfIwIt.implosion_limited());
    let mut c = SenderConfig::new(NodeId(0), GROUP, vec![]);
    c.window = 0;
    assert!(Sender::new(c).is_err());
}
