//! A two-node simulation from Rust: a PGM source and one receiver joined by a 10 Mbit/s,
//! 5 ms link that loses 5 % of the data packets, 200 messages of 1,000 bytes. The simulator
//! carries the same agents the socket driver runs; here it supplies the link, the loss, the
//! clock and the traffic, and reports what happened.
//!
//! ```sh
//! cargo run -p rmcast-sim --example two_nodes
//! ```

use rmcast_proto::pgm::{Receiver, ReceiverConfig, Source, SourceConfig};
use rmcast_proto::{GroupId, Time};
use rmcast_sim::Traffic;
use rmcast_sim::{KindFilter, LinkConfig, LossModel, LossRule, LossSite, Network, Sim, Stop};
use std::time::Duration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The network: two hosts and one full-duplex link between them.
    let mut net = Network::new();
    let (source, receiver) = (net.add_host(), net.add_host());
    let link = net.add_link(
        source,
        receiver,
        LinkConfig::new(10_000_000, Duration::from_millis(5)),
    )?;

    // A simulation of that network; every random choice derives from the seed (here 1), so
    // the same seed gives the same run, bit for bit.
    let mut sim = Sim::new(net, 1);
    let group = GroupId(1);
    sim.set_group(group, &[source, receiver])?;
    sim.add_agent(
        source,
        Box::new(Source::new(SourceConfig::new(source, group))),
    )?;
    let rng = sim.agent_rng(receiver, 0);
    let rx = Receiver::new(ReceiverConfig::new(receiver, source), rng);
    sim.add_agent(receiver, Box::new(rx))?;

    // 5 % of the original data packets leaving the source are lost on the link.
    let loss = LossRule::new(
        LossSite::Link {
            link,
            from: Some(source),
        },
        LossModel::Bernoulli { p: 0.05 },
    );
    sim.add_loss(&loss.filter(KindFilter::OriginalData))?;

    // The application at the source offers 200 messages of 1,000 bytes, one every 2 ms.
    sim.add_traffic(source, Traffic::every(200, 1_000, Duration::from_millis(2)))?;
    let outcome = sim.run(&Stop::when_complete().until(Time::from_secs(60)));

    // What happened, from the agents' events and counters (never from their insides).
    // (PGM's source completes only after lingering for late NAKs, so `end` is later than
    // the last delivery.)
    let got = sim.metrics(receiver).unwrap_or_default();
    let last = got.last_delivery.unwrap_or(Time::ZERO);
    println!("run stopped: {} at {:?}", outcome.reason, outcome.end);
    println!(
        "receiver: {} of 200 messages delivered, {} losses detected, the last at {last:?}",
        got.delivered, got.losses_detected
    );
    println!(
        "all delivered: {}",
        sim.delivered_everything(source, &[receiver])
    );
    Ok(())
}

// `cargo test` runs this example too (`test = true` in Cargo.toml), so it cannot rot.
#[test]
fn runs() {
    main().unwrap();
}
