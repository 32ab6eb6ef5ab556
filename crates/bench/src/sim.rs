//! `rmcast bench sim`: the discrete-event simulator's three figures, as JSON. (a) kernel
//! events/s on a hold model with 100,000 pending events; (b) packet-hop events/s for one sender
//! multicasting 1-KB packets unreliably to the leaves of a binary tree with 1% Bernoulli loss
//! on every link; (c) wall time and peak RSS (VmHWM) for a large transit-stub graph.

use crate::{BenchError, Result};
use rmcast_sim::bench;
use rmcast_sim::topo::TransitStub;
use serde_json::{json, Value};

/// Run the three figures (`quick`: the sizes scaled down, seconds instead of a minute) and
/// return them as one JSON object; (c) runs first, so that the peak RSS it reports is its own.
pub fn figures(quick: bool) -> Result<Value> {
    let (pending, steps) = if quick {
        (100_000, 2_000_000)
    } else {
        (100_000, 20_000_000)
    };
    let (tree_h, tree_pkts) = if quick { (7, 1_000) } else { (10, 10_000) };
    let ts = if quick {
        TransitStub::default()
    } else {
        TransitStub {
            transit_domains: 4,
            transit_nodes: 10,
            stubs_per_transit: 5,
            stub_nodes: 10,
            ..TransitStub::default()
        }
    };
    let (ts_receivers, ts_pkts) = if quick { (10_000, 20) } else { (100_000, 100) };

    // (c) first, so that the peak RSS it reports is its own.
    let c = bench::transit_stub_multicast(&ts, ts_receivers, ts_pkts, 1024).ok_or_else(|| {
        BenchError::Failed("could not build the transit-stub benchmark topology".into())
    })?;
    let rss = bench::peak_rss_bytes();
    let (n, secs, cpu) = bench::hold_model(pending, steps);
    let b = bench::binary_tree_multicast(tree_h, tree_pkts, 1024, 0.01);

    Ok(json!({
        "quick": quick,
        "note": "seconds are wall time; cpu_seconds is this thread's CPU time (/proc/thread-self/schedstat), which differs from wall time when the machine is loaded",
        "threads": 1,
        "a_hold_model": {
            "pending_events": pending,
            "events": n,
            "seconds": secs,
            "cpu_seconds": cpu,
            "events_per_second": n as f64 / secs.max(1e-9),
            "events_per_cpu_second": cpu.map(|c| n as f64 / c.max(1e-9)),
        },
        "b_binary_tree_multicast": {
            "receivers": b.receivers,
            "packets": b.packets,
            "packet_bytes": 1024,
            "loss_per_link": 0.01,
            "link_hops": b.link_hops,
            "kernel_events": b.kernel_events,
            "deliveries": b.deliveries,
            "lost": b.lost,
            "run_seconds": b.run_seconds,
            "run_cpu_seconds": b.run_cpu_seconds,
            "packet_hops_per_second": b.link_hops as f64 / b.run_seconds.max(1e-9),
            "packet_hops_per_cpu_second": b.run_cpu_seconds.map(|c| b.link_hops as f64 / c.max(1e-9)),
            "kernel_events_per_second": b.kernel_events as f64 / b.run_seconds.max(1e-9),
        },
        "c_transit_stub_large": {
            "receivers": c.receivers,
            "nodes": c.nodes,
            "packets": c.packets,
            "link_hops": c.link_hops,
            "deliveries": c.deliveries,
            "build_seconds": c.build_seconds,
            "run_seconds": c.run_seconds,
            "run_cpu_seconds": c.run_cpu_seconds,
            "wall_seconds": c.build_seconds + c.run_seconds,
            "peak_rss_bytes": rss,
        },
    }))
}
