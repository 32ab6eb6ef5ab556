//! Checks of single runs against §4.

use super::*;
use rmcast_sim::topo::LinkClass;

#[test]
fn every_protocol_delivers_everything_on_a_small_lan_star() {
    for p in Proto::ALL {
        let mut s = RunSpec::paper(p, LinkClass::Lan, 5, 7);
        s.packets = 200;
        let o = run_one(&s).unwrap();
        assert!(o.finished, "{p:?}");
        assert!(o.delivery_ok, "{p:?}");
        assert_eq!(o.acked, 200, "{p:?}");
        assert!(o.t > 0.0 && o.t <= 1.0, "{p:?}: T = {}", o.t);
        // Every packet reaches every child at least once: N >= 1.
        assert!(o.n >= 1.0, "{p:?}: N = {}", o.n);
    }
}

#[test]
fn ff_it_has_no_implosion_losses_and_pf_fewer_responses_than_ff() {
    let mut a = RunSpec::paper(Proto::FfIwIt, LinkClass::Lan, 30, 3);
    a.packets = 300;
    let it = run_one(&a).unwrap();
    assert_eq!(it.i, 0.0);
    // FF: one ACK per packet per child (minus losses).
    assert!(it.feedback > 0.9, "{}", it.feedback);
    a.proto = Proto::Pf;
    let pf = run_one(&a).unwrap();
    assert!(
        pf.feedback < 0.3 * it.feedback,
        "{} vs {}",
        pf.feedback,
        it.feedback
    );
}

#[test]
fn tree_and_single_level_deliver_everything_on_a_transit_stub_graph() {
    for multi in [false, true] {
        let s = TreeSpec {
            nc: 40,
            multi,
            packets: 150,
            limit: Duration::from_secs(600),
            seed: 4,
        };
        let o = run_tree(&s).unwrap();
        assert!(o.finished && o.delivery_ok, "multi = {multi}: {o:?}");
        assert_eq!(o.relays > 0, multi);
        assert!(o.t > 0.0 && o.t <= 1.0);
    }
}

#[test]
fn runs_are_deterministic() {
    let mut s = RunSpec::paper(Proto::Pf, LinkClass::Hybrid, 9, 5);
    s.packets = 150;
    let a = run_one(&s).unwrap();
    let b = run_one(&s).unwrap();
    assert_eq!(a.dt_ms, b.dt_ms);
    assert_eq!(a.n, b.n);
    assert_eq!(a.events, b.events);
}

/// The setup text is rendered from the links the runs use: it says FIFO only where the
/// links keep order (`scenarios/repro/prmp/setup.toml` said FIFO while they reordered).
#[test]
fn the_setup_says_how_the_star_orders_packets() {
    let t = star(3, LinkClass::Lan).unwrap();
    let reorder = t.net.link(0).unwrap().2.reorder;
    let s = setup::setup(&Plan::new(crate::Sweeps::Quick), 1).unwrap();
    assert_eq!(s.topology.contains("FIFO"), !reorder, "{}", s.topology);
    assert_eq!(s.topology.contains("overtake"), reorder, "{}", s.topology);
}
