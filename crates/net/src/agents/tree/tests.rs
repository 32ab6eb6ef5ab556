//! Tests of dsp, csp and cp on sockets: regions, roles, the ANNOUNCE and the relay's exchange.

use super::*;
use rmcast_wire::Family;

fn announce(raw: &[u8], running: bool) -> Announced<'_> {
    Announced {
        protocol: Family::Tree as u8,
        window: 64,
        ack_delay_us: 0,
        ack_timeout_us: 0,
        params: raw,
        running,
    }
}

#[test]
fn the_gathering_announce_names_the_variant_and_a_relay_refuses_only_dsp() {
    for (t, v) in [
        (&DSP, Variant::Dsp),
        (&CSP, Variant::Csp),
        (&CP, Variant::Cp),
    ] {
        let raw = t.gathering_params(&crate::sender::SendConfig::new(
            "239.1.2.3:5000".parse().unwrap(),
        ));
        let a = announce(&raw, false);
        assert_eq!(announced_variant(&a), Some(v));
        assert_eq!(DSP.relay_refusal(a).is_some(), v == Variant::Dsp, "{v:?}");
        assert_eq!(DSP.variant_name(&a), Some(v.name()));
    }
    // An older sender's empty gathering parameters say nothing: not refused yet.
    assert_eq!(announced_variant(&announce(&[], false)), None);
    assert!(DSP.relay_refusal(announce(&[], false)).is_none());
    assert_eq!(announced_variant(&announce(&[7], false)), None);
}

#[test]
fn exchange_ids_avoid_every_node_taken() {
    assert_eq!(crate::agents::helper_id(3, &[]), 0xEC00_0003);
    assert_eq!(crate::agents::helper_id(3, &[0xEC00_0003]), 0xEC01_0003);
    assert_eq!(
        crate::agents::helper_id(3, &[0xEC00_0003, 0xEC01_0003]),
        0xEC02_0003
    );
}

/// csp: the sender names one exchange per region, makes them its reporters, takes their
/// status from any address, and gives up with the reason when one never speaks; each
/// receiver builds an endpoint reporting to its region's exchange; a relay with that
/// region hosts the exchange under the named id (cp: and carries the local group).
#[test]
fn csp_and_cp_name_an_exchange_per_region_and_build_its_three_roles() {
    use crate::agents::{Joiner, RelayAt, Start};
    let g: SocketAddr = "239.1.2.3:5000".parse().unwrap();
    let addr = |p: u16| SocketAddr::new("10.0.0.1".parse().unwrap(), p);
    let joined: Vec<Joiner> = vec![
        (5, Some(1), addr(1)),
        (6, Some(1), addr(2)),
        (7, Some(2), addr(3)),
    ];
    let s = crate::agents::tests::settings();
    for t in [&CSP, &CP] {
        let start = Start {
            joined: &joined,
            group: g,
            stream: "",
        };
        let mut started = t.start(&s, &start).unwrap();
        let raw = started.side.params().unwrap();
        let p = DspParams::decode(&raw).unwrap();
        let x: Vec<(u16, u32)> = p
            .entries
            .iter()
            .filter(|e| e.role == DspRole::Exchange)
            .map(|e| (e.region, e.node))
            .collect();
        assert_eq!(x, [(1, 0xEC00_0001), (2, 0xEC00_0002)]);
        let a = announce(&raw, true);
        assert_eq!(announced_variant(&a), Some(t.0));
        assert!(!t.relay_custody(a, Some(1)), "an exchange holds no data");
        assert_eq!(started.side.reported_by(6), Some(0xEC00_0001));
        assert!(
            !started.side.helper(Time::ZERO, 6),
            "a receiver is no helper"
        );
        let t0 = Time::ZERO + Duration::from_secs(1);
        assert!(started.side.stalled(t0).is_none(), "the wait starts");
        assert!(started.side.helper(t0, 0xEC00_0001));
        let late = t0 + crate::agents::HELPER_WAIT;
        let why = started
            .side
            .stalled(late)
            .expect("region 2's exchange never spoke");
        assert!(why.contains("rmcast relay --region 2"), "{why}");
        assert!(started.side.helper(late, 0xEC00_0002));
        assert!(started.side.stalled(late).is_none());
        // A receiver of region 1.
        let me = Me {
            node: 6,
            session: 9,
            sender: 1,
            group: g,
        };
        let r = DSP.receiver(a, &me).unwrap().unwrap();
        let want = if t.0 == Variant::Cp {
            (Some("239.1.2.3:5002".parse().unwrap()), "combined")
        } else {
            (None, "consolidated")
        };
        assert_eq!(r.side.join(), want.0);
        assert_eq!(r.side.place(), Some((1, want.1)));
        // Relays: region 1's hosts the exchange; one without a region forwards.
        let at = |region| RelayAt {
            session: 9,
            sender: 1,
            node: 77,
            receivers: &[],
            region,
            group: g,
        };
        let hosted = DSP.relay(a, &at(Some(1))).unwrap().unwrap();
        assert_eq!(hosted.node, Some(0xEC00_0001));
        assert_eq!(hosted.local_group, want.0);
        assert!(DSP.relay(a, &at(None)).unwrap().is_none());
        assert!(
            DSP.relay(a, &at(Some(9))).unwrap().is_none(),
            "no such region"
        );
        // An evicted receiver is announced as such; its exchange stops waiting for it.
        let mut agent = DSP.relay(a, &at(Some(1))).unwrap().unwrap().agent;
        assert!(started.side.evicted(t0, &mut *started.agent, 5));
        let raw = started.side.params().unwrap();
        DSP.relay_announced(Time::ZERO, &mut *agent, announce(&raw, true));
        let x = agent
            .as_any_mut()
            .and_then(|a| a.downcast_mut::<tree::Exchange>())
            .unwrap();
        assert!(!x.remove_endpoint(NodeId(5)), "already removed");
        assert!(x.remove_endpoint(NodeId(6)));
        // Region 2's only endpoint evicted: the source no longer waits for its exchange
        // (which has nothing left to report); region 1's, with receiver 6 left, it still does.
        assert!(started.side.evicted(t0, &mut *started.agent, 7));
        let src = started.agent.as_sender().unwrap();
        assert!(
            !src.remove_receiver(t0, NodeId(0xEC00_0002)),
            "removed already"
        );
        assert!(
            src.remove_receiver(t0, NodeId(0xEC00_0001)),
            "still waited for"
        );
    }
}

#[test]
fn the_lowest_node_id_of_each_region_is_designated() {
    let a: SocketAddr = "10.0.0.1:4000".parse().unwrap();
    let e = elect(&[
        (9, Some(0), a),
        (3, Some(1), a),
        (4, Some(0), a),
        (2, Some(1), a),
        (7, Some(2), a),
    ]);
    let designated: Vec<u32> = e
        .iter()
        .filter(|e| e.role == DspRole::Designated)
        .map(|e| e.node)
        .collect();
    assert_eq!(designated, [4, 2, 7]);
}

#[test]
fn local_groups_are_derived_from_the_group_port() {
    let g: SocketAddr = "239.1.2.3:5000".parse().unwrap();
    assert_eq!(
        local_group(g, 0).unwrap(),
        "239.1.2.3:5001".parse().unwrap()
    );
    assert_eq!(
        local_group(g, 7).unwrap(),
        "239.1.2.3:5008".parse().unwrap()
    );
    assert!(local_group(g, 65_000).is_err());
}

#[test]
fn a_member_learns_its_designated_receiver_and_local_group() {
    let g: SocketAddr = "239.1.2.3:5000".parse().unwrap();
    let addr = |p: u16| SocketAddr::new("10.0.0.1".parse().unwrap(), p);
    let entries = elect(&[
        (5, Some(1), addr(1)),
        (6, Some(1), addr(2)),
        (7, Some(0), addr(3)),
    ]);
    let raw = dsp_params(&DspOpts::default(), entries).encode().unwrap();
    let a = Announced {
        protocol: Family::Tree as u8,
        window: 64,
        ack_delay_us: 0,
        ack_timeout_us: 0,
        params: &raw,
        running: true,
    };
    let me = |node| Me {
        node,
        session: 9,
        sender: 1,
        group: g,
    };
    let (_, place) = endpoint(a, &me(6)).unwrap().unwrap();
    assert!(!place.designated);
    assert_eq!(place.designated_node, 5);
    assert_eq!(place.peers, [(5, addr(1))]);
    assert_eq!(place.local_group, "239.1.2.3:5002".parse().unwrap());
    let (_, place) = endpoint(a, &me(5)).unwrap().unwrap();
    assert!(place.designated);
    assert_eq!(place.peers, [(6, addr(2))]);
    // Not named: wait for a later announce.
    assert!(super::super::receiver_agent(a, &me(8)).unwrap().is_none());
    let gathering = Announced { params: &[], ..a };
    assert!(super::super::receiver_agent(gathering, &me(5))
        .unwrap()
        .is_none());
}

/// dsp with `--designated relay`: the gathering ANNOUNCE says so (a relay refuses only plain
/// dsp), the sender names a designated relay per region (no address) and makes every receiver
/// a member, a member reaches it through its relay (no peer address), and region 1's relay
/// hosts the designated endpoint with the region's local group; an eviction reaches it.
#[test]
fn dsp_with_designated_relays() {
    use crate::agents::{Joiner, RelayAt, Start};
    let g: SocketAddr = "239.1.2.3:5000".parse().unwrap();
    let mut cfg = crate::sender::SendConfig::new(g);
    assert!(DSP
        .relay_refusal(announce(&DSP.gathering_params(&cfg), false))
        .is_some());
    cfg.dsp.designated_relays = true;
    let raw = DSP.gathering_params(&cfg);
    assert_eq!(
        announced_variant(&announce(&raw, false)),
        Some(Variant::Dsp)
    );
    assert!(DSP.relay_refusal(announce(&raw, false)).is_none());
    let addr = |p: u16| SocketAddr::new("10.0.0.1".parse().unwrap(), p);
    let joined: Vec<Joiner> = vec![
        (5, Some(1), addr(1)),
        (6, Some(1), addr(2)),
        (7, None, addr(3)),
    ];
    let mut s = crate::agents::tests::settings();
    s.dsp.designated_relays = true;
    let start = Start {
        joined: &joined,
        group: g,
        stream: "",
    };
    let mut started = DSP.start(&s, &start).unwrap();
    let raw = started.side.params().unwrap();
    let p = DspParams::decode(&raw).unwrap();
    let designated: Vec<(u16, u32, bool)> = p
        .entries
        .iter()
        .filter(|e| e.role == DspRole::Designated)
        .map(|e| (e.region, e.node, e.addr.ip().is_unspecified()))
        .collect();
    assert_eq!(designated, [(0, 0xEC00_0000, true), (1, 0xEC00_0001, true)]);
    assert!(p
        .entries
        .iter()
        .filter(|e| [5, 6, 7].contains(&e.node))
        .all(|e| e.role == DspRole::Member));
    let a = announce(&raw, true);
    assert_eq!(announced_variant(&a), Some(Variant::Dsp));
    assert!(DSP.relay_refusal(a).is_none());
    // A designated relay gives custody up (a standby may take it over).
    assert!(!DSP.relay_custody(a, Some(1)));
    assert!(!DSP.relay_custody(a, None));
    assert_eq!(started.side.reported_by(6), Some(0xEC00_0001));
    assert_eq!(started.side.role(6), Some("member"));
    let me = Me {
        node: 6,
        session: 9,
        sender: 1,
        group: g,
    };
    let r = DSP.receiver(a, &me).unwrap().unwrap();
    assert!(r.side.peers().is_empty(), "reached through the relay");
    assert_eq!(r.side.join(), Some("239.1.2.3:5002".parse().unwrap()));
    let at = RelayAt {
        session: 9,
        sender: 1,
        node: 77,
        receivers: &[],
        region: Some(1),
        group: g,
    };
    let hosted = DSP.relay(a, &at).unwrap().unwrap();
    assert_eq!(hosted.node, Some(0xEC00_0001));
    assert_eq!(hosted.local_group, Some("239.1.2.3:5002".parse().unwrap()));
    let mut agent = hosted.agent;
    assert!(started.side.evicted(Time::ZERO, &mut *started.agent, 5));
    let raw = started.side.params().unwrap();
    DSP.relay_announced(Time::ZERO, &mut *agent, announce(&raw, true));
    let d = agent
        .as_any_mut()
        .and_then(|x| x.downcast_mut::<tree::HostedDesignated>())
        .unwrap();
    assert!(!d.remove_member(Time::ZERO, NodeId(5)), "already removed");
    assert!(d.remove_member(Time::ZERO, NodeId(6)));
}
