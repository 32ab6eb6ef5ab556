//! Tests of the simulator as a whole: the bus rules of seed 000 §3, links, multicast
//! replication, host models, the router hook, and `saw` end to end.

use crate::*;
use core::time::Duration;
use rmcast_proto::{
    saw, Agent, Bytes, Dest, Event, GroupId, IfaceId, NodeId, Outbox, RouteDecision, RouterAgent,
    RouterTransmit, Time, Transmit,
};
use std::collections::VecDeque;

/// Sends given datagrams at given times; records what it receives.
struct Script {
    plan: VecDeque<(Time, Transmit)>,
    got: std::rc::Rc<std::cell::RefCell<Vec<(Time, NodeId, usize)>>>,
    outbox: Outbox,
}

type Log = std::rc::Rc<std::cell::RefCell<Vec<(Time, NodeId, usize)>>>;

/// What a script sends: (when, to whom, how many bytes).
type Plan = Vec<(Time, Dest, usize)>;

fn script(plan: Plan) -> (Box<Script>, Log) {
    let log: Log = Default::default();
    let plan = plan
        .into_iter()
        .map(|(t, dest, len)| {
            (
                t,
                Transmit {
                    dest,
                    payload: Bytes::from(vec![0u8; len]),
                },
            )
        })
        .collect();
    (
        Box::new(Script {
            plan,
            got: log.clone(),
            outbox: Outbox::new(),
        }),
        log,
    )
}

/// A script agent at each node, sending its plan; their logs, in the same order. Agents are
/// added in that order.
fn attach<const N: usize>(sim: &mut Sim, agents: [(NodeId, Plan); N]) -> [Log; N] {
    agents.map(|(node, plan)| {
        let (s, log) = script(plan);
        sim.add_agent(node, s).unwrap();
        log
    })
}

impl Agent for Script {
    fn handle_packet(&mut self, now: Time, from: NodeId, packet: &[u8]) {
        self.got.borrow_mut().push((now, from, packet.len()));
    }
    fn handle_timeout(&mut self, now: Time) {
        while self.plan.front().is_some_and(|(t, _)| *t <= now) {
            let (_, t) = self.plan.pop_front().unwrap();
            self.outbox.push(t);
        }
    }
    fn poll_timeout(&self) -> Option<Time> {
        self.plan.front().map(|(t, _)| *t)
    }
    rmcast_proto::outbox_field!(outbox);
}

const BIT: u64 = 100; // ns at 10 Mb/s

fn bus_net(n: usize, cfg: BusConfig) -> (Network, Vec<NodeId>) {
    let mut net = Network::new();
    let nodes: Vec<NodeId> = (0..n).map(|_| net.add_node(NodeKind::Host)).collect();
    net.add_bus(&nodes, cfg).unwrap();
    (net, nodes)
}

/// A simulation (seed `seed`) of `n` hosts on one bus.
fn bus_sim(n: usize, cfg: BusConfig, seed: u64) -> (Sim, Vec<NodeId>) {
    let (net, nodes) = bus_net(n, cfg);
    (Sim::new(net, seed), nodes)
}

/// On a bus of three, `n[1]` and `n[2]` both send 64 bytes to `n[0]` at time 0: `n[0]`'s log.
fn two_senders_at_once(sim: &mut Sim, n: &[NodeId]) -> Log {
    let to_0 = || vec![(Time::ZERO, Dest::Node(n[0]), 64)];
    let [log, _, _] = attach(sim, [(n[0], vec![]), (n[1], to_0()), (n[2], to_0())]);
    log
}

/// A simulation (seed 1) of hosts `a` and `b` on one link.
fn two_hosts(cfg: LinkConfig) -> (Sim, NodeId, NodeId) {
    let mut net = Network::new();
    let a = net.add_host();
    let b = net.add_host();
    net.add_link(a, b, cfg).unwrap();
    (Sim::new(net, 1), a, b)
}

/// Group 1, of `members`.
fn group(sim: &mut Sim, members: &[NodeId]) -> GroupId {
    let g = GroupId(1);
    sim.set_group(g, members).unwrap();
    g
}

/// Loses a packet at `site` with probability `p`.
fn lose(sim: &mut Sim, site: LossSite, p: f64) {
    sim.add_loss(&LossRule::new(site, LossModel::Bernoulli { p }))
        .unwrap();
}

fn at_bits(b: u64) -> Time {
    Time::from_nanos(b * BIT)
}

#[test]
fn lone_1518_byte_frame_takes_12144_bit_times() {
    let (mut sim, n) = bus_sim(3, BusConfig::default(), 1);
    let frame = vec![(Time::ZERO, Dest::Node(n[1]), 1518)];
    let [_, log_b, log_c] = attach(&mut sim, [(n[0], frame), (n[1], vec![]), (n[2], vec![])]);
    sim.run(&Stop::default());
    assert_eq!(*log_b.borrow(), vec![(at_bits(12_144), n[0], 1518)]);
    // Not addressed: no receive event at node 2.
    assert!(log_c.borrow().is_empty());
    let k = sim.counters();
    assert_eq!(
        (
            k.bus_frames,
            k.bus_collisions,
            k.bus_receive_events,
            k.bus_deferrals
        ),
        (1, 0, 1, 0)
    );
}

#[test]
fn small_datagrams_are_padded_to_64_byte_frames_and_overhead_is_added() {
    let (mut sim, n) = bus_sim(2, BusConfig::default(), 1);
    let [_, log] = attach(
        &mut sim,
        [
            (n[0], vec![(Time::ZERO, Dest::Node(n[1]), 21)]),
            (n[1], vec![]),
        ],
    );
    sim.run(&Stop::default());
    assert_eq!(log.borrow()[0].0, at_bits(512));

    let cfg = BusConfig {
        overhead: 26,
        ..BusConfig::default()
    };
    assert_eq!(cfg.frame_bytes(1000), 1026);
    assert_eq!(cfg.frame_bytes(10), 64);
}

#[test]
fn multicast_frame_reaches_only_group_members_once() {
    let (mut sim, n) = bus_sim(4, BusConfig::default(), 1);
    let g = GroupId(7);
    sim.set_group(g, &[n[1], n[2]]).unwrap();
    let [_, logs @ ..] = attach(
        &mut sim,
        [
            (n[0], vec![(Time::ZERO, Dest::Group(g), 100)]),
            (n[1], vec![]),
            (n[2], vec![]),
            (n[3], vec![]),
        ],
    );
    sim.run(&Stop::default());
    assert_eq!(logs[0].borrow().len(), 1);
    assert_eq!(logs[1].borrow().len(), 1);
    assert_eq!(logs[2].borrow().len(), 0);
    assert_eq!(sim.counters().bus_receive_events, 2);
    assert_eq!(sim.counters().bus_frames, 1);
    assert_eq!(logs[0].borrow()[0].0, at_bits(800));
}

#[test]
fn two_nodes_ready_at_the_same_instant_collide() {
    let (mut sim, n) = bus_sim(3, BusConfig::default(), 3);
    let log = two_senders_at_once(&mut sim, &n);
    sim.run(&Stop::default());
    let k = sim.counters().clone();
    assert!(k.bus_collisions >= 1);
    assert_eq!(k.bus_collided_frames, 2 * k.bus_collisions);
    assert_eq!(k.bus_frames, 2);
    let got = log.borrow();
    assert_eq!(got.len(), 2);
    // The first collision costs 32 bit times; nothing can arrive before 32 + 512.
    assert!(got[0].0 >= at_bits(32 + 512), "{:?}", got[0].0);
    // Arrival times sit on the grid jam end + k slots + frame time.
    assert_eq!(got[0].0.as_nanos() % BIT, 0);
}

#[test]
fn ready_during_a_busy_bus_defers_and_then_transmits_at_once() {
    let (mut sim, n) = bus_sim(3, BusConfig::default(), 1);
    let [_, _, log] = attach(
        &mut sim,
        [
            (n[0], vec![(Time::ZERO, Dest::Node(n[2]), 1518)]),
            (n[1], vec![(at_bits(100), Dest::Node(n[2]), 64)]),
            (n[2], vec![]),
        ],
    );
    sim.run(&Stop::default());
    let got: Vec<Time> = log.borrow().iter().map(|x| x.0).collect();
    assert_eq!(got, vec![at_bits(12_144), at_bits(12_144 + 512)]);
    assert_eq!(sim.counters().bus_deferrals, 1);
    assert_eq!(sim.counters().bus_collisions, 0);
}

#[test]
fn two_nodes_deferring_on_the_same_busy_period_collide_at_its_end() {
    let (mut sim, n) = bus_sim(4, BusConfig::default(), 1);
    let [.., log] = attach(
        &mut sim,
        [
            (n[0], vec![(Time::ZERO, Dest::Node(n[3]), 1518)]),
            (n[1], vec![(at_bits(10), Dest::Node(n[3]), 64)]),
            (n[2], vec![(at_bits(20), Dest::Node(n[3]), 64)]),
            (n[3], vec![]),
        ],
    );
    // Stop right after the first busy period plus the jam.
    sim.run(&Stop::at(at_bits(12_144 + 32)));
    assert_eq!(sim.counters().bus_deferrals, 2);
    assert_eq!(sim.counters().bus_collisions, 1);
    sim.run(&Stop::default());
    assert_eq!(log.borrow().len(), 3);
}

#[test]
fn a_frame_is_discarded_when_its_16th_attempt_collides() {
    // Fixed backoff of one slot: the two stations collide on every attempt.
    let cfg = BusConfig {
        backoff: Backoff::Fixed { slots: 1 },
        ..BusConfig::default()
    };
    let (mut sim, n) = bus_sim(3, cfg, 1);
    let log = two_senders_at_once(&mut sim, &n);
    let out = sim.run(&Stop::default());
    let k = sim.counters().clone();
    assert_eq!(k.bus_collisions, 16);
    // Each station backs off after attempts 1..=15 and gives up after the 16th.
    assert_eq!(k.bus_backoffs, 2 * 15);
    assert_eq!(k.bus_frames, 0);
    assert!(log.borrow().is_empty());
    let lost: u64 = sim
        .losses()
        .iter()
        .filter(|(c, _)| c == "excess_collisions")
        .map(|(_, v)| *v)
        .sum();
    assert_eq!(lost, 2);
    // The 16th collision starts after 15 jams of 32 bit times and 15 one-slot backoffs.
    assert_eq!(out.end, at_bits(15 * (32 + 512)));
}

#[test]
fn without_collisions_two_stations_ready_at_once_go_one_after_the_other() {
    // The same two frames as above on the analysis bus: one goes at once, the other
    // defers to its end; nothing collides, nobody backs off.
    let cfg = BusConfig {
        backoff: Backoff::Fixed { slots: 1 },
        collisions: false,
        ..BusConfig::default()
    };
    let (mut sim, n) = bus_sim(3, cfg, 1);
    let log = two_senders_at_once(&mut sim, &n);
    let out = sim.run(&Stop::default());
    let k = sim.counters().clone();
    assert_eq!((k.bus_collisions, k.bus_backoffs, k.bus_frames), (0, 0, 2));
    assert_eq!(log.borrow().len(), 2);
    assert_eq!(out.end, at_bits(2 * 64 * 8));
}

#[test]
fn backoff_bound_inclusive_vs_exclusive() {
    // After the first collision each of two stations waits k slots, k in {0,1} (exclusive)
    // or {0,1,2} (inclusive). With one collision only, the second frame can arrive at
    // 32 + 2 slots + 512 only when k = 2 was drawn, which only the inclusive rule allows.
    let mut seen = [false, false];
    for (i, inclusive) in [false, true].into_iter().enumerate() {
        for seed in 0..200 {
            let cfg = BusConfig {
                backoff: Backoff::Exponential { inclusive },
                ..BusConfig::default()
            };
            let (mut sim, n) = bus_sim(3, cfg, seed);
            let log = two_senders_at_once(&mut sim, &n);
            sim.run(&Stop::default());
            let got = log.borrow();
            assert_eq!(got.len(), 2);
            assert!(got[0].0 >= at_bits(32 + 512));
            if sim.counters().bus_collisions == 1 && got[1].0 == at_bits(32 + 2 * 512 + 512) {
                seen[i] = true;
            }
        }
    }
    assert_eq!(seen, [false, true]);
}

fn line(bw: u64, delay_ms: u64) -> LinkConfig {
    LinkConfig::new(bw, Duration::from_millis(delay_ms))
}

#[test]
fn link_timing_is_transmission_plus_propagation_and_fifo() {
    let (mut sim, a, b) = two_hosts(line(8_000_000, 2)); // 1 byte per microsecond
    let plan = vec![
        (Time::ZERO, Dest::Node(b), 1000),
        (Time::ZERO, Dest::Node(b), 500),
    ];
    let [_, log] = attach(&mut sim, [(a, plan), (b, vec![])]);
    sim.run(&Stop::default());
    let got: Vec<Time> = log.borrow().iter().map(|x| x.0).collect();
    assert_eq!(
        got,
        vec![
            Time::from_micros(1000 + 2000),
            Time::from_micros(1500 + 2000)
        ]
    );
}

#[test]
fn jitter_never_reorders_and_never_goes_negative() {
    let mut net = Network::new();
    let a = net.add_host();
    let b = net.add_host();
    let cfg = LinkConfig::new(0, Duration::from_millis(1))
        .jitter(Duration::from_micros(100), Duration::from_millis(5));
    net.add_link(a, b, cfg).unwrap();
    let mut sim = Sim::new(net, 5);
    let plan = (0..500)
        .map(|i| {
            (
                Time::from_micros(i * 10),
                Dest::Node(b),
                30 + (i as usize % 7),
            )
        })
        .collect();
    let [_, log] = attach(&mut sim, [(a, plan), (b, vec![])]);
    sim.run(&Stop::default());
    let got = log.borrow();
    assert_eq!(got.len(), 500);
    // FIFO: sizes arrive in the order sent.
    let sizes: Vec<usize> = got.iter().map(|g| g.2).collect();
    let want: Vec<usize> = (0..500).map(|i| 30 + (i % 7)).collect();
    assert_eq!(sizes, want);
    for (i, g) in got.iter().enumerate() {
        assert!(g.0 >= Time::from_micros(i as u64 * 10 + 1000));
    }
    // The jitter is really there: some packets are late by more than 1 ms.
    assert!(got
        .iter()
        .enumerate()
        .any(|(i, g)| g.0 > Time::from_micros(i as u64 * 10 + 2000)));
}

#[test]
fn drop_tail_queue_overflows() {
    let (mut sim, a, b) = two_hosts(line(8_000_000, 1).queue(2));
    let plan = (0..6).map(|_| (Time::ZERO, Dest::Node(b), 1000)).collect();
    let [_, log] = attach(&mut sim, [(a, plan), (b, vec![])]);
    sim.run(&Stop::default());
    // One in transmission, two waiting, three dropped.
    assert_eq!(log.borrow().len(), 3);
    assert_eq!(
        sim.losses()
            .iter()
            .find(|c| c.0 == "queue_overflow")
            .unwrap()
            .1,
        3
    );
}

/// A complete binary tree of routers of height `h` with the source at the root and hosts
/// at the leaves. Returns (network, source, leaves).
fn binary_tree(h: u32, delay_ms: u64) -> (Network, NodeId, Vec<NodeId>) {
    let mut net = Network::new();
    let root = net.add_host();
    let mut level = vec![root];
    for d in 1..=h {
        let mut next = Vec::new();
        for &p in &level {
            for _ in 0..2 {
                let c = if d == h {
                    net.add_host()
                } else {
                    net.add_router()
                };
                net.add_link(p, c, line(10_000_000, delay_ms)).unwrap();
                next.push(c);
            }
        }
        level = next;
    }
    (net, root, level)
}

#[test]
fn multicast_replicates_at_branch_points_once_per_link() {
    let (net, root, leaves) = binary_tree(4, 1);
    let mut sim = Sim::new(net, 1);
    let g = group(&mut sim, &leaves);
    attach(&mut sim, [(root, vec![(Time::ZERO, Dest::Group(g), 200)])]);
    let logs: Vec<Log> = leaves
        .iter()
        .map(|&l| attach(&mut sim, [(l, vec![])])[0].clone())
        .collect();
    sim.run(&Stop::default());
    assert_eq!(sim.counters().link_hops, 2 + 4 + 8 + 16);
    for log in &logs {
        assert_eq!(log.borrow().len(), 1);
    }
    // Every leaf is 4 hops away: 4 × (160 µs transmission + 1 ms).
    assert_eq!(logs[0].borrow()[0].0, Time::from_micros(4 * 1160));
}

#[test]
fn receive_queue_overflow_is_implosion_loss() {
    // 10 hosts send to one at the same instant over zero-delay links; the sink holds 3
    // packets and serves 1000/s.
    let mut net = Network::new();
    let hub = net.add_router();
    let sink = net.add_host();
    net.add_link(sink, hub, line(0, 0)).unwrap();
    let senders: Vec<NodeId> = (0..10).map(|_| net.add_host()).collect();
    for &s in &senders {
        net.add_link(s, hub, line(0, 0)).unwrap();
    }
    let mut sim = Sim::new(net, 1);
    let [log] = attach(&mut sim, [(sink, vec![])]);
    sim.set_rx_queue(sink, 3, 1000.0).unwrap();
    for &s in &senders {
        attach(&mut sim, [(s, vec![(Time::ZERO, Dest::Node(sink), 50)])]);
    }
    sim.run(&Stop::default());
    let got: Vec<Time> = log.borrow().iter().map(|x| x.0).collect();
    assert_eq!(
        got,
        vec![
            Time::from_millis(1),
            Time::from_millis(2),
            Time::from_millis(3)
        ]
    );
    assert_eq!(
        sim.losses().iter().find(|c| c.0 == "implosion").unwrap().1,
        7
    );
    assert!(sim.set_rx_queue(sink, 0, 1.0).is_err());
}

#[test]
fn processing_delay_postpones_delivery() {
    let (mut sim, a, b) = two_hosts(line(0, 1));
    let [_, log] = attach(
        &mut sim,
        [(a, vec![(Time::ZERO, Dest::Node(b), 10)]), (b, vec![])],
    );
    sim.set_processing_delay(b, Duration::from_micros(250))
        .unwrap();
    sim.run(&Stop::default());
    assert_eq!(log.borrow()[0].0, Time::from_micros(1250));
}

/// Arrival times at `b` of packets `a` sends at 10, 20, ..., 100 ms, with `a`'s wake-ups up
/// to `late` late, under `seed`.
fn arrivals_with_lateness(late: Duration, seed: u64) -> Vec<Time> {
    let mut net = Network::new();
    let a = net.add_host();
    let b = net.add_host();
    net.add_link(a, b, line(0, 1)).unwrap();
    let mut sim = Sim::new(net, seed);
    let plan = (1..=10)
        .map(|k| (Time::from_millis(10 * k), Dest::Node(b), 10))
        .collect();
    let [_, log] = attach(&mut sim, [(a, plan), (b, vec![])]);
    sim.set_timer_lateness(a, late).unwrap();
    sim.run(&Stop::default());
    let got = log.borrow().iter().map(|x| x.0).collect();
    got
}

#[test]
fn a_late_host_sends_each_timed_packet_up_to_its_lateness_after_the_deadline() {
    let on_time = arrivals_with_lateness(Duration::ZERO, 1);
    let late = arrivals_with_lateness(Duration::from_millis(4), 1);
    assert_eq!(on_time.len(), 10);
    assert_eq!(late.len(), 10);
    let delays: Vec<Duration> = on_time.iter().zip(&late).map(|(a, b)| *b - *a).collect();
    assert!(
        delays.iter().all(|d| *d < Duration::from_millis(4)),
        "{delays:?}"
    );
    // Drawn, not fixed: the ten delays are not all equal, and some are over 1 ms.
    assert!(delays.iter().any(|d| *d != delays[0]), "{delays:?}");
    assert!(
        delays.iter().any(|d| *d > Duration::from_millis(1)),
        "{delays:?}"
    );
    // A pure function of the seed.
    assert_eq!(late, arrivals_with_lateness(Duration::from_millis(4), 1));
    assert_ne!(late, arrivals_with_lateness(Duration::from_millis(4), 2));
}

/// Consumes everything arriving on interface 0 from the source, forwards the rest, and
/// originates one packet of its own out of interface 1 when it first sees traffic.
struct Filter {
    seen: u32,
    outbox: Outbox<RouterTransmit>,
}

impl RouterAgent for Filter {
    fn on_packet(
        &mut self,
        _now: Time,
        ingress: IfaceId,
        _from: NodeId,
        _dest: Dest,
        packet: &[u8],
    ) -> RouteDecision {
        self.seen += 1;
        if self.seen == 1 {
            self.outbox.push_via(
                Transmit {
                    dest: Dest::Node(NodeId(2)),
                    payload: Bytes::from(vec![1u8; 7]),
                },
                Some(vec![IfaceId(1)]),
            );
        }
        if packet.len() == 99 {
            RouteDecision::Consume
        } else if packet.len() == 98 {
            RouteDecision::ForwardOn(vec![IfaceId(2)])
        } else {
            let _ = ingress;
            RouteDecision::Forward
        }
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    rmcast_proto::outbox_field!(outbox: RouterTransmit);
}

#[test]
fn router_agent_forwards_consumes_redirects_and_originates() {
    // src(0) - router(1) - {b(2), c(3)}; router ifaces: 0 to src, 1 to b, 2 to c.
    let mut net = Network::new();
    let src = net.add_host();
    let r = net.add_router();
    let b = net.add_host();
    let c = net.add_host();
    net.add_link(src, r, line(0, 1)).unwrap();
    net.add_link(r, b, line(0, 1)).unwrap();
    net.add_link(r, c, line(0, 1)).unwrap();
    let mut sim = Sim::new(net, 1);
    let g = group(&mut sim, &[b, c]);
    let plan = vec![
        (Time::ZERO, Dest::Group(g), 50),
        (Time::from_millis(10), Dest::Group(g), 99),
        (Time::from_millis(20), Dest::Node(b), 98),
    ];
    let [_, log_b, log_c] = attach(&mut sim, [(src, plan), (b, vec![]), (c, vec![])]);
    sim.add_router_agent(
        r,
        Box::new(Filter {
            seen: 0,
            outbox: Outbox::new(),
        }),
    )
    .unwrap();
    sim.run(&Stop::default());
    let sizes_b: Vec<usize> = log_b.borrow().iter().map(|x| x.2).collect();
    let sizes_c: Vec<usize> = log_c.borrow().iter().map(|x| x.2).collect();
    // b: the multicast and the router's own packet; the 98-byte unicast to b was sent to c's
    // interface instead and c, not being addressed, does not get it.
    assert_eq!(sizes_b, vec![7, 50]);
    assert_eq!(sizes_c, vec![50]);
    assert_eq!(sim.counters().router_consumed, 1);
}

// ------------------------------------------------------------------ saw end to end

fn run_saw(
    mut sim: Sim,
    sender: NodeId,
    receivers: &[NodeId],
    messages: u64,
    timeout: Duration,
) -> Sim {
    let g = group(&mut sim, receivers);
    let cfg = saw::SenderConfig::new(sender, g, receivers.to_vec(), timeout);
    sim.add_agent(sender, Box::new(saw::Sender::new(cfg)))
        .unwrap();
    for &r in receivers {
        let rng = sim.agent_rng(r, 0);
        sim.add_agent(
            r,
            Box::new(saw::Receiver::new(saw::ReceiverConfig::new(r), rng)),
        )
        .unwrap();
    }
    sim.add_traffic(sender, Traffic::saturated(messages, 1000))
        .unwrap();
    let out = sim.run(&Stop::when_complete().until(Time::from_secs(3600)));
    assert!(out.completed, "{out:?}");
    sim
}

fn assert_exactly_once_in_order(sim: &Sim, receivers: &[NodeId], messages: u64) {
    for &r in receivers {
        let seqs: Vec<u64> = sim
            .events(r)
            .iter()
            .filter_map(|(_, e)| match e {
                Event::Delivered { seq, data } => {
                    // The traffic source stamps the message number in the first 8 bytes.
                    let n = u64::from_be_bytes(data[..8].try_into().unwrap());
                    assert_eq!(n, *seq);
                    Some(*seq)
                }
                _ => None,
            })
            .collect();
        assert_eq!(seqs, (0..messages).collect::<Vec<_>>(), "receiver {r:?}");
    }
}

#[test]
fn saw_over_the_bus_with_interface_loss_delivers_exactly_once_in_order() {
    let (mut sim, n) = bus_sim(11, BusConfig::default(), 17);
    // Seed 000's error model: every interface drops on transmit and on receive.
    for &x in &n {
        for site in [
            LossSite::Tx {
                node: x,
                iface: None,
            },
            LossSite::Rx {
                node: x,
                iface: None,
            },
        ] {
            lose(&mut sim, site, 0.02);
        }
    }
    let sim = run_saw(sim, n[0], &n[1..], 60, Duration::from_millis(30));
    assert_exactly_once_in_order(&sim, &n[1..], 60);
    let k = sim.counters();
    assert!(k.lost > 0);
    assert!(
        k.bus_collisions > 0,
        "ten receivers ACK at the same instant"
    );
    assert!(k.originated_repair > 0);
    let m = sim.metrics(n[0]).unwrap();
    assert_eq!(m.messages_done, 60);
    assert_eq!(m.messages_failed, 0);
}

#[test]
fn deliveries_kept_without_payloads_keep_their_numbers_times_and_byte_counts() {
    let run = |payloads: bool| {
        let (mut sim, n) = bus_sim(4, BusConfig::default(), 5);
        sim.record_payloads(payloads);
        let sim = run_saw(sim, n[0], &n[1..], 20, Duration::from_millis(30));
        let kept: Vec<(Time, u64, usize)> = n[1..]
            .iter()
            .flat_map(|&r| sim.events(r).iter())
            .filter_map(|(t, e)| match e {
                Event::Delivered { seq, data } => Some((*t, *seq, data.len())),
                _ => None,
            })
            .collect();
        let bytes: Vec<u64> = n[1..]
            .iter()
            .map(|&r| sim.metrics(r).unwrap().delivered_bytes)
            .collect();
        (kept, bytes)
    };
    let (with, bytes_with) = run(true);
    let (without, bytes_without) = run(false);
    assert_eq!(with.len(), 3 * 20);
    assert!(with.iter().all(|&(_, _, len)| len == 1000));
    assert!(without.iter().all(|&(_, _, len)| len == 0));
    let when = |v: &[(Time, u64, usize)]| v.iter().map(|&(t, s, _)| (t, s)).collect::<Vec<_>>();
    assert_eq!(when(&with), when(&without));
    assert_eq!(bytes_with, bytes_without);
    assert_eq!(bytes_with, vec![20_000; 3]);
}

#[test]
fn saw_over_a_lossy_tree_delivers_exactly_once_in_order() {
    let (net, root, leaves) = binary_tree(4, 2);
    let links = net.link_count();
    let mut sim = Sim::new(net, 99);
    for l in 0..links {
        let site = LossSite::Link {
            link: l,
            from: None,
        };
        lose(&mut sim, site, 0.03);
    }
    let sim = run_saw(sim, root, &leaves, 40, Duration::from_millis(50));
    assert_exactly_once_in_order(&sim, &leaves, 40);
    assert!(sim.counters().lost > 0);
}

#[test]
fn runs_are_a_pure_function_of_the_seed() {
    let go = |seed| {
        let (mut sim, n) = bus_sim(6, BusConfig::default(), seed);
        for &x in &n {
            let site = LossSite::Rx {
                node: x,
                iface: None,
            };
            lose(&mut sim, site, 0.05);
        }
        let sim = run_saw(sim, n[0], &n[1..], 30, Duration::from_millis(20));
        (sim.counters().clone(), sim.events(n[0]).to_vec(), sim.now())
    };
    assert_eq!(go(5), go(5));
    assert_ne!(go(5).2, go(6).2);
}

#[test]
fn configuration_errors_are_reported() {
    let (mut sim, n) = bus_sim(2, BusConfig::default(), 1);
    assert!(matches!(
        sim.add_loss(&LossRule::new(
            LossSite::Link {
                link: 3,
                from: None
            },
            LossModel::Bernoulli { p: 0.1 }
        )),
        Err(SimError::NoSuchLink(3))
    ));
    assert!(sim.add_traffic(n[0], Traffic::saturated(1, 1)).is_err());
    assert!(sim.set_group(GroupId(1), &[NodeId(9)]).is_err());
    let mut net = Network::new();
    let a = net.add_host();
    assert!(net.add_link(a, a, line(0, 0)).is_err());
    let b = net.add_host();
    assert!(net
        .add_bus(
            &[a, b],
            BusConfig {
                bandwidth_bps: 3,
                ..BusConfig::default()
            }
        )
        .is_err());
}

/// An agent whose deadline never moves: the simulator must not spin at one instant.
struct Stuck {
    calls: u32,
    outbox: Outbox,
}

impl Agent for Stuck {
    fn handle_packet(&mut self, _now: Time, _from: NodeId, _packet: &[u8]) {}
    fn handle_timeout(&mut self, _now: Time) {
        self.calls += 1;
    }
    fn poll_transmit(&mut self) -> Option<Transmit> {
        None
    }
    fn poll_timeout(&self) -> Option<Time> {
        Some(Time::from_millis(1))
    }
    rmcast_proto::outbox_field!(outbox);
}

#[test]
fn a_stuck_deadline_does_not_freeze_time() {
    let mut net = Network::new();
    let a = net.add_host();
    let mut sim = Sim::new(net, 1);
    sim.add_agent(
        a,
        Box::new(Stuck {
            calls: 0,
            outbox: Outbox::new(),
        }),
    )
    .unwrap();
    let out = sim.run(&Stop::at(Time::from_millis(1) + Duration::from_nanos(10)));
    assert_eq!(out.reason, "time_limit");
    assert!(sim.counters().stuck_timers >= 10);
}

// ------------------------------------------------------------------ pinned router packets

/// Originates one group packet of its own, pinned to interface `iface`, when it first sees
/// a packet.
struct Pin {
    iface: u32,
    group: GroupId,
    fired: bool,
    outbox: Outbox<RouterTransmit>,
}

impl RouterAgent for Pin {
    fn on_packet(
        &mut self,
        _now: Time,
        _ingress: IfaceId,
        _from: NodeId,
        _dest: Dest,
        _packet: &[u8],
    ) -> RouteDecision {
        if !self.fired {
            self.fired = true;
            self.outbox.push_via(
                Transmit {
                    dest: Dest::Group(self.group),
                    payload: Bytes::from(vec![2u8; 11]),
                },
                Some(vec![IfaceId(self.iface)]),
            );
        }
        RouteDecision::Forward
    }
    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    rmcast_proto::outbox_field!(outbox: RouterTransmit);
}

/// Who gets router A's packet pinned to its interface toward Q, when the first packet
/// crossing A is `first`: original data (A then has the group's data tree) or not.
fn pinned_packet_receivers(first_is_data: bool) -> (Vec<usize>, Vec<usize>) {
    // s - R0 -10- A -10- Q -10- Y, and R0 -25- Y; h1 on Q, h2 on Y (1 ms host links).
    // From R0, Y is closer directly (25 < 30) and Q through A (20 < 35); from A, Y is
    // closer through Q (20 < 35). So below A toward Q the data tree holds only Q (h1),
    // while A's own shortest paths through that interface reach Y (h2) as well.
    let mut net = Network::new();
    let s = net.add_host();
    let r0 = net.add_router();
    let a = net.add_router();
    let q = net.add_router();
    let y = net.add_router();
    let h1 = net.add_host();
    let h2 = net.add_host();
    net.add_link(r0, a, line(0, 10)).unwrap(); // A iface 0
    net.add_link(a, q, line(0, 10)).unwrap(); // A iface 1
    net.add_link(q, y, line(0, 10)).unwrap();
    net.add_link(r0, y, line(0, 25)).unwrap();
    net.add_link(s, r0, line(0, 1)).unwrap();
    net.add_link(h1, q, line(0, 1)).unwrap();
    net.add_link(h2, y, line(0, 1)).unwrap();
    let mut sim = Sim::new(net, 1);
    let g = group(&mut sim, &[h1, h2]);
    let payload = if first_is_data {
        let env = rmcast_wire::Envelope {
            session: 0,
            source: s.0,
            flags: 0,
        };
        let m = rmcast_wire::Message::Pgm(rmcast_wire::pgm::Message::Odata {
            seq: 0,
            payload: &[7u8; 40],
        });
        Bytes::from(rmcast_wire::Packet::to_vec(env, &m).unwrap())
    } else {
        Bytes::from(vec![0u8; 40])
    };
    let len = payload.len();
    let (mut src, _) = script(vec![]);
    src.plan.push_back((
        Time::ZERO,
        Transmit {
            dest: Dest::Group(g),
            payload,
        },
    ));
    sim.add_agent(s, src).unwrap();
    let [log1, log2] = attach(&mut sim, [(h1, vec![]), (h2, vec![])]);
    sim.add_router_agent(
        a,
        Box::new(Pin {
            iface: 1,
            group: g,
            fired: false,
            outbox: Outbox::new(),
        }),
    )
    .unwrap();
    sim.run(&Stop::default());
    let sizes = |l: &Log| {
        let mut v: Vec<usize> = l.borrow().iter().map(|x| x.2).collect();
        v.sort_unstable();
        v
    };
    let (v1, v2) = (sizes(&log1), sizes(&log2));
    assert!(
        v1.contains(&len) && v2.contains(&len),
        "the data reaches both"
    );
    (v1, v2)
}

#[test]
fn a_pinned_router_packet_follows_the_data_tree_below_the_router() {
    let (h1, h2) = pinned_packet_receivers(true);
    assert!(h1.contains(&11), "h1 is below A toward Q on the data tree");
    assert!(
        !h2.contains(&11),
        "h2 is not below A on the data tree: {h2:?}"
    );
}

#[test]
fn without_data_state_a_pinned_packet_follows_the_routers_own_paths() {
    let (h1, h2) = pinned_packet_receivers(false);
    assert!(h1.contains(&11));
    assert!(
        h2.contains(&11),
        "A's own shortest path to Y leaves through Q"
    );
}
