//! `prmp` (seed 004 §2–§4) on sockets: the sender is the polling parent, every receiver a
//! child; the ANNOUNCE carries the receive window S. A DATAPOLL names the children it polls,
//! so the DATA overhead grows with the receivers.

use super::QUEUE_LIMIT;
use super::{
    nodes, Announced, Me, NetProtocol, Received, SenderSettings, Start, Started, WindowUse,
};
use crate::NetError;
use rmcast_proto::{prmp, spec, GroupId, NodeId};
use std::time::Duration;

/// `prmp` parameters (seed 004 §2–§4) the sender exposes.
#[derive(Debug, Clone)]
pub struct PrmpOpts {
    /// Epoch length ε; rounded up to a multiple of the IPG.
    pub epoch: Duration,
    /// Response rate RR, responses per second the sender plans for.
    pub response_rate: u64,
    /// Inter-packet gap (`--ipg-us`, which `ff` reads too, see [`SenderSettings::ipg`]);
    /// `None`: one datagram at the pacing rate (10 µs when unpaced).
    pub ipg: Option<Duration>,
    /// Multicast threshold ratio MTR.
    pub mtr: f64,
    /// Consecutive unanswered polls after which the sender removes a child; 0 = never (the
    /// session layer's eviction after `--evict-after` of silence removes dead receivers).
    pub silent_polls: u32,
}

impl Default for PrmpOpts {
    fn default() -> Self {
        PrmpOpts {
            epoch: spec::ms(spec::prmp::EPOCH_MS),
            response_rate: spec::prmp::RESPONSE_RATE,
            ipg: None,
            mtr: spec::prmp::MTR,
            silent_polls: spec::prmp::SOCKET_SILENT_POLLS,
        }
    }
}

/// The PRMP configuration for these settings (also used to check the flags before any
/// receiver joins).
pub fn prmp_config(s: &SenderSettings, ids: &[u32]) -> Result<prmp::SenderConfig, NetError> {
    let bad = |e: prmp::ConfigError| NetError::setup(format!("prmp: {e}; check the prmp flags"));
    let mut c = prmp::SenderConfig::new(NodeId(s.node), GroupId(0), nodes(ids));
    c.session = s.session;
    c.window = u64::from(s.window);
    let ipg = s.ipg();
    if ipg.is_zero() {
        return Err(NetError::setup(
            "--ipg-us 0: give a positive inter-packet gap",
        ));
    }
    c.ipg = ipg;
    let k = s.prmp.epoch.as_nanos().div_ceil(ipg.as_nanos()).max(1);
    c.epoch = Duration::from_nanos(u64::try_from(k * ipg.as_nanos()).map_err(|_| {
        NetError::setup("--epoch-ms is too long for the inter-packet gap: shorten it")
    })?);
    c.response_rate = s.prmp.response_rate;
    c.mtr = s.prmp.mtr;
    // Off by default: with RTO_i = 2 × RTT_i floored at --rto-ms, ten polls span a few
    // hundred milliseconds, and a receiver stalled that long (measured: stopped for 0.6 s on
    // a loaded host) was removed although alive, and then failed.
    c.max_silent_polls = match s.prmp.silent_polls {
        0 => u32::MAX,
        k => k,
    };
    c.min_rto = s.rto;
    c.queue_limit = QUEUE_LIMIT;
    // Check here: the agent refuses bad values with a reason.
    prmp::Sender::new(c.clone()).map_err(bad)?;
    Ok(c)
}

pub struct Prmp;

impl NetProtocol for Prmp {
    /// A DATAPOLL names the children it polls.
    fn data_fields(&self, receivers: usize) -> usize {
        26 + 4 * receivers.min(prmp::MAX_POLL_CLD)
    }

    fn check(&self, s: &SenderSettings) -> Result<(), NetError> {
        prmp_config(s, &[]).map(|_| ())
    }

    fn window_use(&self) -> WindowUse {
        WindowUse::Announced
    }

    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        let agent = prmp::Sender::new(prmp_config(s, &start.ids())?)
            .map_err(|e| NetError::setup(format!("prmp: {e}")))?;
        Started::plain(agent)
    }

    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        let mut c = prmp::ReceiverConfig::new(NodeId(me.node), u64::from(a.window()?));
        c.session = me.session;
        Received::plain(prmp::Receiver::new(c))
    }
}
