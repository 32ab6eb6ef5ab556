//! A DSP designated endpoint that gives custody up ([`Endpoint::end_to_end`], with the
//! source's [`SourceConfig::release_at_lw`]), replaced mid-transfer by a fresh one under the
//! same node id (a standby relay taking a dead designated relay's place): its members, which
//! kept their windows, resume where they were and get everything.

use super::*;
use crate::testkit::{assert_reliable, DoneOrder::AnyOrder, Harness};

const N: u64 = 400;
const L: u32 = 16;
const DESIGNATED: NodeId = NodeId(1);
const MEMBERS: [NodeId; 2] = [NodeId(2), NodeId(3)];
const GLOBAL: GroupId = GroupId(1);
const LOCAL: GroupId = GroupId(2);

fn designated(end_to_end: bool) -> Box<Endpoint> {
    let role = Role::Designated {
        members: MEMBERS.to_vec(),
        local_group: LOCAL,
    };
    let mut c = EndpointConfig::new(DESIGNATED, NodeId(0), role, L);
    c.local_rtd = Duration::from_millis(3);
    let mut e = Endpoint::new(c, AgentRng::from_seed(7));
    if end_to_end {
        assert!(e.end_to_end(Duration::from_millis(200)));
        assert!(!e.end_to_end(Duration::from_millis(200)), "only once");
        assert!(e.resuming());
    }
    Box::new(e)
}

/// Source 0 → designated 1 → members 2 and 3 (global group: all three; local group: the
/// members), 5 % loss of every copy. Once member 2 delivered 150 of [`N`], the designated
/// endpoint dies (everything to and from it lost for 200 ms) and a fresh one takes its node
/// id. Returns the harness at 600 s and the blocks the fresh one received before rebasing
/// would have to be all of them (its lowest delivered block).
fn takeover(end_to_end: bool, seed: u64) -> (Harness, Option<u64>) {
    let mut h = Harness::new(Duration::from_micros(1500), 0.05, seed);
    let reporter = Reporter {
        epi: DESIGNATED.0,
        rtd: Duration::from_millis(3),
        slack: Duration::ZERO,
    };
    let mut sc = SourceConfig::new(NodeId(0), GLOBAL, vec![reporter], L);
    sc.queue_limit = usize::MAX;
    sc.rate_bps = 8_000_000;
    sc.release_at_lw = end_to_end;
    assert_eq!(h.add(Box::new(Source::new(sc))), NodeId(0));
    assert_eq!(h.add(designated(end_to_end)), DESIGNATED);
    for (i, m) in MEMBERS.into_iter().enumerate() {
        let c = EndpointConfig::new(
            m,
            NodeId(0),
            Role::Member {
                designated: DESIGNATED,
            },
            L,
        );
        let e = Endpoint::new(c, AgentRng::from_seed(10 + i as u64));
        assert_eq!(h.add(Box::new(e)), m);
    }
    h.set_group(GLOBAL, vec![DESIGNATED, MEMBERS[0], MEMBERS[1]]);
    h.set_group(LOCAL, MEMBERS.to_vec());
    h.send_all(NodeId(0), N);
    let fresh = designated(end_to_end);
    let before = h.take_over(DESIGNATED, (2, 150, N), Duration::from_millis(200), fresh);
    h.run_until(Time::from_secs(600));
    let first = h.events[1][before..].iter().find_map(|(_, e)| match e {
        Event::Delivered { seq, .. } => Some(*seq),
        _ => None,
    });
    (h, first)
}

#[test]
fn a_fresh_designated_endpoint_resumes_the_members_of_one_that_gave_custody_up() {
    for seed in [1, 2, 3] {
        let (h, first) = takeover(true, seed);
        let what = format!("end to end, seed {seed}");
        assert_reliable(&h, MEMBERS.iter().map(|m| m.0 as usize), N, AnyOrder, &what);
        // The fresh endpoint started where its members were, not at 0.
        assert!(
            first.is_some_and(|s| s >= 100),
            "{what}: the fresh designated endpoint's first block {first:?}"
        );
    }
}

/// The control: a designated endpoint holding custody (the seed's selective
/// acknowledgement), replaced the same way, cannot get back what the source released to it;
/// its members never get everything.
#[test]
fn a_fresh_designated_endpoint_cannot_take_over_custody() {
    let (h, _) = takeover(false, 1);
    let got: Vec<usize> = MEMBERS
        .iter()
        .map(|m| h.delivered(m.0 as usize).len())
        .collect();
    assert!(got.iter().any(|&n| n < N as usize), "delivered {got:?}");
}

fn status_of(e: &mut Endpoint) -> Option<BlockStatus> {
    let mut found = None;
    while let Some(t) = e.poll_transmit() {
        if let Ok(p) = rmcast_wire::Packet::decode(&t.payload) {
            if let Message::Tree(wire::Message::Status(st)) = p.message {
                found = Some(BlockStatus::from_wire(&st));
            }
        }
    }
    found
}

/// End to end, the status to the source carries the members' lowest `LW_r`, the blocks held
/// above it as received, and a `buffer_available` that ends where its own would; it waits
/// for every member before its first one.
#[test]
fn an_end_to_end_status_is_capped_at_the_members_lowest() {
    let mut e = *designated(true);
    let t = |ms: u64| Time::ZERO + Duration::from_millis(ms);
    for s in 0..10 {
        e.handle_packet(t(1), NodeId(0), &super::tests::data_packet(s, b"x"));
    }
    e.handle_timeout(t(10));
    assert!(
        status_of(&mut e).is_none(),
        "no status before the members spoke"
    );
    e.handle_packet(t(11), MEMBERS[0], &local(MEMBERS[0], 4));
    assert!(e.resuming());
    e.handle_packet(t(12), MEMBERS[1], &local(MEMBERS[1], 7));
    assert!(!e.resuming());
    e.handle_timeout(t(12));
    let st = status_of(&mut e).expect("a status once every member spoke");
    assert_eq!(st.lw, 4);
    assert_eq!(received(&st, L, 4..20), (4..10).collect::<Vec<_>>());
    // Its own: LW_r 10, buffer R − (10 − rel) = 16 − 0 (all ten in the retransmission buffer).
    assert_eq!(u64::from(st.buf) + st.lw, 10 + 16);
}

/// A fresh end-to-end designated endpoint whose members are at 50 and 60 starts at 50.
#[test]
fn a_fresh_end_to_end_designated_endpoint_starts_at_its_lowest_member() {
    let mut e = *designated(true);
    let t = |ms: u64| Time::ZERO + Duration::from_millis(ms);
    e.handle_packet(t(1), MEMBERS[0], &local(MEMBERS[0], 60));
    e.handle_packet(t(2), MEMBERS[1], &local(MEMBERS[1], 50));
    assert!(!e.resuming());
    assert_eq!(e.lw(), 50);
    e.handle_packet(t(3), NodeId(0), &super::tests::data_packet(50, b"x"));
    assert_eq!(e.lw(), 51);
    e.handle_timeout(t(3));
    let st = status_of(&mut e).expect("a status");
    assert_eq!(st.lw, 50);
    assert_eq!(received(&st, L, 50..66), vec![50]);
}

fn local(from: NodeId, lw: u64) -> Vec<u8> {
    super::tests::local_status(from, lw, L, &[], L)
}

fn received(s: &BlockStatus, l: u32, range: core::ops::Range<u64>) -> Vec<u64> {
    range.filter(|&q| s.received(q, l)).collect()
}
