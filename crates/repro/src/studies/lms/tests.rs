use super::sim::{self, LossSpec, Placement, Scheme, DROP_K, SINGLE};
use super::*;
use crate::study::Sweeps;
use plan::{drops_of, placements, shape, sites, spread, LossAt};
use rmcast_sim::topo::TransitStub;

fn tree(h: u32) -> Placement {
    let t = tree_topology(h).unwrap();
    Placement::new(t.net, t.source, t.receivers, h as usize, 0).unwrap()
}

#[test]
fn spread_samples_without_repetition_and_keeps_all_under_the_cap() {
    let v: Vec<u32> = (0..100).collect();
    assert_eq!(spread(&v, 200, 1), v);
    let a = spread(&v, 10, 1);
    assert_eq!(a.len(), 10);
    assert!(a.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(a, spread(&v, 10, 1));
    // Not the evenly spaced pick (which on a binary tree takes only left children).
    assert!(a.iter().any(|x| x % 2 == 1) && a.iter().any(|x| x % 2 == 0));
}

#[test]
fn large_transit_stub_sizes() {
    let count = |t: &TransitStub| t.transit_nodes * (1 + t.stubs_per_transit * t.stub_nodes);
    assert_eq!(count(&large_ts(10_000)), 10_025);
    assert_eq!(count(&large_ts(100_000)), 99_849);
    assert!(large_ts(10_000).p_transit <= 1.0);
}

#[test]
fn binary_tree_placement_rtt_and_sites() {
    let pl = tree(3);
    assert_eq!(pl.receivers.len(), 8);
    // Source link + 2 + 4 + 8 links below the root.
    assert_eq!(pl.tree_links.len(), 15);
    // 4 hops of 10 ms each way, plus per hop a 40-byte request and a 1064-byte repair.
    let tx = (40.0 + 1064.0) * 8.0 / 1.5e6;
    for &r in &pl.rtt {
        assert!((r - (0.080 + 4.0 * tx)).abs() < 1e-9, "{r}");
    }
    assert_eq!(sites(&pl, &LossAt::Source, usize::MAX, 1).len(), 1);
    assert_eq!(sites(&pl, &LossAt::Receivers, usize::MAX, 1).len(), 8);
    assert_eq!(sites(&pl, &LossAt::Links, usize::MAX, 1).len(), 15);
    assert_eq!(
        sites(&pl, &LossAt::Links, 4, 3)[0][0].ks,
        vec![DROP_K, DROP_K + 10, DROP_K + 20]
    );
}

#[test]
fn a_moving_loss_visits_every_tree_link_once_in_one_run_and_every_drop_is_recovered() {
    let pl = tree(3);
    // One run, whatever the cap: one drop per tree link, 10 original packets (1 s) apart.
    let runs = sites(&pl, &LossAt::Moving, 4, 1);
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert_eq!(run.len(), 15);
    let mut links: Vec<usize> = run.iter().map(|s| s.link).collect();
    links.sort_unstable();
    links.dedup();
    assert_eq!(links.len(), 15);
    let ks: Vec<u64> = run.iter().flat_map(|s| s.ks.clone()).collect();
    assert_eq!(ks, (0..15).map(|i| DROP_K + 10 * i).collect::<Vec<_>>());
    assert_eq!(drops_of(run), 15);
    // Adaptive SRM over the whole run: every drop happens and every receiver that detected
    // a loss recovers it.
    let srm = Scheme::Srm {
        adaptive: true,
        topo: false,
    };
    let o = sim::run(&pl, srm, run, shape(drops_of(run)), 7).unwrap();
    assert_eq!(o.drops, 15);
    assert_eq!(o.unrecovered, 0);
    assert!(!o.lat.is_empty());
}

/// The packets `lost_pairs` names are the ones the simulator drops: LMS detects every loss on
/// the tree before its repair arrives, so the recoveries it counts are exactly the pairs (a
/// wrong sequence number for a drop would leave that loss's detections uncounted).
#[test]
fn lost_pairs_name_the_packets_the_simulator_drops() {
    let pl = tree(3);
    let mut run = sites(&pl, &LossAt::Moving, 4, 1).remove(0);
    // Two more rules on a receiver's link, which already has the moving run's: a packet one
    // rule there drops is not seen by the rules after it, nor is one dropped above.
    let (link, from) = pl.receiver_link(pl.receivers[0]).unwrap();
    run.push(LossSpec {
        link,
        from,
        ks: vec![100, 110],
    });
    let shape = shape(drops_of(&run));
    let lost = sim::lost_pairs(&pl, &run, shape.messages);
    // 15 tree links: the source's above all 8 receivers, 2 above 4 each, 4 above 2, 8 above
    // 1; plus two more for receiver 0.
    assert_eq!(lost.len(), 8 + 2 * 4 + 4 * 2 + 8 + 2);
    let o = sim::run(&pl, Scheme::Lms, &run, shape, 1).unwrap();
    assert_eq!(o.drops, 17);
    assert_eq!(o.unrecovered, 0);
    assert_eq!(o.lat.len(), lost.len());
    assert_eq!(o.lossy_receivers, 8);
}

#[test]
fn lms_source_loss_on_a_tree_recovers_in_about_one_rtt_without_exposure() {
    let pl = tree(3);
    let (link, from) = pl.source_link().unwrap();
    let loss = LossSpec {
        link,
        from,
        ks: vec![DROP_K],
    };
    let o = sim::run(&pl, Scheme::Lms, std::slice::from_ref(&loss), SINGLE, 1).unwrap();
    assert_eq!(o.drops, 1);
    assert_eq!(o.lossy_receivers, 8);
    assert_eq!(o.unrecovered, 0);
    assert_eq!(o.lat.len(), 8);
    for &l in &o.lat {
        assert!((0.9..1.1).contains(&l), "{l}");
    }
    assert_eq!(o.dups_unneeded, 0);
    // One replier entry per router of the tree (7 routers).
    assert_eq!(o.router_state, 7);
    let s = sample(&o, 0, 0).unwrap();
    assert_eq!(s.exposure, 0.0);
}

#[test]
fn pgm_receiver_loss_costs_one_rdata_and_state_on_the_nak_path() {
    let pl = tree(3);
    let r = pl.receivers[3];
    let (link, from) = pl.receiver_link(r).unwrap();
    let loss = LossSpec {
        link,
        from,
        ks: vec![DROP_K],
    };
    let base = sim::run(&pl, Scheme::Pgm, &[], SINGLE, 1).unwrap();
    assert_eq!(base.drops, 0);
    let o = sim::run(&pl, Scheme::Pgm, std::slice::from_ref(&loss), SINGLE, 1).unwrap();
    assert_eq!((o.drops, o.lossy_receivers, o.unrecovered), (1, 1, 0));
    assert_eq!(o.source_repairs, 1);
    assert_eq!(o.dups, 0);
    // The NAK crossed the 3 routers between the receiver and the source.
    assert_eq!(o.router_state, 3);
    // Latency: a NAK up and an RDATA down the same path, about one RTT.
    assert!((0.9..1.1).contains(&o.lat[0]), "{}", o.lat[0]);
    // Packets on the wire: NAK and NCF hops plus 4 RDATA hops, all above the baseline.
    let s = sample(&o, 0, base.hops_control).unwrap();
    assert!(s.wire >= 8.0, "{}", s.wire);
}

#[test]
fn lms_source_loss_on_a_random_graph_costs_one_repair() {
    // Every receiver misses the packet; the one request that climbs replier links all the
    // way reaches the source, whose multicast repairs everyone. The DREQs turned elsewhere
    // reach repliers that lacked the packet or got it from that repair: none answers
    // (before the ns-2 rule for first requests, 19 of these 20 receivers answered one).
    let plan = Plan::new(Sweeps::Quick);
    let pls = placements(&plan, Family::Random(20)).unwrap();
    let pl = &pls[0];
    let (link, from) = pl.source_link().unwrap();
    let loss = LossSpec {
        link,
        from,
        ks: vec![DROP_K],
    };
    let o = sim::run(pl, Scheme::Lms, std::slice::from_ref(&loss), SINGLE, 1).unwrap();
    assert_eq!((o.drops, o.lossy_receivers, o.unrecovered), (1, 20, 0));
    assert_eq!(o.repairs, 1);
    assert_eq!(o.source_repairs, 1);
    assert_eq!(o.dups, 0);
}

/// The §5.6 scenario files under `scenarios/repro/lms/`: each parses as a simulator scenario,
/// its first run completes with every receiver holding all data, and its parameters are the
/// ones the study runs.
#[test]
fn scenario_files_run_and_match_the_study() {
    use rmcast_sim::scenario::{run_indices, Metric, RunOptions, Scenario};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/repro/lms");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        // Not scenarios: the claims, the plots and the setup declared as data.
        .filter(|p| {
            p.file_name().is_some_and(|n| {
                !["claims.toml", "plots.toml", "setup.toml"].contains(&n.to_str().unwrap_or(""))
            })
        })
        .collect();
    files.sort();
    let names: Vec<String> = files
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["binary-trees.toml", "random.toml", "transit-stub.toml"]
    );
    let ints = |sc: &Scenario, key: &str| -> Vec<i64> {
        match sc.axes.iter().find(|a| a.key == key) {
            Some(a) => a.values.iter().map(|v| v.as_integer().unwrap()).collect(),
            None => {
                let (t, k) = key.split_once('.').unwrap();
                vec![sc.doc[t][k].as_integer().unwrap()]
            }
        }
    };
    let num = |sc: &Scenario, t: &str, k: &str| -> f64 {
        let v = &sc.doc[t][k];
        v.as_float()
            .or_else(|| v.as_integer().map(|i| i as f64))
            .unwrap()
    };
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    for path in &files {
        let sc = Scenario::load(path).unwrap();
        // Common: traffic, the single loss, the run length, the link rate.
        assert_eq!(ints(&sc, "traffic.messages"), [SINGLE.messages as i64]);
        assert_eq!(ints(&sc, "traffic.size"), [sim::SIZE as i64]);
        assert_eq!(num(&sc, "traffic", "interval_ms"), ms(sim::INTERVAL));
        assert_eq!(sc.doc["loss"][0]["k"].as_integer(), Some(DROP_K as i64));
        assert_eq!(sc.doc["loss"][0]["filter"].as_str(), Some("original"));
        assert_eq!(
            num(&sc, "stop", "time_limit_s"),
            SINGLE.stop.as_nanos() as f64 / 1e9
        );
        assert_eq!(ints(&sc, "topology.bandwidth_bps"), [sim::BANDWIDTH as i64]);
        // The first run: the loss happens and every receiver ends with all 40 messages.
        let r = run_indices(&sc, &[0], RunOptions::default(), &|| {}).unwrap();
        let col = |k: &str| {
            r[0].columns
                .iter()
                .find(|(c, _)| c == k)
                .map(|(_, v)| v.clone())
        };
        assert_eq!(
            col("delivered_min"),
            Some(Metric::U(SINGLE.messages)),
            "{path:?}"
        );
        assert!(
            matches!(col("lost_single_loss"), Some(Metric::U(n)) if n >= 1),
            "{path:?}"
        );
    }
    let load = |n: &str| Scenario::load(&dir.join(n)).unwrap();
    let bt = load("binary-trees.toml");
    let plan = Plan::new(Sweeps::Full);
    // Routes: by hop count, as the study's default (`hop_routes` = 1).
    assert!(plan.hop_routes);
    for name in ["binary-trees.toml", "random.toml", "transit-stub.toml"] {
        assert_eq!(
            load(name).doc["topology"]["routing"].as_str(),
            Some("hops"),
            "{name}"
        );
    }
    let heights: Vec<i64> = plan.heights.iter().map(|&h| h as i64).collect();
    assert_eq!(ints(&bt, "topology.height"), heights);
    assert_eq!(num(&bt, "topology", "delay_ms"), ms(TREE_DELAY));
    assert_eq!(bt.doc["topology"]["source_link"].as_bool(), Some(true));
    let seeds: Vec<i64> = (0..TOPOLOGIES as u64)
        .map(|t| (TOPO_SEED_BASE + t) as i64)
        .collect();
    for name in ["random.toml", "transit-stub.toml"] {
        let sc = load(name);
        assert_eq!(ints(&sc, "topology.seed"), seeds, "{name}");
        assert_eq!(
            num(&sc, "topology", "delay_per_unit_ms"),
            ms(DELAY_PER_UNIT)
        );
        assert_eq!(num(&sc, "topology", "host_delay_ms"), ms(HOST_DELAY));
        assert_eq!(
            ints(&sc, "topology.host_bandwidth_bps"),
            [sim::BANDWIDTH as i64]
        );
        assert_eq!(
            sc.doc["topology"]["placement"].as_str(),
            Some("with_replacement")
        );
    }
    let rand = load("random.toml");
    assert_eq!(ints(&rand, "topology.n"), [RANDOM_NODES as i64]);
    assert_eq!(num(&rand, "topology", "p"), RANDOM_P);
    let receivers: Vec<i64> = RANDOM_RECEIVERS.iter().map(|&r| r as i64).collect();
    assert_eq!(ints(&rand, "topology.receivers"), receivers);
    // Every random-graph family of the seed's experiments uses one of those counts.
    for e in plan.exps() {
        for f in &e.families {
            if let Family::Random(r) = f {
                assert!(RANDOM_RECEIVERS.contains(r), "{}: {r}", e.key);
            }
        }
    }
    let ts = load("transit-stub.toml");
    let d = TransitStub::default();
    for (k, v) in [
        ("transit_domains", d.transit_domains),
        ("transit_nodes", d.transit_nodes),
        ("stubs_per_transit", d.stubs_per_transit),
        ("stub_nodes", d.stub_nodes),
        ("receivers", 100),
    ] {
        assert_eq!(ints(&ts, &format!("topology.{k}")), [v as i64], "{k}");
    }
    assert_eq!(num(&ts, "topology", "p_transit"), d.p_transit);
    assert_eq!(num(&ts, "topology", "p_stub"), d.p_stub);
}

#[test]
fn lms_runs_on_a_tree_are_a_function_of_the_loss_site_alone() {
    // What makes a binary tree's loss sites a finite population (`enumerable`): the same site
    // gives the same run whatever the seed, so a mean over every site has no sampling error.
    let pl = tree(4);
    for spec in sites(&pl, &LossAt::Links, 6, 1) {
        let a = sim::run(&pl, Scheme::Lms, &spec, SINGLE, 1).unwrap();
        let b = sim::run(&pl, Scheme::Lms, &spec, SINGLE, 0xdead_beef).unwrap();
        assert_eq!(
            (
                a.drops,
                a.dups,
                a.requests,
                a.repairs,
                a.hops_repair,
                a.router_state
            ),
            (
                b.drops,
                b.dups,
                b.requests,
                b.repairs,
                b.hops_repair,
                b.router_state
            )
        );
        assert_eq!(a.lat, b.lat);
        assert_eq!(a.drops, 1);
    }
}

#[test]
fn hop_routes_follow_fewest_hops_and_the_delay_variant_keeps_the_placement() {
    // The study's random graphs on fewest-hop routes (`hop_routes`, the default) and their
    // least-delay variant: the same source, receivers and seeds; every receiver's route has
    // the fewest hops under the first, the least delay under the second, and with ties on a
    // 100-node graph of edge probability 0.1 some routes differ.
    let plan = Plan::new(Sweeps::Quick);
    let hop = placements(&plan, Family::Random(20)).unwrap();
    let delay = placements(&plan, Family::RandomDelay(20)).unwrap();
    assert_eq!(hop.len(), delay.len());
    let mut differ = 0;
    for (a, b) in hop.iter().zip(&delay) {
        assert_eq!(
            (a.source, &a.receivers, a.seed),
            (b.source, &b.receivers, b.seed)
        );
        assert_eq!(a.net.routing(), rmcast_sim::RoutingMetric::Hops);
        assert_eq!(b.net.routing(), rmcast_sim::RoutingMetric::Delay);
        for &r in &a.receivers {
            let (ra, rb) = (plan::route_links(a, r), plan::route_links(b, r));
            assert!(ra.len() <= rb.len(), "fewer hops on hop routes");
            // Least delay on delay routes: never a longer propagation delay than the hop
            // route's (the RTT also counts per-hop transmission times).
            let d = |p: &Placement| p.tree[r.0 as usize].map(|t| t.dist_ns).unwrap();
            assert!(d(b) <= d(a));
            differ += usize::from(ra != rb);
        }
        assert!(plan::fewest_hop_ties(a) <= a.receivers.len());
    }
    assert!(differ > 0);
    let ties: usize = hop.iter().map(plan::fewest_hop_ties).sum();
    assert!(ties > 0);
}

#[test]
fn pooled_latency_weighs_every_recovery_and_its_units_are_placements() {
    let s = |pl: usize, lat: &[f64]| Sample {
        pl,
        lat_sum: lat.iter().sum(),
        lat_n: lat.len(),
        lat_min: None,
        lat_max: None,
        exposure: 0.0,
        dup_all: 0.0,
        requests: 0.0,
        repairs: 0.0,
        retx: 0.0,
        wire: 0.0,
        state: 0.0,
        unrecovered: 0.0,
    };
    // One run with three recoveries at 1.0, one with a single recovery at 0.2: the pooled
    // mean is 3.2 / 4 = 0.8 (the mean of per-run means would be 0.6).
    let (a, b) = (s(0, &[1.0, 1.0, 1.0]), s(0, &[0.2]));
    let e = pooled_latency(&[&a, &b], false).unwrap();
    assert!((e.mean - 0.8).abs() < 1e-12);
    assert_eq!(e.n, 2);
    // Units: two placements of two runs each; the interval is over the 2 placements.
    let (c, d) = (s(1, &[0.5]), s(1, &[0.5, 0.5]));
    let e = pooled_latency(&[&a, &b, &c, &d], true).unwrap();
    assert_eq!(e.n, 2);
    assert!((e.mean - (3.2 + 1.5) / 7.0).abs() < 1e-12);
    // R = 4.7 / 7; units (y, m) = (3.2, 4), (1.5, 3); m̄ = 3.5.
    let r = 4.7 / 7.0;
    let sd = (((3.2 - r * 4.0_f64).powi(2) + (1.5 - r * 3.0_f64).powi(2)) / 1.0).sqrt() / 3.5;
    assert!((e.sd - sd).abs() < 1e-12);
    let half = crate::stats::t975(1) * sd / 2f64.sqrt();
    assert!((e.ci_hi - e.mean - half).abs() < 1e-12);
    // summarize takes runs as units when every sample comes from one placement.
    let m = summarize(&[&a, &b], true);
    assert_eq!(m["lat_mean"].n, 2);
    // No recovery: no latency.
    assert!(pooled_latency(&[&s(0, &[])], true).is_none());
}
