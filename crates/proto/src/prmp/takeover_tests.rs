//! A relay that gives custody up ([`tree::Relay::end_to_end`]), replaced mid-transfer by a
//! fresh one under the same node id (a standby taking a dead relay's place): its children,
//! which kept their windows, resume where they were and get everything.

use super::tree::{Relay, RelayConfig};
use super::*;
use crate::testkit::{assert_reliable, message, DoneOrder::AnyOrder, Harness};
use crate::GroupId;
use crate::SenderAgent;

const N: u64 = 400;
const LEAVES: [NodeId; 2] = [NodeId(2), NodeId(3)];

fn relay(end_to_end: bool) -> Box<Relay> {
    let mut down = SenderConfig::new(NodeId(1), GroupId(2), LEAVES.to_vec());
    down.window = 16;
    let mut r = Relay::new(RelayConfig {
        upstream: ReceiverConfig::new(NodeId(1), 32),
        downstream: down,
        messages: None,
        backlog_limit: Some(64),
    })
    .unwrap();
    if end_to_end {
        assert!(r.end_to_end());
        assert!(!r.end_to_end(), "only once");
    }
    Box::new(r)
}

/// Root 0 → relay 1 → leaves 2 and 3, 5 % loss everywhere. Once leaf 2 delivered 150 of
/// [`N`], relay 1 dies (everything to and from it lost for 200 ms) and a fresh relay takes
/// its node id. Returns the harness at 600 s and the new relay's data packets sent.
fn takeover(end_to_end: bool, seed: u64) -> (Harness, u64) {
    let mut h = Harness::new(Duration::from_micros(1500), 0.05, seed);
    let mut root = SenderConfig::new(NodeId(0), GroupId(1), vec![NodeId(1)]);
    root.queue_limit = usize::MAX;
    root.window = 32;
    root.max_silent_polls = u32::MAX;
    root.release_at_le = end_to_end;
    let s = h.add(root_sender(root));
    h.add(relay(end_to_end));
    for c in LEAVES {
        assert_eq!(
            h.add(Box::new(Receiver::new(ReceiverConfig::new(c, 16)))),
            c
        );
    }
    h.set_group(GroupId(1), vec![NodeId(1)]);
    h.set_group(GroupId(2), LEAVES.to_vec());
    h.send_all(s, N);
    let fresh = relay(end_to_end);
    let _ = h.take_over(NodeId(1), (2, 150, N), Duration::from_millis(200), fresh);
    h.run_until(Time::from_secs(600));
    let sent = h.agent(NodeId(1)).map_or(0, |a| a.stats().data_sent);
    (h, sent)
}

fn root_sender(cfg: SenderConfig) -> Box<Sender> {
    Box::new(Sender::new(cfg).unwrap())
}

#[test]
fn a_fresh_relay_resumes_the_children_of_one_that_gave_custody_up() {
    for seed in [1, 2, 3] {
        let (h, sent) = takeover(true, seed);
        let what = format!("end to end, seed {seed}");
        assert_reliable(&h, LEAVES.iter().map(|c| c.0 as usize), N, AnyOrder, &what);
        assert!(h.completed(0), "{what}: the root did not complete");
        // The fresh relay started where its children were, not at 0.
        assert!(
            sent < N - 100,
            "{what}: the new relay sent {sent} originals"
        );
        assert!(sent > 0, "{what}");
    }
}

/// The control: a relay holding custody, replaced the same way, cannot get back what its
/// parent released to it; its children never get everything.
#[test]
fn a_fresh_relay_cannot_take_over_custody() {
    let (h, _) = takeover(false, 1);
    let got: Vec<usize> = [2, 3].iter().map(|&c| h.delivered(c).len()).collect();
    assert!(got.iter().any(|&n| n < N as usize), "delivered {got:?}");
    assert!(!h.completed(0));
}

/// A capped receiver reports the cap as its left edge and what lies between as received.
#[test]
fn an_ack_cap_lowers_the_reported_left_edge_only() {
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(1), 16));
    let env = crate::outbox::envelope(0, NodeId(0), 0);
    let data = |seq: u64| {
        rmcast_wire::Packet::to_vec(
            env,
            &Message::Prmp(wire::Message::Data { seq, payload: b"x" }),
        )
        .unwrap()
    };
    for seq in [0, 1, 2, 3, 5] {
        r.handle_packet(Time::ZERO, NodeId(0), &data(seq));
    }
    r.set_ack_cap(Some(2));
    let id = 1u32.to_be_bytes();
    let poll = rmcast_wire::Packet::to_vec(
        env,
        &Message::Prmp(wire::Message::Poll {
            ts: 7,
            seq: 5,
            cld: wire::ChildList::from_raw(&id).unwrap(),
        }),
    )
    .unwrap();
    r.handle_packet(Time::ZERO, NodeId(0), &poll);
    let t = std::iter::from_fn(|| r.poll_transmit())
        .last()
        .expect("a response");
    let Ok(rmcast_wire::Packet {
        message: Message::Prmp(wire::Message::Resp { le, hr, bitmap, .. }),
        ..
    }) = rmcast_wire::Packet::decode(&t.payload)
    else {
        panic!("not a RESP");
    };
    assert_eq!((le, hr, r.le()), (2, 5, 4));
    // 2, 3 held; 4 missing; 5 held.
    assert_eq!(bitmap, [0b1011]);
}

/// A resuming parent asks its children, sends nothing meanwhile, and numbers from the lowest
/// left edge heard; a child ahead acknowledges what it holds as it goes out.
#[test]
fn a_resuming_parent_starts_at_its_childrens_lowest_left_edge() {
    let mut c = SenderConfig::new(NodeId(0), GroupId(1), vec![NodeId(1), NodeId(2)]);
    c.queue_limit = usize::MAX;
    let mut s = Sender::new(c).unwrap();
    assert!(s.resume_children());
    for i in 0..20 {
        s.send(Time::ZERO, message(i)).unwrap();
    }
    assert_eq!(s.poll_timeout(), Some(Time::ZERO));
    s.handle_timeout(Time::ZERO);
    let sent: Vec<_> = std::iter::from_fn(|| s.poll_transmit()).collect();
    assert_eq!(sent.len(), 1, "only the question");
    let Ok(rmcast_wire::Packet {
        message: Message::Prmp(wire::Message::Poll { seq: 0, cld, .. }),
        ..
    }) = rmcast_wire::Packet::decode(&sent[0].payload)
    else {
        panic!("not the resuming POLL");
    };
    assert_eq!(cld.iter().collect::<Vec<_>>(), [1, 2]);
    let resp = |from: u32, le: u64| {
        rmcast_wire::Packet::to_vec(
            crate::outbox::envelope(0, NodeId(from), 0),
            &Message::Prmp(wire::Message::Resp {
                ts: 0,
                seq: 0,
                le,
                hr: le - 1,
                bitmap: &vec![0xff; wire::resp_bitmap_bytes(le, le - 1) as usize],
            }),
        )
        .unwrap()
    };
    let t1 = Time::from_millis(1);
    s.handle_packet(t1, NodeId(1), &resp(1, 7));
    assert!(s.resuming(), "child 2 not heard yet");
    s.handle_timeout(t1 + resync_interval_for_test());
    let again: Vec<_> = std::iter::from_fn(|| s.poll_transmit()).collect();
    assert_eq!(again.len(), 1, "asked again, child 2 only");
    s.handle_packet(t1, NodeId(2), &resp(2, 5));
    assert!(!s.resuming());
    assert_eq!(s.le_p(), 5);
    let mut first = None;
    let mut now = t1;
    while first.is_none() && now < Time::from_secs(1) {
        now += Duration::from_millis(1);
        if s.poll_timeout().is_some_and(|t| t <= now) {
            s.handle_timeout(now);
        }
        first =
            std::iter::from_fn(|| s.poll_transmit()).find_map(
                |t| match rmcast_wire::Packet::decode(&t.payload) {
                    Ok(rmcast_wire::Packet {
                        message:
                            Message::Prmp(
                                wire::Message::Data { seq, .. }
                                | wire::Message::DataPoll { seq, .. },
                            ),
                        ..
                    }) => Some(seq),
                    _ => None,
                },
            );
    }
    assert_eq!(first, Some(5));
}

fn resync_interval_for_test() -> Duration {
    super::resume::resync_interval(SenderConfig::new(NodeId(0), GroupId(1), vec![]).min_rto)
}
