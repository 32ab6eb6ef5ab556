use super::*;

const G: GroupId = GroupId(1);

fn pkt(from: u32, msg: wire::Message<'_>) -> Vec<u8> {
    let flags = if matches!(msg, wire::Message::Repair { .. }) {
        FLAG_RETRANSMISSION
    } else {
        0
    };
    encode(0, NodeId(from), msg, flags).unwrap().to_vec()
}

fn router(replier: Option<u32>) -> Router {
    Router::new(RouterConfig {
        node: NodeId(40),
        group: G,
        session: 0,
        replier: replier.map(IfaceId),
    })
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
    let req = pkt(7, wire::Message::Request { seq: 5 });
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
            tp_iface: 3
        })
    );
    assert_eq!(r.router_stats().turned, 1);
    assert_eq!(r.router_stats().passed_up, 1);
}

#[test]
fn dreq_follows_replier_links_and_repair_is_subcast_from_the_turning_point() {
    let mut below = Router::new(RouterConfig {
        node: NodeId(41),
        group: G,
        session: 0,
        replier: Some(IfaceId(4)),
    });
    let dreq = pkt(
        40,
        wire::Message::Dreq {
            seq: 5,
            requester: 8,
            tp: 40,
            tp_iface: 3,
        },
    );
    assert_eq!(
        below.on_packet(Time::ZERO, IfaceId(0), NodeId(40), Dest::Group(G), &dreq),
        RouteDecision::ForwardOn(vec![IfaceId(4)])
    );
    let mut tp = router(Some(2));
    let rep = pkt(
        9,
        wire::Message::Repair {
            seq: 5,
            tp: 40,
            tp_iface: 3,
            payload: b"x",
        },
    );
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
    r.handle_packet(
        Time::ZERO,
        NodeId(40),
        &pkt(
            40,
            wire::Message::Dreq {
                seq: 0,
                requester: 8,
                tp: 40,
                tp_iface: 3,
            },
        ),
    );
    assert!(r.poll_transmit().is_none());
    r.handle_packet(
        Time::ZERO,
        NodeId(40),
        &pkt(
            40,
            wire::Message::Dreq {
                seq: 1,
                requester: 8,
                tp: 40,
                tp_iface: 3,
            },
        ),
    );
    let t = r.poll_transmit().unwrap();
    assert_eq!(t.dest, Dest::Node(NodeId(40)));
    // the request is repeated until the data comes
    r.handle_timeout(Time::from_millis(500));
    assert!(r.poll_transmit().is_some());
    r.handle_packet(
        Time::from_millis(600),
        NodeId(40),
        &pkt(
            40,
            wire::Message::Repair {
                seq: 0,
                tp: 40,
                tp_iface: 3,
                payload: b"a",
            },
        ),
    );
    r.handle_packet(
        Time::from_millis(601),
        NodeId(40),
        &pkt(
            40,
            wire::Message::Repair {
                seq: 0,
                tp: 40,
                tp_iface: 3,
                payload: b"a",
            },
        ),
    );
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
