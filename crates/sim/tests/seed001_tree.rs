//! Seed 001 (DSP, CSP, CP) end to end on the simulator's local-exchange topology: exactly-once
//! in-order delivery under loss for each protocol, a loss inside one DSP region repaired
//! locally without a global re-multicast, the source never above L outstanding blocks, and
//! the registry building all three from a scenario file.

use core::time::Duration;
use rmcast_proto::tree::{deploy, Endpoint, Exchange, Region, Settings, Source, Variant};
use rmcast_proto::{Bytes, Event, Gauge, GroupId, NodeId, Time};
use rmcast_sim::{topo, KindFilter, LossModel, LossRule, LossSite, Sim, Stop, Traffic};

const G: GroupId = GroupId(1);

struct Run {
    sim: Sim,
    source: NodeId,
    regions: Vec<Region>,
    endpoints: Vec<NodeId>,
    l: u32,
}

/// Three exchanges at RTDs 10, 20, 30 ms with 3 endpoints each, 20 Mb/s links; window
/// 2 × the largest RTD in blocks.
fn build(variant: Variant, seed: u64) -> Run {
    let rtds: Vec<Duration> = [10, 20, 30]
        .iter()
        .map(|&m| Duration::from_millis(m))
        .collect();
    let t = topo::local_exchanges(&rtds, &[3, 3, 3], 20_000_000, Duration::ZERO).unwrap();
    let mut regions = Vec::new();
    let mut it = t.receivers.iter().copied();
    for (i, &x) in t.attach_points.iter().enumerate() {
        let eps: Vec<NodeId> = it.by_ref().take(3).collect();
        regions.push(Region {
            exchange: x,
            rtd_endpoints: vec![rtds[i]; eps.len()],
            endpoints: eps,
            rtd_exchange: rtds[i],
        });
    }
    let mut s = Settings::new(variant, 1);
    s.rate_bps = 20_000_000;
    s.block_datagram = 256 + 32;
    let ipt = s.ipt().as_secs_f64();
    s.l = (2.0 * 0.030 / ipt).round() as u32;
    s.retx_capacity = s.l;
    let d = deploy(t.source, G, 100, &regions, &s);
    let mut sim = Sim::new(t.net, seed);
    sim.set_group(G, &t.receivers).unwrap();
    for (g, m) in &d.local_groups {
        sim.set_group(*g, m).unwrap();
    }
    for x in d.exchanges {
        let rng = sim.agent_rng(x.node, 1);
        sim.add_router_agent(x.node, Box::new(Exchange::new(x, rng)))
            .unwrap();
    }
    let mut endpoints = Vec::new();
    for e in d.endpoints {
        let rng = sim.agent_rng(e.node, 0);
        endpoints.push(e.node);
        sim.add_agent(e.node, Box::new(Endpoint::new(e, rng)))
            .unwrap();
    }
    sim.add_agent(t.source, Box::new(Source::new(d.source)))
        .unwrap();
    Run {
        sim,
        source: t.source,
        regions,
        endpoints,
        l: s.l,
    }
}

/// Drop the DATA packets arriving at `node` that `model` picks.
fn lose_data(sim: &mut Sim, node: NodeId, model: LossModel) {
    let site = LossSite::Rx { node, iface: None };
    sim.add_loss(&LossRule::new(site, model).filter(KindFilter::Data))
        .unwrap();
}

fn delivered(sim: &Sim, n: NodeId) -> Vec<u64> {
    sim.events(n)
        .iter()
        .filter_map(|(_, e)| match e {
            Event::Delivered { seq, data } => {
                assert_eq!(&data[..8], &seq.to_be_bytes(), "payload of block {seq}");
                Some(*seq)
            }
            _ => None,
        })
        .collect()
}

/// Every block 0..n delivered exactly once, in order (compact message on failure).
fn check_all(sim: &Sim, e: NodeId, n: u64) {
    let d = delivered(sim, e);
    let in_order = d.iter().enumerate().all(|(i, &s)| s == i as u64);
    assert!(
        in_order && d.len() as u64 == n,
        "{e:?}: {} of {n} delivered, in order: {in_order}, last {:?}",
        d.len(),
        d.last()
    );
}

fn run_to_end(r: &mut Run, blocks: u64) {
    r.sim
        .add_traffic(r.source, Traffic::saturated(blocks, 256))
        .unwrap();
    let out = r
        .sim
        .run(&Stop::when_complete().until(Time::from_secs(120)));
    if !out.completed {
        for n in &r.endpoints {
            let a = r.sim.agent(*n).unwrap();
            let st = a.stats();
            eprintln!(
                "{n:?}: delivered {} repairs {} dups {} held {} peak {} overflow {}",
                st.delivered,
                st.repairs_sent,
                st.duplicates,
                a.gauge(Gauge::Held).unwrap_or(0.0),
                a.gauge(Gauge::HeldPeak).unwrap_or(0.0),
                a.gauge(Gauge::Overflow).unwrap_or(0.0)
            );
        }
        let a = r.sim.agent(r.source).unwrap();
        let held = a.gauge(Gauge::Held).unwrap_or(0.0);
        eprintln!("source: {:?} outstanding {held}", a.stats());
    }
    assert!(out.completed, "{out:?}");
    // Let DSP's designated endpoints finish local repairs.
    let end = r.sim.now() + Duration::from_millis(300);
    r.sim.run(&Stop::at(end));
}

fn exactly_once_with_loss(variant: Variant) {
    let mut r = build(variant, 7);
    for reg in &r.regions {
        for &e in &reg.endpoints {
            lose_data(&mut r.sim, e, LossModel::Bernoulli { p: 0.02 });
        }
    }
    let blocks = 3_000;
    run_to_end(&mut r, blocks);
    for reg in &r.regions {
        for &e in &reg.endpoints {
            check_all(&r.sim, e, blocks);
        }
    }
    assert!(r.sim.losses().iter().any(|(_, n)| *n > 100));
    let peak = r
        .sim
        .agent(r.source)
        .and_then(|a| a.gauge(Gauge::HeldPeak))
        .unwrap_or(0.0);
    assert!(peak <= f64::from(r.l), "{peak} > L = {}", r.l);
    let src = r.sim.agent(r.source).unwrap().stats();
    assert_eq!(src.data_sent, blocks);
    let local: u64 = r
        .regions
        .iter()
        .flat_map(|g| g.endpoints.iter())
        .map(|&e| r.sim.agent(e).unwrap().stats().repairs_sent)
        .sum();
    match variant {
        Variant::Csp => assert_eq!(local, 0, "CSP never repairs locally"),
        _ => assert!(local > 0, "{variant:?} repairs locally"),
    }
    assert!(src.repairs_sent > 0);
}

#[test]
fn dsp_delivers_exactly_once_in_order_under_loss() {
    exactly_once_with_loss(Variant::Dsp);
}

#[test]
fn csp_delivers_exactly_once_in_order_under_loss() {
    exactly_once_with_loss(Variant::Csp);
}

#[test]
fn cp_delivers_exactly_once_in_order_under_loss() {
    exactly_once_with_loss(Variant::Cp);
}

/// One data block lost at one non-designated endpoint of one region: its designated
/// endpoint re-multicasts it on the local group once and the source never re-multicasts.
#[test]
fn dsp_repairs_a_loss_inside_one_region_locally() {
    let mut r = build(Variant::Dsp, 3);
    let region = r.regions[1].clone();
    let (designated, member) = (region.endpoints[0], region.endpoints[2]);
    lose_data(&mut r.sim, member, LossModel::DropNth { k: 40 });
    let blocks = 500;
    run_to_end(&mut r, blocks);
    assert_eq!(r.sim.losses().iter().map(|(_, n)| n).sum::<u64>(), 1);
    assert_eq!(r.sim.agent(r.source).unwrap().stats().repairs_sent, 0);
    assert_eq!(r.sim.agent(designated).unwrap().stats().repairs_sent, 1);
    for g in &r.regions {
        for &e in &g.endpoints {
            assert_eq!(delivered(&r.sim, e).len() as u64, blocks);
            if e != designated {
                assert_eq!(r.sim.agent(e).unwrap().stats().repairs_sent, 0);
            }
        }
    }
    // The repaired block reached the member once; its neighbours got a duplicate.
    let dups: u64 = region
        .endpoints
        .iter()
        .map(|&e| r.sim.agent(e).unwrap().stats().duplicates)
        .sum();
    assert_eq!(
        dups, 1,
        "one other member hears the local re-multicast again"
    );
}

/// CP: a block lost at every endpoint of a region but one is repaired by that endpoint; the
/// source does not re-multicast.
#[test]
fn cp_repairs_from_any_holder_without_the_source() {
    let mut r = build(Variant::Cp, 5);
    let region = r.regions[2].clone();
    for &e in &region.endpoints[..2] {
        lose_data(&mut r.sim, e, LossModel::DropNth { k: 25 });
    }
    run_to_end(&mut r, 400);
    assert_eq!(r.sim.agent(r.source).unwrap().stats().repairs_sent, 0);
    let holder = region.endpoints[2];
    assert!(r.sim.agent(holder).unwrap().stats().repairs_sent >= 1);
    for &e in &region.endpoints {
        check_all(&r.sim, e, 400);
    }
}

/// CSP: the same loss is repaired by the source, globally.
#[test]
fn csp_repairs_only_from_the_source() {
    let mut r = build(Variant::Csp, 5);
    let e = r.regions[0].endpoints[1];
    lose_data(&mut r.sim, e, LossModel::DropNth { k: 25 });
    run_to_end(&mut r, 400);
    assert_eq!(r.sim.agent(r.source).unwrap().stats().repairs_sent, 1);
    check_all(&r.sim, e, 400);
}

#[test]
fn registry_builds_all_three_from_a_scenario() {
    // Every protocol laid out on seed 001's regions.
    let regions: Vec<&str> = rmcast_proto::protocols::region_protocols()
        .map(|p| p.name)
        .collect();
    assert!(!regions.is_empty());
    for name in regions {
        let text = format!(
            r#"
name = "seed 001 {name}"
seed = 1
[topology]
kind = "local_exchanges"
rtds_ms = [10, 25, 30]
destinations = 10
bandwidth_bps = 20000000
[protocol]
name = "{name}"
rate_mbps = 20
block_bytes = 512
[traffic]
messages = 500
size = 512
[[loss]]
model = "bernoulli"
p = 0.01
at = "rx"
nodes = "receivers"
filter = "data"
"#
        );
        let sc = rmcast_sim::scenario::Scenario::parse(&text, "inline.toml", ".".into()).unwrap();
        let res = rmcast_sim::scenario::run_sweep(&sc, Default::default(), &|| {}).unwrap();
        let get = |k: &str| res[0].column(k).unwrap().csv();
        assert_eq!(get("completed"), "true", "{name}");
        assert_eq!(get("delivered_min"), "500", "{name}");
        assert_eq!(get("delivered_max"), "500", "{name}");
    }
    let _ = Bytes::new();
}
