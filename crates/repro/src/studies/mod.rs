pub mod demo;
pub mod lms;
pub mod paul;
pub mod prmp;
pub mod segovia;
pub mod xtp;
pub mod xtp_grid;
pub mod xtp_net;

use rmcast_proto::{GroupId, NodeId};
use rmcast_sim::{BusConfig, Network, Sim};

/// The bus studies' network: one sender and `receivers` receivers on one shared `bus`, the
/// receivers joined to `group`; returns the simulator, the sender and the receivers.
pub(crate) fn bus_sim(
    receivers: usize,
    bus: BusConfig,
    group: GroupId,
    seed: u64,
) -> Result<(Sim, NodeId, Vec<NodeId>), String> {
    let mut net = Network::new();
    let nodes: Vec<NodeId> = (0..=receivers).map(|_| net.add_host()).collect();
    net.add_bus(&nodes, bus)
        .map_err(|e| format!("building the bus: {e}"))?;
    let (sender, receivers) = match nodes.split_first() {
        Some((a, b)) => (*a, b.to_vec()),
        None => return Err("no nodes".into()),
    };
    let mut sim = Sim::new(net, seed);
    sim.set_group(group, &receivers)
        .map_err(|e| e.to_string())?;
    Ok((sim, sender, receivers))
}
