#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use crate::testkit::{feed_blocks, Harness};
use crate::SenderAgent;
use rmcast_wire::Envelope;

fn bits(l: u32, set: &[usize]) -> Vec<u8> {
    let mut v = vec![0u8; wire::bitmap_bytes(l)];
    for &i in set {
        wire::set_bit(&mut v, i);
    }
    v
}

fn st(lw: u64, l: u32, set: &[usize], buf: u32) -> BlockStatus {
    BlockStatus {
        lw,
        lob: bits(l, set),
        buf,
    }
}

fn received(s: &BlockStatus, l: u32, range: core::ops::Range<u64>) -> Vec<u64> {
    range.filter(|&b| s.received(b, l)).collect()
}

/// The two statuses below (L = 8) consolidated by `merge`; with L.
fn consolidated_a_and_b(merge: Merge) -> (u32, BlockStatus) {
    let l = 8;
    let a = st(10, l, &[1, 3], 7);
    let b = st(12, l, &[1, 3], 5);
    (l, consolidate(merge, l, &[a, b]).unwrap())
}

/// Close `src` at `now` and drain its events; with how many of them are `MessageDone`.
fn close_and_drain_events(src: &mut Source, now: Time) -> (Vec<Event>, usize) {
    src.close(now);
    let evs: Vec<_> = core::iter::from_fn(|| src.poll_event()).collect();
    let done = evs
        .iter()
        .filter(|e| matches!(e, Event::MessageDone { .. }))
        .count();
    (evs, done)
}

/// Two hand-made endpoint statuses with L = 8:
/// A: LW_r = 10, has 11 and 13          → received {<10, 11, 13}
/// B: LW_r = 12, has 13 and 15          → received {<12, 13, 15}
#[test]
fn csp_consolidation_is_min_and_min() {
    let (l, c) = consolidated_a_and_b(Merge::Pessimistic);
    assert_eq!(c.lw, 10, "LW_r = min");
    assert_eq!(c.buf, 5, "buffer_available = min");
    // Aligned at 10: block 11 is below B's LW_r and in A's LOB → received by both;
    // 13 is in both LOBs; 15 only in B's; 10 and 12 are missing somewhere.
    assert_eq!(c.lob, bits(l, &[1, 3]));
    assert_eq!(
        received(&c, l, 0..20),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 13]
    );
}

#[test]
fn cp_consolidation_is_max_or_min() {
    let (l, c) = consolidated_a_and_b(Merge::Optimistic);
    assert_eq!(c.lw, 12, "LW_r = max");
    assert_eq!(c.buf, 5, "buffer_available = min");
    // Aligned at 12: 13 (both), 15 (B). A's 11 is below 12 anyway.
    assert_eq!(c.lob, bits(l, &[1, 3]));
    assert_eq!(
        received(&c, l, 0..20),
        [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15]
    );
    // A block only A holds above B's LW_r shows up through the OR.
    let a2 = st(12, l, &[5], 3);
    let b2 = st(14, l, &[2], 9);
    let c2 = consolidate(Merge::Optimistic, l, &[a2.clone(), b2.clone()]).unwrap();
    assert_eq!((c2.lw, c2.buf), (14, 3));
    assert_eq!(
        c2.lob,
        bits(l, &[2, 3]),
        "16 from B, 17 from A (bit 5 at 12)"
    );
    let p2 = consolidate(Merge::Pessimistic, l, &[a2, b2]).unwrap();
    assert_eq!((p2.lw, p2.buf), (12, 3));
    assert_eq!(p2.lob, bits(l, &[]), "16: A lacks it; 17: B lacks it");
    assert!(consolidate(Merge::Pessimistic, l, &[]).is_none());
}

pub(super) fn local_status(from: NodeId, lw: u64, l: u32, set: &[usize], buf: u32) -> Vec<u8> {
    let lob = bits(l, set);
    Packet::to_vec(
        Envelope {
            session: 0,
            source: from.0,
            flags: 0,
        },
        &Message::Tree(wire::Message::LocalStatus(wire::Status {
            vc: 1,
            id: from.0,
            k: 1,
            l,
            lw_r: lw,
            buffer_available: buf,
            lob: &lob,
        })),
    )
    .unwrap()
}

/// (endpoint, base, bits) of each ASSIGN.
type Assigns = Vec<(NodeId, u64, Vec<u8>)>;

fn drain_exchange(x: &mut Exchange) -> (Option<BlockStatus>, Assigns) {
    let mut report = None;
    let mut assigns = Vec::new();
    while let Some(rt) = x.poll_transmit() {
        let p = Packet::decode(&rt.transmit.payload).unwrap();
        match p.message {
            Message::Tree(wire::Message::Status(s)) => {
                assert_eq!(rt.transmit.dest, Dest::Node(NodeId(0)));
                assert_eq!(s.id, 1);
                report = Some(BlockStatus::from_wire(&s));
            }
            Message::Tree(wire::Message::Assign {
                lepi, base, bits, ..
            }) => {
                assert_eq!(rt.transmit.dest, Dest::Node(NodeId(lepi)));
                assigns.push((NodeId(lepi), base, bits.to_vec()))
            }
            other => panic!("unexpected {other:?}"),
        }
    }
    (report, assigns)
}

/// An exchange with endpoints A (node 2) and B (node 3) that reported the two hand-made
/// statuses above; returns it after its first report.
fn exchange_with_statuses(merge: Merge) -> (Exchange, BlockStatus, Assigns) {
    let l = 8;
    let le = NodeId(1);
    let (a, b) = (NodeId(2), NodeId(3));
    let mut x = Exchange::new(
        ExchangeConfig::new(le, NodeId(0), merge, vec![a, b], l),
        AgentRng::from_seed(1),
    );
    // Packets not addressed to the exchange pass through untouched.
    let pass = local_status(a, 0, l, &[], 1);
    assert_eq!(
        x.on_packet(Time::ZERO, IfaceId(0), a, Dest::Node(NodeId(0)), &pass),
        RouteDecision::Forward
    );
    for (n, lw, set, buf) in [(a, 10, &[1usize, 3][..], 7), (b, 12, &[1, 3][..], 5)] {
        let p = local_status(n, lw, l, set, buf);
        assert_eq!(
            x.on_packet(Time::ZERO, IfaceId(0), n, Dest::Node(le), &p),
            RouteDecision::Consume
        );
    }
    let t = x.poll_timeout().unwrap();
    x.handle_timeout(t);
    let (report, assigns) = drain_exchange(&mut x);
    (x, report.unwrap(), assigns)
}

/// An endpoint the driver evicted no longer holds the consolidation back: with A (LW 10) and
/// B (LW 12) the pessimistic status is A's; once A is removed it is B's, A's statuses are
/// ignored, and removing a stranger changes nothing.
#[test]
fn a_removed_endpoint_no_longer_enters_the_consolidated_status() {
    let (mut x, r, _) = exchange_with_statuses(Merge::Pessimistic);
    assert_eq!((r.lw, r.buf), (10, 5));
    assert!(!x.remove_endpoint(NodeId(9)), "not one of its endpoints");
    assert!(x.remove_endpoint(NodeId(2)));
    assert!(!x.remove_endpoint(NodeId(2)), "already removed");
    let c = x.consolidated().unwrap();
    assert_eq!((c.lw, c.buf), (12, 5), "B's own status");
    let stale = local_status(NodeId(2), 3, 8, &[], 1);
    let t = x.poll_timeout().unwrap();
    assert_eq!(
        x.on_packet(t, IfaceId(0), NodeId(2), Dest::Node(NodeId(1)), &stale),
        RouteDecision::Consume
    );
    assert_eq!(
        x.consolidated().unwrap().lw,
        12,
        "a removed endpoint's status is ignored"
    );
    // A status from B still counts.
    let newer = local_status(NodeId(3), 14, 8, &[], 6);
    x.on_packet(t, IfaceId(0), NodeId(3), Dest::Node(NodeId(1)), &newer);
    assert_eq!(x.consolidated().unwrap().lw, 14);
}

/// What is addressed to the exchange's node but is not a status is for the agent on that
/// node (an endpoint of another region, where every node routes): an ASSIGN from its own
/// exchange passes; a status is the exchange's.
#[test]
fn an_exchange_passes_what_is_not_a_status_to_its_node_s_agent() {
    let (mut x, _, _) = exchange_with_statuses(Merge::Optimistic);
    let le = NodeId(1);
    let assign = Packet::to_vec(
        crate::outbox::envelope(0, NodeId(7), 0),
        &Message::Tree(wire::Message::Assign {
            lmvci: 0,
            lepi: le.0,
            l: 8,
            base: 0,
            bits: &[1],
        }),
    )
    .unwrap();
    let d = x.on_packet(Time::ZERO, IfaceId(0), NodeId(7), Dest::Node(le), &assign);
    assert_eq!(d, RouteDecision::ForwardOn(vec![IfaceId::LOCAL]));
    assert!(
        d.only_local(),
        "on sockets a relay drops it: it hosts no agent besides"
    );
    let st = local_status(NodeId(2), 11, 8, &[], 7);
    assert_eq!(
        x.on_packet(Time::ZERO, IfaceId(0), NodeId(2), Dest::Node(le), &st),
        RouteDecision::Consume
    );
}

#[test]
fn csp_exchange_reports_min_and_to_the_source_and_assigns_nothing() {
    let (_, r, assigns) = exchange_with_statuses(Merge::Pessimistic);
    assert_eq!((r.lw, r.buf), (10, 5));
    assert_eq!(r.lob, bits(8, &[1, 3]));
    assert!(assigns.is_empty());
}

#[test]
fn cp_exchange_reports_max_or_and_assigns_holders() {
    let (mut x, r, assigns) = exchange_with_statuses(Merge::Optimistic);
    assert_eq!((r.lw, r.buf), (12, 5));
    assert_eq!(r.lob, bits(8, &[1, 3]));
    // A holds {<10, 11, 13}, B holds {<12, 13, 15}. Lacked by one and held by the other:
    // 10 (A lacks it below its highest block 13: a loss; B holds it) and 15 (beyond A's
    // highest: possibly still on its way). The region floor is 10.
    let for_b: Vec<_> = assigns.iter().filter(|x| x.0 == NodeId(3)).collect();
    assert_eq!(for_b.len(), 1);
    assert_eq!(for_b[0].1, 10, "ASSIGN base = region floor (min LW_r)");
    assert_eq!(for_b[0].2, bits(8, &[0]), "B re-multicasts 10 at once");
    // A holds nothing B lacks (B lacks 12, 14, 16, 17: nobody has them): no bits for A.
    assert!(assigns
        .iter()
        .filter(|x| x.0 == NodeId(2))
        .all(|x| x.2.iter().all(|&v| v == 0)));
    // Once `reassign_after` has passed with the same statuses, B is told to re-multicast 15
    // (and 10 again: nobody reported it received since).
    let mut t = x.poll_timeout().unwrap();
    while t < Time::ZERO + Duration::from_millis(40) {
        x.handle_timeout(t);
        t = x.poll_timeout().unwrap();
    }
    let (_, later) = drain_exchange(&mut x);
    let b_bits: Vec<u8> =
        later
            .iter()
            .filter(|x| x.0 == NodeId(3))
            .fold(bits(8, &[]), |mut acc, x| {
                for (a, v) in acc.iter_mut().zip(&x.2) {
                    *a |= v;
                }
                acc
            });
    assert_eq!(b_bits, bits(8, &[0, 5]));
    assert!(x.assignments >= 3);
}

pub(super) fn data_packet(seq: u64, payload: &[u8]) -> Vec<u8> {
    Packet::to_vec(
        Envelope::default(),
        &Message::Tree(wire::Message::Data {
            mvci: 1,
            seq,
            payload,
        }),
    )
    .unwrap()
}

/// DSP: the designated endpoint re-multicasts on its local group exactly the block a
/// member's status lacks, and only after the hold-off since it got the block.
#[test]
fn dsp_designated_repairs_a_member_locally() {
    let (e1, m) = (NodeId(1), NodeId(2));
    let lg = GroupId(7);
    let l = 16;
    let mut cfg = EndpointConfig::new(
        e1,
        NodeId(0),
        Role::Designated {
            members: vec![m],
            local_group: lg,
        },
        l,
    );
    cfg.local_rtd = Duration::from_millis(1);
    let mut e = Endpoint::new(cfg, AgentRng::from_seed(3));
    for s in 0..6 {
        e.handle_packet(Time::from_micros(10 * s), NodeId(0), &data_packet(s, b"x"));
    }
    assert_eq!(e.lw(), 6);
    let delivered: Vec<u64> = core::iter::from_fn(|| e.poll_event())
        .filter_map(|ev| match ev {
            Event::Delivered { seq, .. } => Some(seq),
            _ => None,
        })
        .collect();
    assert_eq!(delivered, [0, 1, 2, 3, 4, 5]);
    // The member has 0..3 and 4, 5 but lacks 3: LW_r = 3, LOB bits 1, 2 (4, 5).
    let early = local_status(m, 3, l, &[1, 2], l);
    e.handle_packet(Time::from_micros(500), m, &early);
    assert!(
        e.poll_transmit().is_none(),
        "within r_f x local RTD of getting block 3: no repair yet"
    );
    e.handle_packet(Time::from_millis(5), m, &early);
    let t = e.poll_transmit().expect("a local re-multicast");
    assert_eq!(t.dest, Dest::Group(lg));
    let p = Packet::decode(&t.payload).unwrap();
    assert_eq!(p.header.flags & FLAG_RETRANSMISSION, FLAG_RETRANSMISSION);
    assert!(matches!(
        p.message,
        Message::Tree(wire::Message::LocalData { seq: 3, .. })
    ));
    assert!(e.poll_transmit().is_none(), "only block 3");
    assert_eq!(e.stats().repairs_sent, 1);
    // Blocks 0..3 are below the member's LW_r: freed from the retransmission buffer.
    assert_eq!(e.retx_len(), 3);
    assert_eq!(e.gauge(Gauge::Held), Some(3.0));
    // The member catches up: everything is freed.
    e.handle_packet(Time::from_millis(10), m, &local_status(m, 6, l, &[], l));
    assert_eq!(e.retx_len(), 0);
    assert_eq!(e.gauge(Gauge::HeldPeak), Some(6.0));
}

/// A status from the reporter showing everything received never triggers a global
/// re-multicast, and an incomplete one does so only after r_f × RTD.
#[test]
fn source_remulticasts_after_rf_rtd_only() {
    let rep = Reporter {
        epi: 5,
        rtd: Duration::from_millis(10),
        slack: Duration::ZERO,
    };
    let mut src = Source::new(SourceConfig::new(NodeId(0), GroupId(1), vec![rep], 8));
    for _ in 0..4 {
        src.send(Time::ZERO, Bytes::from_static(b"abc")).unwrap();
    }
    let sent: Vec<_> = core::iter::from_fn(|| src.poll_transmit()).collect();
    assert_eq!(sent.len(), 4);
    let status = |lw: u64, set: &[usize]| {
        let lob = bits(8, set);
        Packet::to_vec(
            Envelope {
                session: 0,
                source: 5,
                flags: 0,
            },
            &Message::Tree(wire::Message::Status(wire::Status {
                vc: 1,
                id: 5,
                k: 1,
                l: 8,
                lw_r: lw,
                buffer_available: 8,
                lob: &lob,
            })),
        )
        .unwrap()
    };
    // At 11 ms (< 1.2 x 10 ms) block 1 missing: no re-multicast yet.
    src.handle_packet(Time::from_millis(11), NodeId(5), &status(1, &[1, 2]));
    assert!(src.poll_transmit().is_none());
    assert_eq!(src.outstanding(), 1, "blocks 0, 2 and 3 acknowledged");
    // At 13 ms: re-multicast block 1 only (2 and 3 are acknowledged by the LOB).
    src.handle_packet(Time::from_millis(13), NodeId(5), &status(1, &[1, 2]));
    let t = src.poll_transmit().unwrap();
    let p = Packet::decode(&t.payload).unwrap();
    assert!(matches!(
        p.message,
        Message::Tree(wire::Message::Data { seq: 1, .. })
    ));
    assert_eq!(p.header.flags, FLAG_RETRANSMISSION);
    assert!(src.poll_transmit().is_none());
    assert_eq!(src.stats().repairs_sent, 1);
    // Everything received: done, and after close, Completed.
    src.handle_packet(Time::from_millis(20), NodeId(5), &status(4, &[]));
    assert_eq!(src.outstanding(), 0);
    let (evs, done) = close_and_drain_events(&mut src, Time::from_millis(21));
    assert_eq!(done, 4);
    assert!(evs.contains(&Event::LossDetected { seq: 1 }));
    assert_eq!(evs.last(), Some(&Event::Completed));
}

/// DSP on the testkit mesh with 10 % loss of every copy (data and status): the source never
/// has more than L blocks outstanding, never sends block s before s < LW_r + buffer, and
/// every endpoint gets every block exactly once, in order.
#[test]
fn dsp_on_a_lossy_mesh_stays_within_l_and_delivers_exactly_once() {
    let l = 6;
    let n_blocks = 300u64;
    let mut h = Harness::new(Duration::from_millis(2), 0.10, 42);
    // Node ids are assigned in order: 0 source, 1..=2 designated, 3..=6 members.
    let (d1, d2) = (NodeId(1), NodeId(2));
    let members = [
        (NodeId(3), d1),
        (NodeId(4), d1),
        (NodeId(5), d2),
        (NodeId(6), d2),
    ];
    let (g, lg1, lg2) = (GroupId(1), GroupId(2), GroupId(3));
    let reporters = vec![
        Reporter {
            epi: 1,
            rtd: Duration::from_millis(4),
            slack: Duration::ZERO,
        },
        Reporter {
            epi: 2,
            rtd: Duration::from_millis(4),
            slack: Duration::ZERO,
        },
    ];
    let mut sc = SourceConfig::new(NodeId(0), g, reporters, l);
    sc.rate_bps = 8_000_000;
    assert_eq!(h.add(Box::new(Source::new(sc))), NodeId(0));
    for (d, lg) in [(d1, lg1), (d2, lg2)] {
        let ms: Vec<NodeId> = members.iter().filter(|m| m.1 == d).map(|m| m.0).collect();
        let mut c = EndpointConfig::new(
            d,
            NodeId(0),
            Role::Designated {
                members: ms,
                local_group: lg,
            },
            l,
        );
        c.local_rtd = Duration::from_millis(4);
        let rng = AgentRng::from_seed(u64::from(d.0));
        assert_eq!(h.add(Box::new(Endpoint::new(c, rng))), d);
    }
    for &(m, d) in &members {
        let c = EndpointConfig::new(m, NodeId(0), Role::Member { designated: d }, l);
        let rng = AgentRng::from_seed(u64::from(m.0));
        assert_eq!(h.add(Box::new(Endpoint::new(c, rng))), m);
    }
    h.set_group(g, (1..=6).map(NodeId).collect());
    h.set_group(lg1, vec![NodeId(3), NodeId(4)]);
    h.set_group(lg2, vec![NodeId(5), NodeId(6)]);
    let mut next = 0u64;
    let mut t = Time::ZERO;
    while t < Time::from_secs(60) {
        h.with_sender(NodeId(0), |a, now| feed_blocks(a, now, &mut next, n_blocks));
        t = h.run_until(t + Duration::from_millis(5));
        if h.events[0].iter().any(|(_, e)| *e == Event::Completed) {
            break;
        }
    }
    h.run_until(t + Duration::from_millis(500));
    assert!(h.events[0].iter().any(|(_, e)| *e == Event::Completed));
    let peak = h
        .agent(NodeId(0))
        .and_then(|a| a.gauge(Gauge::HeldPeak))
        .unwrap_or(0.0);
    assert!(peak <= f64::from(l), "peak {peak} > L");
    assert!(peak >= 1.0);
    for node in 1..=6usize {
        let seqs: Vec<u64> = h.events[node]
            .iter()
            .filter_map(|(_, e)| match e {
                Event::Delivered { seq, data } => {
                    assert_eq!(&data[..8], &seq.to_be_bytes());
                    Some(*seq)
                }
                _ => None,
            })
            .collect();
        assert_eq!(seqs, (0..n_blocks).collect::<Vec<_>>(), "node {node}");
    }
}

#[test]
fn malformed_and_foreign_packets_are_counted_not_fatal() {
    let mut e = Endpoint::new(
        EndpointConfig::new(
            NodeId(1),
            NodeId(0),
            Role::Consolidated {
                exchange: NodeId(9),
            },
            8,
        ),
        AgentRng::from_seed(1),
    );
    e.handle_packet(Time::ZERO, NodeId(0), &[0x52, 0x4d, 1, 4, 0]);
    e.handle_packet(Time::ZERO, NodeId(0), &[]);
    let other = Packet::to_vec(
        Envelope {
            session: 99,
            source: 0,
            flags: 0,
        },
        &Message::Tree(wire::Message::Data {
            mvci: 1,
            seq: 0,
            payload: b"z",
        }),
    )
    .unwrap();
    e.handle_packet(Time::ZERO, NodeId(0), &other);
    // A block far beyond the reassembly buffer is dropped, not stored.
    e.handle_packet(Time::ZERO, NodeId(0), &data_packet(1_000_000, b"far"));
    assert_eq!(e.stats().malformed, 2);
    assert_eq!(e.stats().ignored, 1);
    assert_eq!(e.lw(), 0);
    assert!(e.poll_event().is_none());
    assert_eq!(e.buffer_available(), 8);
}

/// A DSP member that lost block 0 still takes every block the source may send meanwhile: its
/// designated endpoint lets the source run `R` blocks past a retransmission buffer of `C`
/// waiting for the member, so the member accepts `R + C` past its first missing block. An
/// endpoint that reports its own `buffer_available` accepts only the `R` it announced.
#[test]
fn a_dsp_member_accepts_what_its_designated_endpoint_lets_the_source_send() {
    let overflow_after = |role: Role| {
        let mut e = Endpoint::new(
            EndpointConfig::new(NodeId(1), NodeId(0), role, 8),
            AgentRng::from_seed(1),
        );
        // Block 0 is lost; 1.. arrive until the endpoint first drops one as too far.
        let mut taken = 0u64;
        for seq in 1..100 {
            e.handle_packet(Time::ZERO, NodeId(0), &data_packet(seq, b"x"));
            if e.gauge(Gauge::Overflow).unwrap_or(0.0) > 0.0 {
                break;
            }
            taken = seq;
        }
        assert_eq!(e.lw(), 0);
        taken
    };
    let member = Role::Member {
        designated: NodeId(2),
    };
    let reporter = Role::Consolidated {
        exchange: NodeId(9),
    };
    assert_eq!(overflow_after(member), 15, "R + C = 16 blocks from block 0");
    assert_eq!(overflow_after(reporter), 7, "R = 8 blocks from block 0");
}

#[test]
fn k_field_is_the_interval_in_t_in_units() {
    // RTD 60 ms, kou 8: T_IN = 7.5 ms; a 5 ms interval rounds to k = 1.
    let ipt = Duration::from_nanos(54_613);
    assert_eq!(
        k_field(Duration::from_millis(5), Duration::from_millis(60), 8, ipt),
        1
    );
    // RTD 10 ms, kou 8: T_IN = 1.25 ms → k = 4.
    assert_eq!(
        k_field(Duration::from_millis(5), Duration::from_millis(10), 8, ipt),
        4
    );
    // No RTD: T_IN = ipt.
    assert_eq!(
        k_field(Duration::from_micros(546), Duration::ZERO, 8, ipt),
        10
    );
}

mod props {
    use super::*;
    use proptest::prelude::*;

    fn status(l: u32) -> impl Strategy<Value = BlockStatus> {
        (
            0u64..300,
            proptest::collection::vec(any::<u8>(), 0..64),
            0u32..50,
        )
            .prop_map(move |(lw, mut raw, buf)| {
                raw.resize(wire::bitmap_bytes(l), 0);
                if !l.is_multiple_of(8) {
                    if let Some(b) = raw.last_mut() {
                        *b &= (1u8 << (l % 8)) - 1;
                    }
                }
                BlockStatus { lw, lob: raw, buf }
            })
    }

    proptest! {
        /// The word-wise consolidation equals the definition block by block: received by all
        /// (pessimistic) or by some (optimistic) endpoint, aligned at min / max LW_r.
        #[test]
        fn consolidation_matches_its_definition(
            (l, sts) in (1u32..200).prop_flat_map(|l| (Just(l), proptest::collection::vec(status(l), 1..6))),
        ) {
            for merge in [Merge::Pessimistic, Merge::Optimistic] {
                let c = consolidate(merge, l, &sts).unwrap();
                let lw = match merge {
                    Merge::Pessimistic => sts.iter().map(|s| s.lw).min().unwrap(),
                    Merge::Optimistic => sts.iter().map(|s| s.lw).max().unwrap(),
                };
                prop_assert_eq!(c.lw, lw);
                prop_assert_eq!(c.buf, sts.iter().map(|s| s.buf).min().unwrap());
                for i in 0..u64::from(l) {
                    let want = match merge {
                        Merge::Pessimistic => sts.iter().all(|s| s.received(lw + i, l)),
                        Merge::Optimistic => sts.iter().any(|s| s.received(lw + i, l)),
                    };
                    prop_assert_eq!(wire::bit(&c.lob, i as usize), want, "bit {}", i);
                }
                let highest = c.highest(l);
                let naive = (0..u64::from(l)).rev().find(|&i| wire::bit(&c.lob, i as usize))
                    .map(|i| c.lw + i).or_else(|| c.lw.checked_sub(1));
                prop_assert_eq!(highest, naive);
            }
        }
    }
}

/// A designated endpoint alone in its region keeps no retransmission buffer: it would
/// never be freed, and a full one would stop the source.
#[test]
fn designated_without_members_keeps_nothing() {
    let cfg = EndpointConfig::new(
        NodeId(1),
        NodeId(0),
        Role::Designated {
            members: vec![],
            local_group: GroupId(2),
        },
        4,
    );
    let mut e = Endpoint::new(cfg, AgentRng::from_seed(1));
    for s in 0..20 {
        e.handle_packet(Time::ZERO, NodeId(0), &data_packet(s, b"x"));
    }
    assert_eq!(e.lw(), 20);
    assert_eq!(e.retx_len(), 0);
    assert_eq!(e.buffer_available(), 4);
}

/// A source whose only other reporter was removed completes without it, and a removed
/// reporter's window no longer holds new blocks back.
#[test]
fn source_stops_waiting_for_a_removed_reporter() {
    let reps = [5, 6].map(|epi| Reporter {
        epi,
        rtd: Duration::from_millis(10),
        slack: Duration::ZERO,
    });
    let mut src = Source::new(SourceConfig::new(NodeId(0), GroupId(1), reps.to_vec(), 4));
    for _ in 0..6 {
        src.send(Time::ZERO, Bytes::from_static(b"abc")).unwrap();
    }
    assert_eq!(
        core::iter::from_fn(|| src.poll_transmit()).count(),
        4,
        "L = 4"
    );
    let status = |id: u32, lw: u64| {
        let lob = bits(4, &[]);
        Packet::to_vec(
            Envelope {
                session: 0,
                source: id,
                flags: 0,
            },
            &Message::Tree(wire::Message::Status(wire::Status {
                vc: 1,
                id,
                k: 1,
                l: 4,
                lw_r: lw,
                buffer_available: 4,
                lob: &lob,
            })),
        )
        .unwrap()
    };
    // Reporter 5 has everything; 6 is silent: blocks stay outstanding.
    src.handle_packet(Time::from_millis(1), NodeId(5), &status(5, 4));
    assert_eq!(src.outstanding(), 4);
    assert!(
        !src.remove_receiver(Time::from_millis(2), NodeId(9)),
        "not a reporter"
    );
    assert!(src.remove_receiver(Time::from_millis(2), NodeId(6)));
    assert!(
        !src.remove_receiver(Time::from_millis(2), NodeId(6)),
        "only once"
    );
    // Blocks 0..4 done, 4 and 5 go out at once, waiting for reporter 5 only.
    assert_eq!(core::iter::from_fn(|| src.poll_transmit()).count(), 2);
    src.handle_packet(Time::from_millis(3), NodeId(6), &status(6, 0));
    assert_eq!(
        src.stats().ignored,
        1,
        "a removed reporter's status is ignored"
    );
    src.handle_packet(Time::from_millis(4), NodeId(5), &status(5, 6));
    let (evs, done) = close_and_drain_events(&mut src, Time::from_millis(5));
    assert_eq!(done, 6);
    assert_eq!(evs.last(), Some(&Event::Completed));
}

/// A designated endpoint stops holding blocks for a removed member.
#[test]
fn designated_frees_blocks_held_for_a_removed_member() {
    let (e1, m1, m2) = (NodeId(1), NodeId(2), NodeId(3));
    let l = 16;
    let cfg = EndpointConfig::new(
        e1,
        NodeId(0),
        Role::Designated {
            members: vec![m1, m2],
            local_group: GroupId(7),
        },
        l,
    );
    let mut e = Endpoint::new(cfg, AgentRng::from_seed(3));
    for s in 0..6 {
        e.handle_packet(Time::from_micros(10 * s), NodeId(0), &data_packet(s, b"x"));
    }
    e.handle_packet(Time::from_millis(1), m1, &local_status(m1, 6, l, &[], l));
    assert_eq!(e.retx_len(), 6, "member 3 has reported nothing yet");
    assert!(!e.remove_receiver(Time::from_millis(2), NodeId(9)));
    assert!(e.remove_receiver(Time::from_millis(2), m2));
    assert_eq!(e.retx_len(), 0);
}

/// A DSP member that never reports (it died right after joining) holds its designated
/// endpoint's retransmission buffer and so the source; once the driver removes it, the
/// window moves and the transfer completes. Before the fix the one removal freed the buffer
/// once, the next blocks filled it again (freed only by a member's status, and none was
/// left) and the source stopped for good at `buffer_available` 0.
#[test]
fn the_window_moves_after_the_last_member_is_removed_mid_transfer() {
    const N: u64 = 200;
    let l = 16;
    let (src, e1, dead) = (NodeId(0), NodeId(1), NodeId(2));
    let local = GroupId(2);
    let mut h = Harness::new(Duration::from_micros(500), 0.0, 1);
    let rep = Reporter {
        epi: e1.0,
        rtd: Duration::from_millis(2),
        slack: Duration::ZERO,
    };
    let mut sc = SourceConfig::new(src, GroupId(1), vec![rep], l);
    sc.queue_limit = usize::MAX;
    assert_eq!(h.add(Box::new(Source::new(sc))), src);
    let role = Role::Designated {
        members: vec![dead],
        local_group: local,
    };
    let mut c = EndpointConfig::new(e1, src, role, l);
    c.standby = 3 * l;
    assert_eq!(
        h.add(Box::new(Endpoint::new(c, AgentRng::from_seed(4)))),
        e1
    );
    h.set_group(GroupId(1), vec![e1]);
    h.set_group(local, vec![]);
    h.send_all(src, N);
    h.run_until(Time::from_secs(1));
    let stuck = h.delivered(1).len();
    assert!(
        stuck < N as usize,
        "held by the silent member: {stuck} of {N}"
    );
    h.with_sender(e1, |a, now| assert!(a.remove_receiver(now, dead)));
    h.run_until(Time::from_secs(2));
    assert_eq!(h.delivered_seqs(1), (0..N).collect::<Vec<_>>());
    assert!(h.completed(0), "the source completed");
}

/// The designated endpoint hosted as a router agent: the source's data passes on to the
/// members (and is held), a member's status addressed to it stops there and brings its local
/// re-multicast, and what it must not take (a status from a stranger, one addressed to
/// another node) is dropped and counted; other families pass.
#[test]
fn a_hosted_designated_endpoint_passes_data_and_takes_statuses() {
    use crate::{IfaceId, RouteDecision, RouterAgent};
    let (d, m, src) = (NodeId(100), NodeId(2), NodeId(0));
    let lg = GroupId(7);
    let l = 16;
    let mut cfg = EndpointConfig::new(
        d,
        src,
        Role::Designated {
            members: vec![m],
            local_group: lg,
        },
        l,
    );
    cfg.local_rtd = Duration::from_millis(1);
    let mut h = super::HostedDesignated::new(cfg.clone(), AgentRng::from_seed(3)).unwrap();
    let up = IfaceId(0);
    for s in 0..6 {
        let at = Time::from_micros(10 * s);
        let dec = h.on_packet(at, up, src, Dest::Group(GroupId(0)), &data_packet(s, b"x"));
        assert_eq!(dec, RouteDecision::Forward, "the members need the data too");
    }
    assert_eq!(h.endpoint().lw(), 6);
    let st = local_status(m, 3, l, &[1, 2], l);
    let dec = h.on_packet(Time::from_millis(5), IfaceId(1), m, Dest::Node(d), &st);
    assert_eq!(dec, RouteDecision::Consume);
    let t = h.poll_transmit().expect("a local re-multicast");
    assert_eq!(t.transmit.dest, Dest::Group(lg));
    assert!(t.via.is_none());
    assert_eq!(h.stats().repairs_sent, 1);
    let before = h.stats().ignored;
    let stranger = local_status(NodeId(9), 3, l, &[1, 2], l);
    // A stranger's status to this node is for the agent there, if any (on no link); a
    // member's packet to another node passes through.
    assert_eq!(
        h.on_packet(
            Time::from_millis(6),
            IfaceId(1),
            NodeId(9),
            Dest::Node(d),
            &stranger
        ),
        RouteDecision::ForwardOn(vec![IfaceId::LOCAL])
    );
    assert_eq!(
        h.on_packet(
            Time::from_millis(6),
            IfaceId(1),
            m,
            Dest::Node(NodeId(5)),
            &st
        ),
        RouteDecision::Forward
    );
    assert_eq!(h.stats().ignored, before + 2);
    let end = Packet::to_vec(
        Envelope::default(),
        &Message::Session(rmcast_wire::session::Message::End { outcomes: &[] }),
    )
    .unwrap();
    assert_eq!(
        h.on_packet(Time::from_millis(7), up, src, Dest::Group(GroupId(0)), &end),
        RouteDecision::Forward
    );
    // An evicted member no longer holds blocks back.
    assert!(h.remove_member(Time::from_millis(8), m));
    assert!(!h.remove_member(Time::from_millis(8), m));
    // Only a designated role can be hosted.
    cfg.role = Role::Member { designated: d };
    assert!(super::HostedDesignated::new(cfg, AgentRng::from_seed(3)).is_none());
}

/// A paced source sends one block at an instant without a bucket, and as many as its bucket
/// holds with one: a driver that wakes it once a millisecond then moves the rate, not one
/// block per wake-up.
#[test]
fn a_paced_source_sends_its_bucket_at_once() {
    let rep = Reporter {
        epi: 5,
        rtd: Duration::from_millis(10),
        slack: Duration::ZERO,
    };
    let sent_at_once = |burst: u64| {
        let mut c = SourceConfig::new(NodeId(0), GroupId(1), vec![rep], 64);
        c.rate_bps = 1_000_000_000;
        c.burst_bytes = burst;
        let mut src = Source::new(c);
        for _ in 0..32 {
            src.send(Time::ZERO, Bytes::from(vec![7u8; 1400])).unwrap();
        }
        core::iter::from_fn(|| src.poll_transmit()).count()
    };
    assert_eq!(sent_at_once(0), 1);
    // 14,000 bytes hold nine blocks of 1,400 bytes with their headers: nine go at once, the
    // tenth when the rate allows it.
    assert_eq!(sent_at_once(10 * 1_400), 9);
}
