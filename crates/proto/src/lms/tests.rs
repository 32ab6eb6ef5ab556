use super::*;
use crate::GroupId;
use crate::SenderAgent;
use rmcast_wire::Packet;

const G: GroupId = GroupId(1);

fn pkt(from: u32, msg: wire::Message<'_>) -> Vec<u8> {
    let retransmission = matches!(msg, wire::Message::Repair { .. });
    crate::testkit::datagram(from, retransmission, &msg.into())
}

fn dreq(seq: u64, tp: u32, tp_iface: u32, attempt: u16) -> Vec<u8> {
    pkt(
        tp,
        wire::Message::Dreq {
            seq,
            requester: 8,
            tp,
            tp_iface,
            attempt,
        },
    )
}

/// A repair from `from` for the turning point 40, interface 3.
fn repair(from: u32, seq: u64, payload: &[u8]) -> Vec<u8> {
    pkt(
        from,
        wire::Message::Repair {
            seq,
            tp: 40,
            tp_iface: 3,
            payload,
        },
    )
}

fn router(replier: Option<u32>) -> Router {
    Router::new(RouterConfig::new(NodeId(40), G, replier.map(IfaceId)))
}

#[test]
fn replier_is_the_closest_downstream_receiver_lowest_iface_on_ties() {
    let ms = Duration::from_millis;
    assert_eq!(
        choose_replier(&[
            (IfaceId(1), ms(9)),
            (IfaceId(2), ms(3)),
            (IfaceId(3), ms(5))
        ]),
        Some(IfaceId(2))
    );
    assert_eq!(
        choose_replier(&[(IfaceId(3), ms(3)), (IfaceId(1), ms(3))]),
        Some(IfaceId(1))
    );
    assert_eq!(choose_replier(&[]), None);
}

#[test]
fn request_on_replier_link_goes_up_elsewhere_turns() {
    let mut r = router(Some(2));
    let req = pkt(7, wire::Message::Request { seq: 5, attempt: 0 });
    let up = Dest::Node(NodeId(0));
    assert_eq!(
        r.on_packet(Time::ZERO, IfaceId(2), NodeId(7), up, &req),
        RouteDecision::Forward
    );
    assert!(r.poll_transmit().is_none());
    assert_eq!(
        r.on_packet(Time::ZERO, IfaceId(3), NodeId(8), up, &req),
        RouteDecision::Consume
    );
    let t = r.poll_transmit().unwrap();
    assert_eq!(t.via, Some(vec![IfaceId(2)]));
    let p = Packet::decode(&t.transmit.payload).unwrap();
    assert_eq!(
        p.message,
        Message::Lms(wire::Message::Dreq {
            seq: 5,
            requester: 8,
            tp: 40,
            tp_iface: 3,
            attempt: 0
        })
    );
    assert_eq!(r.router_stats().turned, 1);
    assert_eq!(r.router_stats().passed_up, 1);
}

/// A router on a receiver's own node has that receiver as its replier ([`IfaceId::LOCAL`]),
/// whatever lies below: a DREQ from above ends there (no interface: the driver delivers it
/// to the member), a request from below turns there with its DREQ to the node's own agent,
/// and that agent's repair to its own node is subcast down the requester's interface. The
/// deployment gives exactly the routers on receivers' nodes the local replier.
#[test]
fn the_receiver_on_the_router_s_own_node_is_its_replier() {
    let mut r = Router::new(RouterConfig::new(NodeId(41), G, Some(IfaceId::LOCAL)));
    assert_eq!(
        r.on_packet(
            Time::ZERO,
            IfaceId(0),
            NodeId(40),
            Dest::Group(G),
            &dreq(5, 40, 3, 0)
        ),
        RouteDecision::ForwardOn(vec![IfaceId::LOCAL])
    );
    assert_eq!(r.router_stats().dreqs_here, 1);
    assert_eq!(r.router_stats().dreqs_down, 0);
    let req = pkt(7, wire::Message::Request { seq: 6, attempt: 0 });
    assert_eq!(
        r.on_packet(
            Time::ZERO,
            IfaceId(4),
            NodeId(7),
            Dest::Node(NodeId(0)),
            &req
        ),
        RouteDecision::Consume
    );
    assert_eq!(r.router_stats().turned, 1);
    let t = r.poll_transmit().unwrap();
    assert_eq!(t.via, Some(vec![IfaceId::LOCAL]));
    let m = Packet::decode(&t.transmit.payload).unwrap().message;
    assert!(matches!(
        m,
        Message::Lms(wire::Message::Dreq {
            seq: 6,
            tp: 41,
            tp_iface: 4,
            ..
        })
    ));
    let rep = pkt(
        41,
        wire::Message::Repair {
            seq: 6,
            tp: 41,
            tp_iface: 4,
            payload: b"x",
        },
    );
    let here = Dest::Node(NodeId(41));
    assert_eq!(
        r.on_packet(Time::ZERO, IfaceId::LOCAL, NodeId(41), here, &rep),
        RouteDecision::Consume
    );
    assert_eq!(r.poll_transmit().unwrap().via, Some(vec![IfaceId(4)]));
    let receivers = [NodeId(7), NodeId(41)];
    let mut layout = crate::deploy::Layout::new(NodeId(0), G, &receivers);
    let mut below = crate::deploy::RouterSite::new(NodeId(41));
    below.downstream = vec![(IfaceId(2), Duration::from_millis(1))];
    layout.routers = vec![crate::deploy::RouterSite::new(NodeId(40)), below];
    let d = deploy(&layout, &Params::default());
    let repliers: Vec<_> = d.routers.iter().map(|c| c.replier).collect();
    assert_eq!(repliers, vec![None, Some(IfaceId::LOCAL)]);
}

#[test]
fn dreq_follows_replier_links_and_repair_is_subcast_from_the_turning_point() {
    let mut below = Router::new(RouterConfig::new(NodeId(41), G, Some(IfaceId(4))));
    let dreq = dreq(5, 40, 3, 0);
    assert_eq!(
        below.on_packet(Time::ZERO, IfaceId(0), NodeId(40), Dest::Group(G), &dreq),
        RouteDecision::ForwardOn(vec![IfaceId(4)])
    );
    let mut tp = router(Some(2));
    let rep = repair(9, 5, b"x");
    assert_eq!(
        tp.on_packet(
            Time::ZERO,
            IfaceId(2),
            NodeId(9),
            Dest::Node(NodeId(40)),
            &rep
        ),
        RouteDecision::Consume
    );
    let t = tp.poll_transmit().unwrap();
    assert_eq!(t.via, Some(vec![IfaceId(3)]));
    assert_eq!(t.transmit.dest, Dest::Group(G));
    assert_eq!(t.transmit.payload.as_ref(), &rep[..]);
    // a repair for another turning point passes through
    assert_eq!(
        below.on_packet(
            Time::ZERO,
            IfaceId(4),
            NodeId(9),
            Dest::Node(NodeId(40)),
            &rep
        ),
        RouteDecision::Forward
    );
}

#[test]
fn receiver_requests_at_once_serves_dreqs_and_counts_duplicates() {
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(3), NodeId(0)));
    r.handle_packet(
        Time::ZERO,
        NodeId(0),
        &pkt(
            0,
            wire::Message::Data {
                seq: 1,
                payload: b"b",
            },
        ),
    );
    let t = r.poll_transmit().unwrap();
    assert_eq!(t.dest, Dest::Node(NodeId(0)));
    assert_eq!(r.poll_timeout(), Some(Time::from_millis(500)));
    // it cannot serve seq 0; it can serve seq 1
    r.handle_packet(Time::ZERO, NodeId(40), &dreq(0, 40, 3, 0));
    assert!(r.poll_transmit().is_none());
    r.handle_packet(Time::ZERO, NodeId(40), &dreq(1, 40, 3, 0));
    let t = r.poll_transmit().unwrap();
    assert_eq!(t.dest, Dest::Node(NodeId(40)));
    // the request is repeated until the data comes
    r.handle_timeout(Time::from_millis(500));
    assert!(r.poll_transmit().is_some());
    // The repair, then the same repair again.
    let repair = repair(40, 0, b"a");
    for at in [600, 601] {
        r.handle_packet(Time::from_millis(at), NodeId(40), &repair);
    }
    assert_eq!(r.stats().duplicates, 1);
    assert_eq!(r.stats().delivered, 2);
    assert_eq!(r.poll_timeout(), None);
}

#[test]
fn source_reports_completed_only_after_linger_and_then_stops_heartbeats() {
    let mut s = Source::new(SourceConfig::new(NodeId(0), G));
    s.handle_timeout(Time::ZERO);
    s.send(Time::ZERO, Bytes::from_static(b"a")).unwrap();
    s.close(Time::from_secs(1));
    assert_eq!(s.poll_event(), None);
    let mut now = Time::from_secs(1);
    while let Some(t) = s.poll_timeout() {
        now = t;
        s.handle_timeout(t);
        if let Some(e) = s.poll_event() {
            assert_eq!(e, Event::Completed);
            break;
        }
    }
    assert_eq!(now, Time::from_secs(6));
    assert_eq!(s.poll_timeout(), None);
}

fn data(seq: u64) -> Vec<u8> {
    pkt(0, wire::Message::Data { seq, payload: b"d" })
}

fn repairs_out(r: &mut Receiver) -> usize {
    let mut n = 0;
    while let Some(t) = r.poll_transmit() {
        if let Ok(p) = Packet::decode(&t.payload) {
            n += usize::from(matches!(
                p.message,
                Message::Lms(wire::Message::Repair { .. })
            ));
        }
    }
    n
}

#[test]
fn replier_leaves_first_requests_its_own_repair_or_last_answer_covers() {
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(3), NodeId(0)));
    let t = Time::ZERO;
    // seq 0 arrives as data, seq 2 after a gap, seq 1 as a (source) repair.
    r.handle_packet(t, NodeId(0), &data(0));
    r.handle_packet(t, NodeId(0), &data(2));
    let rep = pkt(
        0,
        wire::Message::Repair {
            seq: 1,
            tp: wire::NO_TP,
            tp_iface: 0,
            payload: b"r",
        },
    );
    r.handle_packet(t, NodeId(0), &rep);
    repairs_out(&mut r);
    // A first request for the packet it got as a repair: the same repair reached the
    // requester's subtree, so no answer. A repeated request is answered.
    r.handle_packet(t, NodeId(40), &dreq(1, 40, 3, 0));
    assert_eq!(repairs_out(&mut r), 0);
    assert_eq!(r.lms_stats().dreqs_covered, 1);
    r.handle_packet(t, NodeId(40), &dreq(1, 40, 3, 1));
    assert_eq!(repairs_out(&mut r), 1);
    // Original data: the first request is answered, a second first request for the same
    // turning point and interface is not, another interface is, and a repeat is.
    r.handle_packet(t, NodeId(40), &dreq(0, 40, 3, 0));
    assert_eq!(repairs_out(&mut r), 1);
    r.handle_packet(t, NodeId(40), &dreq(0, 40, 3, 0));
    assert_eq!(repairs_out(&mut r), 0);
    r.handle_packet(t, NodeId(40), &dreq(0, 40, 4, 0));
    assert_eq!(repairs_out(&mut r), 1);
    r.handle_packet(t, NodeId(40), &dreq(0, 40, 3, 2));
    assert_eq!(repairs_out(&mut r), 1);
    assert_eq!(r.lms_stats().dreqs_covered, 2);
    assert_eq!(r.lms_stats().dreqs_served, 4);
}

#[test]
fn requests_carry_their_attempt_number() {
    let mut r = Receiver::new(ReceiverConfig::new(NodeId(3), NodeId(0)));
    r.handle_packet(Time::ZERO, NodeId(0), &data(1));
    let attempt = |t: Transmit| match Packet::decode(&t.payload).unwrap().message {
        Message::Lms(wire::Message::Request { seq: 0, attempt }) => attempt,
        m => panic!("{m:?}"),
    };
    assert_eq!(attempt(r.poll_transmit().unwrap()), 0);
    r.handle_timeout(Time::from_millis(500));
    assert_eq!(attempt(r.poll_transmit().unwrap()), 1);
    // a router copies it into the DREQ
    let mut x = router(Some(2));
    let req = pkt(7, wire::Message::Request { seq: 0, attempt: 1 });
    x.on_packet(
        Time::ZERO,
        IfaceId(3),
        NodeId(7),
        Dest::Node(NodeId(0)),
        &req,
    );
    let d = x.poll_transmit().unwrap();
    assert!(matches!(
        Packet::decode(&d.transmit.payload).unwrap().message,
        Message::Lms(wire::Message::Dreq { attempt: 1, .. })
    ));
}

#[test]
fn receiver_refreshes_its_cost_every_interval() {
    let mut c = ReceiverConfig::new(NodeId(3), NodeId(0));
    c.refresh_every = Some(3);
    let mut r = Receiver::new(c);
    let mut costs = Vec::new();
    // packets 0..=8 except 4: one loss in the second interval
    for s in (0..9).filter(|&s| s != 4) {
        r.handle_packet(Time::ZERO, NodeId(0), &data(s));
        while let Some(t) = r.poll_transmit() {
            if let Message::Lms(wire::Message::Refresh { cost }) =
                Packet::decode(&t.payload).unwrap().message
            {
                assert_eq!(t.dest, Dest::Node(NodeId(0)));
                costs.push(cost);
            }
        }
    }
    assert_eq!(costs, vec![0, 1]);
    // static receivers never refresh
    let mut s = Receiver::new(ReceiverConfig::new(NodeId(4), NodeId(0)));
    for q in 0..9 {
        s.handle_packet(Time::ZERO, NodeId(0), &data(q));
    }
    assert_eq!(s.lms_stats().refreshes_sent, 0);
}

fn refresh(r: &mut Router, iface: u32, cost: u32) -> (RouteDecision, Vec<u32>) {
    let p = pkt(9, wire::Message::Refresh { cost });
    let d = r.on_packet(
        Time::ZERO,
        IfaceId(iface),
        NodeId(9),
        Dest::Node(NodeId(0)),
        &p,
    );
    let mut up = Vec::new();
    while let Some(t) = r.poll_transmit() {
        assert_eq!(t.via, None);
        assert_eq!(t.transmit.dest, Dest::Node(NodeId(0)));
        if let Message::Lms(wire::Message::Refresh { cost }) =
            Packet::decode(&t.transmit.payload).unwrap().message
        {
            up.push(cost);
        }
    }
    (d, up)
}

#[test]
fn adaptive_router_moves_its_replier_link_off_a_lossy_replier() {
    let ms = Duration::from_millis;
    let mut c = RouterConfig::new(NodeId(40), G, Some(IfaceId(2)));
    c.adaptive = true;
    c.candidates = vec![
        (IfaceId(2), ms(1)),
        (IfaceId(3), ms(5)),
        (IfaceId(4), ms(3)),
    ];
    let mut r = Router::new(c);
    // Loss-free refreshes change nothing; the replier's own refresh goes upstream.
    assert_eq!(refresh(&mut r, 3, 0), (RouteDecision::Consume, vec![]));
    assert_eq!(refresh(&mut r, 4, 0), (RouteDecision::Consume, vec![]));
    assert_eq!(refresh(&mut r, 2, 0), (RouteDecision::Consume, vec![0]));
    assert_eq!(r.replier(), Some(IfaceId(2)));
    // The replier lost a packet: the link moves to the closer of the two loss-free
    // interfaces (4 at 3 ms, not 3 at 5 ms), and the new cost goes upstream.
    assert_eq!(refresh(&mut r, 2, 1), (RouteDecision::Consume, vec![0]));
    assert_eq!(r.replier(), Some(IfaceId(4)));
    assert_eq!(r.router_stats().switches, 1);
    // Requests now turn toward interface 4; the old replier's requests turn here.
    let req = pkt(7, wire::Message::Request { seq: 5, attempt: 0 });
    let up = Dest::Node(NodeId(0));
    assert_eq!(
        r.on_packet(Time::ZERO, IfaceId(2), NodeId(7), up, &req),
        RouteDecision::Consume
    );
    assert_eq!(r.poll_transmit().unwrap().via, Some(vec![IfaceId(4)]));
    // Equal cost keeps the current link; a strictly cheaper interface takes it.
    assert_eq!(refresh(&mut r, 2, 0), (RouteDecision::Consume, vec![]));
    assert_eq!(r.replier(), Some(IfaceId(4)));
    assert_eq!(refresh(&mut r, 4, 2), (RouteDecision::Consume, vec![0]));
    assert_eq!(r.replier(), Some(IfaceId(2)));
    // Replier link plus a cost for each of the two other interfaces.
    assert_eq!(r.state_entries(), 3);
    // A static router never moves and lets refreshes pass.
    let mut s = router(Some(2));
    assert_eq!(refresh(&mut s, 3, 0).0, RouteDecision::Forward);
    assert_eq!(refresh(&mut s, 2, 5).0, RouteDecision::Forward);
    assert_eq!(s.replier(), Some(IfaceId(2)));
    assert_eq!(s.state_entries(), 1);
}
