//! Seed 003 schemes (srm, pgm, lms) on small simulated networks with router agents: a single
//! loss of an original data packet is repaired for every receiver that missed it, with
//! exactly-once in-order delivery; PGM network elements forward RDATA only where it was asked
//! for; an LMS subcast reaches exactly the subtree below the turning point; SRM suppression
//! keeps requests at one on a chain.

use core::time::Duration;
use rmcast_proto::rng::AgentRng;
use rmcast_proto::{lms, pgm, srm, Agent, Event, GroupId, IfaceId, NodeId, RouterAgent, Time};
use rmcast_sim::{
    KindFilter, LinkConfig, LossModel, LossRule, LossSite, Network, Sim, Stop, Traffic,
};
use std::collections::BTreeMap;

const G: GroupId = GroupId(1);
const N: u64 = 30;
const DELAY: Duration = Duration::from_millis(10);

/// A binary tree of routers `height` levels deep, two receiver hosts under each lowest
/// router, the source host attached to the root.
struct Tree {
    net: Network,
    source: NodeId,
    routers: Vec<NodeId>,
    receivers: Vec<NodeId>,
    parent: BTreeMap<NodeId, NodeId>,
    /// Link index by (upper, lower) node.
    link: BTreeMap<(NodeId, NodeId), usize>,
}

impl Tree {
    fn binary(height: u32) -> Tree {
        let mut net = Network::new();
        let cfg = LinkConfig::new(1_500_000, DELAY);
        let root = net.add_router();
        let source = net.add_host();
        let mut link = BTreeMap::new();
        link.insert(
            (source, root),
            net.add_link(source, root, cfg.clone()).unwrap(),
        );
        let mut parent = BTreeMap::new();
        let mut routers = vec![root];
        let mut receivers = Vec::new();
        let mut level = vec![root];
        for depth in 0..height {
            let mut next = Vec::new();
            for &r in &level {
                for _ in 0..2 {
                    let c = if depth + 1 == height {
                        let h = net.add_host();
                        receivers.push(h);
                        h
                    } else {
                        let x = net.add_router();
                        routers.push(x);
                        next.push(x);
                        x
                    };
                    link.insert((r, c), net.add_link(r, c, cfg.clone()).unwrap());
                    parent.insert(c, r);
                }
            }
            level = next;
        }
        Tree {
            net,
            source,
            routers,
            receivers,
            parent,
            link,
        }
    }

    fn children(&self, r: NodeId) -> Vec<(IfaceId, NodeId)> {
        self.net
            .neighbors(r)
            .into_iter()
            .filter(|&(_, n)| self.parent.get(&n) == Some(&r))
            .collect()
    }

    /// Distance from `n` down to its closest receiver.
    fn down_distance(&self, n: NodeId) -> Duration {
        if self.receivers.contains(&n) {
            return Duration::ZERO;
        }
        self.children(n)
            .into_iter()
            .map(|(_, c)| DELAY + self.down_distance(c))
            .min()
            .unwrap_or(Duration::MAX)
    }

    fn replier(&self, r: NodeId) -> Option<IfaceId> {
        let cands: Vec<(IfaceId, Duration)> = self
            .children(r)
            .into_iter()
            .map(|(i, c)| (i, DELAY + self.down_distance(c)))
            .collect();
        lms::choose_replier(&cands)
    }

    /// The subtree's receivers below `n`.
    fn receivers_below(&self, n: NodeId) -> Vec<NodeId> {
        if self.receivers.contains(&n) {
            return vec![n];
        }
        self.children(n)
            .into_iter()
            .flat_map(|(_, c)| self.receivers_below(c))
            .collect()
    }

    fn sim(&self, seed: u64) -> Sim {
        let mut sim = Sim::new(self.net.clone(), seed);
        let mut members = vec![self.source];
        members.extend(&self.receivers);
        sim.set_group(G, &members).unwrap();
        sim
    }
}

/// Drop the 5th original data packet crossing `link` in the direction leaving `from`.
fn single_loss(sim: &mut Sim, link: usize, from: NodeId) {
    sim.add_loss(
        &LossRule::new(
            LossSite::Link {
                link,
                from: Some(from),
            },
            LossModel::DropNth { k: 5 },
        )
        .filter(KindFilter::OriginalData)
        .cause("single_loss"),
    )
    .unwrap();
}

/// One drop on `link` leaving `from`, the transfer run, and every receiver of `t` complete:
/// how many detected the loss.
fn recover(sim: &mut Sim, t: &Tree, link: usize, from: NodeId) -> usize {
    single_loss(sim, link, from);
    run(sim, t.source);
    assert_complete(sim, &t.receivers)
}

/// A binary tree of height 3 with a scheme's agents (`deploy` with `seed`), one drop on the
/// source's link recovered by every receiver.
fn source_loss(deploy: fn(&Tree, u64) -> Sim, seed: u64) -> (Tree, Sim) {
    let t = Tree::binary(3);
    let mut sim = deploy(&t, seed);
    let link = t.link[&(t.source, t.routers[0])];
    assert_eq!(recover(&mut sim, &t, link, t.source), t.receivers.len());
    (t, sim)
}

/// No receiver got a repair of a packet it already had.
fn assert_no_duplicates(sim: &Sim, receivers: &[NodeId]) {
    for &r in receivers {
        assert_eq!(sim.agent(r).unwrap().stats().duplicates, 0, "{r:?}");
    }
}

fn run(sim: &mut Sim, source: NodeId) {
    sim.add_traffic(source, Traffic::every(N, 1024, Duration::from_millis(100)))
        .unwrap();
    sim.run(&Stop::at(Time::from_secs(N / 10 + 20)));
}

/// Every receiver delivered 0..N exactly once, in order, with the stamped contents; returns
/// how many detected a loss.
fn assert_complete(sim: &Sim, receivers: &[NodeId]) -> usize {
    let mut lossy = 0;
    for &r in receivers {
        let mut seqs = Vec::new();
        for (_, e) in sim.events(r) {
            match e {
                Event::Delivered { seq, data } => {
                    assert_eq!(&data[..8], seq.to_be_bytes(), "receiver {r:?}");
                    seqs.push(*seq);
                }
                Event::LossDetected { .. } => lossy += 1,
                _ => {}
            }
        }
        assert_eq!(seqs, (0..N).collect::<Vec<_>>(), "receiver {r:?}");
    }
    lossy
}

/// The agents on a tree: `source` at the source, `receiver(sim, r)` at every receiver and
/// `router(x)` at every router.
fn deploy(
    t: &Tree,
    seed: u64,
    source: Box<dyn Agent>,
    receiver: impl Fn(&mut Sim, NodeId) -> Box<dyn Agent>,
    router: impl Fn(NodeId) -> Box<dyn RouterAgent>,
) -> Sim {
    let mut sim = t.sim(seed);
    sim.add_agent(t.source, source).unwrap();
    for &r in &t.receivers {
        let agent = receiver(&mut sim, r);
        sim.add_agent(r, agent).unwrap();
    }
    for &x in &t.routers {
        sim.add_router_agent(x, router(x)).unwrap();
    }
    sim
}

fn pgm_tree(t: &Tree, seed: u64) -> Sim {
    deploy(
        t,
        seed,
        Box::new(pgm::Source::new(pgm::SourceConfig::new(t.source, G))),
        |sim, r| {
            let rng = sim.agent_rng(r, 0);
            Box::new(pgm::Receiver::new(
                pgm::ReceiverConfig::new(r, t.source),
                rng,
            ))
        },
        |x| Box::new(pgm::NetworkElement::new(pgm::NeConfig::new(x, G))),
    )
}

#[test]
fn pgm_single_loss_at_the_source_is_repaired_everywhere() {
    let (t, sim) = source_loss(pgm_tree, 1);
    let rdata = sim.agent(t.source).unwrap().stats().repairs_sent;
    assert!(rdata >= 1);
    println!("pgm, binary tree height 3, loss at the source: {rdata} RDATA for 1 drop");
}

#[test]
fn pgm_rdata_goes_only_down_interfaces_that_asked() {
    let t = Tree::binary(3);
    let victim = t.receivers[5];
    let mut sim = pgm_tree(&t, 2);
    let up = t.parent[&victim];
    assert_eq!(recover(&mut sim, &t, t.link[&(up, victim)], up), 1);
    assert_eq!(sim.agent(t.source).unwrap().stats().repairs_sent, 1);
    // An RDATA reaching a receiver that had the packet would be a duplicate.
    assert_no_duplicates(&sim, &t.receivers);
}

fn lms_tree(t: &Tree, seed: u64) -> Sim {
    deploy(
        t,
        seed,
        Box::new(lms::Source::new(lms::SourceConfig::new(t.source, G))),
        |_, r| Box::new(lms::Receiver::new(lms::ReceiverConfig::new(r, t.source))),
        |x| Box::new(lms::Router::new(lms::RouterConfig::new(x, G, t.replier(x)))),
    )
}

#[test]
fn lms_single_loss_at_the_source_is_repaired_everywhere() {
    let (t, sim) = source_loss(lms_tree, 3);
    // Only the top replier's request reaches the source; one multicast repair, no exposure.
    assert_eq!(sim.agent(t.source).unwrap().stats().repairs_sent, 1);
    assert_no_duplicates(&sim, &t.receivers);
}

#[test]
fn lms_subcast_reaches_exactly_the_subtree_below_the_turning_point() {
    let t = Tree::binary(3);
    // The root's replier child P1; P1's non-replier child L2; L2's replier receiver b1.
    let root = t.routers[0];
    let child = |r: NodeId, iface: Option<IfaceId>| {
        t.children(r)
            .into_iter()
            .find(|&(i, _)| Some(i) == iface)
            .map(|(_, c)| c)
            .unwrap()
    };
    let p1 = child(root, t.replier(root));
    let l2 = t
        .children(p1)
        .into_iter()
        .find(|&(i, _)| Some(i) != t.replier(p1))
        .map(|(_, c)| c)
        .unwrap();
    let b1 = child(l2, t.replier(l2));
    let mut sim = lms_tree(&t, 4);
    assert_eq!(recover(&mut sim, &t, t.link[&(l2, b1)], l2), 1);
    // P1 is the turning point: it (and no other router) subcast one repair.
    for &x in &t.routers {
        let subcasts = sim.router_agent(x).unwrap().stats().repairs_sent;
        assert_eq!(subcasts, u64::from(x == p1), "router {x:?}");
    }
    assert_eq!(sim.agent(t.source).unwrap().stats().repairs_sent, 0);
    // The subcast went down the interface the request came in on: L2's subtree.
    let subtree = t.receivers_below(l2);
    for &r in &t.receivers {
        let dup = sim.agent(r).unwrap().stats().duplicates;
        let expect = u64::from(subtree.contains(&r) && r != b1);
        assert_eq!(dup, expect, "receiver {r:?}");
    }
}

#[test]
fn lms_single_loss_on_every_link_is_repaired() {
    let t = Tree::binary(3);
    for (&(up, down), &link) in &t.link {
        let mut sim = lms_tree(&t, 5);
        let lossy = recover(&mut sim, &t, link, up);
        // Exactly the receivers below the lossy link detected the loss, and all recovered.
        assert_eq!(lossy, t.receivers_below(down).len());
    }
}

#[test]
fn srm_suppression_keeps_requests_at_one_on_a_chain() {
    // source host – R0 – R1 – … – R4, one receiver host on each router.
    let mut net = Network::new();
    // Fast links, so one-way distance is propagation delay (the configured distances).
    let host_link = LinkConfig::new(1_000_000_000, Duration::from_millis(1));
    let chain_link = LinkConfig::new(1_000_000_000, DELAY);
    let routers: Vec<NodeId> = (0..5).map(|_| net.add_router()).collect();
    let source = net.add_host();
    let src_link = net.add_link(source, routers[0], host_link.clone()).unwrap();
    for w in routers.windows(2) {
        net.add_link(w[0], w[1], chain_link.clone()).unwrap();
    }
    let hosts: Vec<NodeId> = routers
        .iter()
        .map(|&r| {
            let h = net.add_host();
            net.add_link(r, h, host_link.clone()).unwrap();
            h
        })
        .collect();
    // One-way distances from the topology: hosts hang 1 ms off their router.
    let pos = |n: NodeId| -> u32 {
        if n == source {
            0
        } else {
            hosts.iter().position(|&h| h == n).unwrap() as u32
        }
    };
    let dist = |a: NodeId, b: NodeId| Duration::from_millis(2) + DELAY * pos(a).abs_diff(pos(b));
    let mut all = vec![source];
    all.extend(&hosts);
    // ns-2's Agent/SRM/Deterministic (C2 = D2 = 0): suppression on a chain is exact. The
    // randomized defaults (C2 = 2, D2 = 1) are run and reported too.
    for (c2, d2, max_requests) in [(0.0, 0.0, 1), (2.0, 1.0, u64::MAX)] {
        let mut sim = Sim::new(net.clone(), 7);
        sim.set_group(G, &all).unwrap();
        for &m in &all {
            let mut c = srm::Config::new(m, G, source, all.len());
            c.c2 = c2;
            c.d2 = d2;
            c.session_interval = None;
            c.distances =
                srm::DistanceSource::Configured(all.iter().map(|&o| (o, dist(m, o))).collect());
            sim.add_agent(m, Box::new(srm::Member::new(c, AgentRng::derive(7, m, 0))))
                .unwrap();
        }
        single_loss(&mut sim, src_link, source);
        run(&mut sim, source);
        assert_eq!(assert_complete(&sim, &hosts), hosts.len());
        let requests: u64 = all
            .iter()
            .map(|&m| sim.agent(m).unwrap().stats().control_sent)
            .sum();
        let repairs: u64 = all
            .iter()
            .map(|&m| sim.agent(m).unwrap().stats().repairs_sent)
            .sum();
        println!("srm chain C2={c2} D2={d2}: {requests} requests, {repairs} repairs for 1 drop");
        assert!(requests >= 1 && requests <= max_requests);
        assert_eq!(repairs, 1, "only the source holds the packet");
    }
}

/// The registry builds all three from a scenario file (binary tree of height 3, the 5th
/// original packet lost as the source sends it, so only the source holds it), and every
/// receiver gets every message.
#[test]
fn scenarios_build_srm_pgm_lms_from_the_registry() {
    for proto in [
        "name = \"srm\"\ndistances = \"topology\"\nsession_interval_ms = 200",
        "name = \"srm\"\nadaptive = true\nsession_interval_ms = 200",
        "name = \"pgm\"",
        "name = \"lms\"",
    ] {
        let text = format!(
            "name = \"t\"\nseed = 1\n[topology]\nkind = \"binary_tree\"\nheight = 3\n\
             bandwidth_bps = 1500000\ndelay_ms = 10\n[protocol]\n{proto}\n[traffic]\n\
             messages = 20\nsize = 512\ninterval_ms = 100\n[stop]\ntime_limit_s = 30\n[[loss]]\n\
             model = \"drop_nth\"\nk = 5\nat = \"tx\"\nnodes = \"source\"\nfilter = \"original\"\n"
        );
        let sc =
            rmcast_sim::scenario::Scenario::parse(&text, "t.toml", std::path::PathBuf::from("."))
                .unwrap_or_else(|e| panic!("{proto}: {e}"));
        let res = rmcast_sim::scenario::run_sweep(&sc, Default::default(), &|| {}).unwrap();
        let cols: Vec<String> = res[0]
            .columns
            .iter()
            .map(|(c, v)| format!("{c}={v:?}"))
            .collect();
        println!("{proto}: {}", cols.join(" "));
        let col = |name: &str| format!("{:?}", res[0].column(name).unwrap());
        assert_eq!(col("delivered_total"), "U(160)", "{proto}");
        assert_eq!(col("delivered_min"), "U(20)", "{proto}");
        assert_eq!(col("lost_drop_nth"), "U(1)", "{proto}");
    }
}

/// Seed 003 §5.10: an RDATA answering a near receiver's NAK wipes the repair state before a
/// distant receiver's NAK arrives, which recreates it up to the source and triggers another
/// retransmission; a source repair delay longer than the NAKs' spread removes the repeat.
#[test]
fn pgm_repeated_retransmissions_and_the_source_delay_heuristic() {
    let mut net = Network::new();
    let short = LinkConfig::new(1_500_000, Duration::from_millis(1));
    let long = LinkConfig::new(1_500_000, Duration::from_millis(200));
    let r0 = net.add_router();
    let r1 = net.add_router();
    let source = net.add_host();
    let near = net.add_host();
    let far = net.add_host();
    let src_link = net.add_link(source, r0, short.clone()).unwrap();
    net.add_link(r0, near, short.clone()).unwrap();
    net.add_link(r0, r1, long).unwrap();
    net.add_link(r1, far, short).unwrap();
    for (delay_ms, expect) in [(0, 2), (600, 1)] {
        let mut sim = Sim::new(net.clone(), 3);
        sim.set_group(G, &[source, near, far]).unwrap();
        let mut sc = pgm::SourceConfig::new(source, G);
        sc.repair_delay = Duration::from_millis(delay_ms);
        sim.add_agent(source, Box::new(pgm::Source::new(sc)))
            .unwrap();
        for r in [near, far] {
            let rng = sim.agent_rng(r, 0);
            sim.add_agent(
                r,
                Box::new(pgm::Receiver::new(pgm::ReceiverConfig::new(r, source), rng)),
            )
            .unwrap();
        }
        for x in [r0, r1] {
            sim.add_router_agent(
                x,
                Box::new(pgm::NetworkElement::new(pgm::NeConfig::new(x, G))),
            )
            .unwrap();
        }
        single_loss(&mut sim, src_link, source);
        run(&mut sim, source);
        assert_eq!(assert_complete(&sim, &[near, far]), 2);
        let rdata = sim.agent(source).unwrap().stats().repairs_sent;
        assert_eq!(rdata, expect, "repair delay {delay_ms} ms");
        for r in [near, far] {
            assert_eq!(sim.agent(r).unwrap().stats().duplicates, 0);
        }
    }
}

fn srm_tree(t: &Tree, seed: u64) -> Sim {
    let mut sim = t.sim(seed);
    let mut all = vec![t.source];
    all.extend(&t.receivers);
    for &m in &all {
        let mut c = srm::Config::new(m, G, t.source, all.len());
        c.session_interval = Some(Duration::from_millis(200));
        let rng = sim.agent_rng(m, 0);
        sim.add_agent(m, Box::new(srm::Member::new(c, rng)))
            .unwrap();
    }
    sim
}

/// Every scheme, a single loss on every link of a binary tree of height 3 (the source's link
/// included): exactly the receivers below the link detect it, and every one of them recovers
/// (exactly-once, in-order delivery everywhere).
#[test]
fn pgm_and_srm_repair_a_single_loss_on_every_link() {
    let t = Tree::binary(3);
    for (&(up, down), &link) in &t.link {
        for scheme in ["pgm", "srm"] {
            let mut sim = match scheme {
                "pgm" => pgm_tree(&t, 6),
                _ => srm_tree(&t, 6),
            };
            let lossy = recover(&mut sim, &t, link, up);
            let below = t.receivers_below(down).len();
            assert_eq!(lossy, below, "{scheme}, link {up:?}-{down:?}");
            if scheme == "pgm" {
                // PGM never exposes: no receiver gets an RDATA it did not ask for.
                assert_no_duplicates(&sim, &t.receivers);
            }
        }
    }
}

/// With tracing on, the recorder keeps one recovery per receiver that missed the packet: the
/// packet's sequence number (the 5th original, seq 4), the time of the `LossDetected` event
/// and of the `Delivered` event that made it good — the events themselves, read back.
#[test]
fn recoveries_are_the_detection_and_delivery_events_of_each_receiver() {
    let t = Tree::binary(3);
    let mut sim = srm_tree(&t, 6);
    assert!(sim.recoveries().is_empty(), "nothing kept without a trace");
    sim.enable_trace();
    let link = t.link[&(t.source, t.routers[0])];
    assert_eq!(recover(&mut sim, &t, link, t.source), t.receivers.len());
    let recs = sim.recoveries();
    assert_eq!(recs.len(), t.receivers.len());
    for r in recs {
        assert_eq!(r.seq, 4, "{r:?}");
        let event_time = |want: &dyn Fn(&Event) -> bool| {
            sim.events(r.node)
                .iter()
                .find(|(_, e)| want(e))
                .map(|(at, _)| *at)
        };
        let detected = event_time(&|e| matches!(e, Event::LossDetected { seq: 4 }));
        let delivered = event_time(&|e| matches!(e, Event::Delivered { seq: 4, .. }));
        assert_eq!(Some(r.detected), detected, "{r:?}");
        assert_eq!(r.delivered, delivered, "{r:?}");
        assert!(r.delivered.is_some_and(|d| d > r.detected), "{r:?}");
    }
}

/// Router state through the `RouterAgent` trait: a PGM network element reports the repair
/// state a lost packet created (and cleared), an LMS router its one replier link.
#[test]
fn router_state_is_readable_through_the_trait() {
    let t = Tree::binary(3);
    let mut sim = pgm_tree(&t, 8);
    single_loss(&mut sim, t.link[&(t.source, t.routers[0])], t.source);
    run(&mut sim, t.source);
    for &x in &t.routers {
        let ne = sim.router_agent(x).unwrap();
        assert_eq!(ne.peak_state_entries(), 1, "router {x:?}");
        assert_eq!(ne.state_entries(), 0, "router {x:?}: RDATA cleared it");
    }
    let sim = lms_tree(&t, 8);
    for &x in &t.routers {
        assert_eq!(sim.router_agent(x).unwrap().state_entries(), 1);
    }
}

/// `replier = "adaptive"` from a scenario file: on a height-3 tree under the source, the
/// leftmost leaf is every router's static replier; when its own link keeps losing packets,
/// static repliers send its requests to the source, whose repair reaches all 8 receivers,
/// while adaptive routers move their replier link off it and the repairs stay on its link.
#[test]
fn adaptive_lms_repliers_from_a_scenario_cut_duplicates_of_a_lossy_replier() {
    use rmcast_sim::scenario::{run_indices, Metric, RunOptions, Scenario};
    let text = |replier: &str| {
        format!(
            r#"
seed = 3
[topology]
kind = "binary_tree"
height = 3
source_link = true
[protocol]
name = "lms"
replier = "{replier}"
[traffic]
messages = 60
size = 1024
interval_ms = 100
[[loss]]
model = "every_nth"
n = 10
filter = "original"
at = "link"
links = [7]
from = 4
[stop]
time_limit_s = 9
when_complete = false
"#
        )
    };
    let run = |replier: &str| {
        let sc = Scenario::parse(&text(replier), "t.toml", ".".into()).unwrap();
        let r = run_indices(&sc, &[0], RunOptions::default(), &|| {}).unwrap();
        let col = |k: &str| match r[0].column(k) {
            Some(Metric::U(v)) => *v,
            other => panic!("{k}: {other:?}"),
        };
        assert_eq!(col("delivered_min"), 60, "{replier}");
        assert!(col("lost_total") >= 5, "{replier}");
        col("receiver_duplicates")
    };
    let (fixed, adaptive) = (run("static"), run("adaptive"));
    // Static: every loss is repaired by the source's multicast, 7 duplicates each.
    assert!(fixed >= 5 * 7, "{fixed}");
    // Adaptive: only the first loss (before any refresh) reaches the others.
    assert!(adaptive <= 7, "{adaptive} vs {fixed}");
    let bad = Scenario::parse(&text("sometimes"), "t.toml", ".".into()).unwrap_err();
    assert!(bad.to_string().contains("protocol.replier"), "{bad}");
}
