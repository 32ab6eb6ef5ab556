//! Seed 004's link and host models: per-packet independent latency (reordering links) and a
//! receive queue that holds only some packet kinds.

use core::time::Duration;
use rmcast_proto::{Agent, Bytes, Dest, Event, GroupId, NodeId, Outbox, SendError, Time, Transmit};
use rmcast_sim::{KindFilter, LinkConfig, Network, Sim, Stop, Traffic};
use rmcast_wire::{Envelope, Message, Packet};

/// Sends one datagram per `send` (data, or control when the payload starts with 0xff) to
/// `dest`; records arrival times.
struct Probe {
    dest: Dest,
    out: Outbox,
}

impl Probe {
    fn new(dest: Dest) -> Self {
        Probe {
            dest,
            out: Outbox::new(),
        }
    }
}

fn datagram(control: bool, seq: u64) -> Bytes {
    let env = Envelope {
        session: 0,
        source: 0,
        flags: 0,
    };
    let payload = [0u8; 8];
    let msg = if control {
        Message::Prmp(rmcast_wire::prmp::Message::Resp {
            ts: seq,
            seq: 0,
            le: 0,
            hr: rmcast_wire::prmp::NO_HR,
            bitmap: &[],
        })
    } else {
        Message::Prmp(rmcast_wire::prmp::Message::Data {
            seq,
            payload: &payload,
        })
    };
    Bytes::from(Packet::to_vec(env, &msg).unwrap())
}

impl Agent for Probe {
    fn handle_packet(&mut self, _: Time, _: NodeId, p: &[u8]) {
        if let Ok(Packet {
            message: Message::Prmp(rmcast_wire::prmp::Message::Data { seq, .. }),
            ..
        }) = Packet::decode(p)
        {
            self.out.event(Event::Delivered {
                seq,
                data: Bytes::new(),
            });
        }
        self.out.stats.delivered += 1;
    }
    fn handle_timeout(&mut self, _: Time) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    rmcast_proto::outbox_field!(out);
    fn as_sender(&mut self) -> Option<&mut dyn rmcast_proto::SenderAgent> {
        Some(self)
    }
}

impl rmcast_proto::SenderAgent for Probe {
    fn send(&mut self, _: Time, data: Bytes) -> Result<(), SendError> {
        let control = data.first() == Some(&0xff);
        // `push` counts it in `packets_sent`.
        let seq = self.out.stats.packets_sent;
        self.out.push(Transmit {
            dest: self.dest,
            payload: datagram(control, seq),
        });
        Ok(())
    }

    fn can_send(&self) -> bool {
        true
    }
}

/// Mean one-way latency of 2000 packets sent 1 ms apart over a link with Normal(75 ms,
/// 15 ms) latency.
fn mean_latency(reorder: bool) -> f64 {
    let mut net = Network::new();
    let a = net.add_host();
    let b = net.add_host();
    net.add_link(
        a,
        b,
        LinkConfig::new(0, Duration::ZERO)
            .jitter(Duration::from_millis(75), Duration::from_millis(15))
            .reordering(reorder),
    )
    .unwrap();
    let mut sim = Sim::new(net, 1);
    sim.add_agent(a, Box::new(Probe::new(Dest::Node(b))))
        .unwrap();
    sim.add_agent(b, Box::new(Probe::new(Dest::Node(a))))
        .unwrap();
    let mut t = Traffic::every(2000, 8, Duration::from_millis(1));
    t.close = false;
    sim.add_traffic(a, t).unwrap();
    sim.run(&Stop::at(Time::from_secs(10)));
    let lat: Vec<f64> = sim
        .events(b)
        .iter()
        .filter_map(|(t, e)| match e {
            // Packet k left at k ms.
            Event::Delivered { seq, .. } => Some(t.as_nanos() as f64 / 1e6 - *seq as f64),
            _ => None,
        })
        .collect();
    assert_eq!(lat.len(), 2000);
    lat.iter().sum::<f64>() / lat.len() as f64
}

#[test]
fn reordering_links_keep_the_mean_latency_fifo_links_inflate_it() {
    let fifo = mean_latency(false);
    let indep = mean_latency(true);
    // FIFO: every arrival waits for the slowest earlier one, so the bulk runs late.
    assert!(fifo > 85.0, "fifo {fifo}");
    // Independent draws: the mean of 2000 Normal(75, 15) draws.
    assert!((indep - 75.0).abs() < 2.0, "independent {indep}");
}

#[test]
fn receive_queue_kinds_let_other_packets_bypass_it() {
    for (kinds, expect_lost) in [(KindFilter::All, true), (KindFilter::Control, false)] {
        let mut net = Network::new();
        let a = net.add_host();
        let b = net.add_host();
        net.add_link(a, b, LinkConfig::new(0, Duration::from_millis(1)))
            .unwrap();
        let mut sim = Sim::new(net, 1);
        sim.add_agent(a, Box::new(Probe::new(Dest::Group(GroupId(1)))))
            .unwrap();
        sim.add_agent(b, Box::new(Probe::new(Dest::Node(a))))
            .unwrap();
        sim.set_group(GroupId(1), &[b]).unwrap();
        // 100 data packets at once into a 2-packet queue served 10 per second.
        sim.set_rx_queue(b, 2, 10.0).unwrap();
        sim.set_rx_queue_kinds(b, kinds).unwrap();
        let mut t = Traffic::saturated(100, 8);
        t.close = false;
        sim.add_traffic(a, t).unwrap();
        sim.run(&Stop::at(Time::from_secs(60)));
        let lost = sim
            .losses()
            .iter()
            .find(|(c, _)| c == "implosion")
            .map_or(0, |(_, n)| *n);
        assert_eq!(lost > 0, expect_lost, "{kinds:?}: {lost} lost");
        if !expect_lost {
            assert_eq!(sim.metrics(b).unwrap().packets_in, 100);
        }
    }
    // A node without a queue cannot take a filter.
    let mut net = Network::new();
    let a = net.add_host();
    let mut sim = Sim::new(net, 1);
    assert!(sim.set_rx_queue_kinds(a, KindFilter::Control).is_err());
}

#[test]
fn prmp_and_ff_run_from_scenario_files() {
    use rmcast_sim::scenario::{run_sweep, Metric, RunOptions, Scenario};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/repro/prmp");
    for file in ["star-lan-pf.toml", "star-lan-ff.toml"] {
        let sc = Scenario::load(&dir.join(file)).unwrap();
        assert_eq!(sc.runs(), 4, "{file}");
        let runs = run_sweep(&sc, RunOptions::default(), &|| {}).unwrap();
        assert_eq!(runs.len(), 4);
        for r in &runs {
            assert!(
                matches!(r.column("completed"), Some(Metric::B(true))),
                "{file}: run {} did not complete",
                r.index
            );
        }
    }
}
