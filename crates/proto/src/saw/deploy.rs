//! `saw`'s typed parameters and its roles on a [`Layout`]: the sender at the source, a
//! receiver at every receiver.

use super::spec;
use super::{Receiver, ReceiverConfig, RetransmitMode, Sender, SenderConfig};
use crate::deploy::{role, DeployError, Deployable, Layout};
use crate::spec::{ms, typed_params, Values};
use core::time::Duration;

typed_params! {
    /// `saw`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's defaults.
    Params from spec::PARAMS {
        /// Retransmission timeout.
        timeout: Duration = ms("timeout_ms") or ms(spec::TIMEOUT_MS),
        /// Multicast or unicast retransmission.
        mode: RetransmitMode = choice("mode", mode) or RetransmitMode::Multicast,
        /// Retransmissions of one message before it is given up (`None`: no limit).
        max_retransmissions: Option<u32> = limit("max_retransmissions") or None,
        /// Upper bound of each receiver's random ACK delay.
        ack_delay_max: Duration = ms("ack_delay_max_ms") or ms(spec::ACK_DELAY_MAX_MS),
        /// Messages the sender queues behind the outstanding one.
        queue_limit: usize = whole("queue_limit") or spec::QUEUE_LIMIT,
    }
}

/// The retransmission mode called `w` (the spec row's words).
fn mode(w: &str) -> Option<RetransmitMode> {
    match w {
        "multicast" => Some(RetransmitMode::Multicast),
        "unicast" => Some(RetransmitMode::Unicast),
        _ => None,
    }
}

/// Every role of one `saw` connection.
pub type Deployment = crate::deploy::Deployment<SenderConfig, ReceiverConfig>;

/// `saw` on `layout`: the sender at the source, serving every receiver.
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Deployment {
    let mut cfg = SenderConfig::new(
        layout.source,
        layout.group,
        layout.receivers.to_vec(),
        p.timeout,
    );
    cfg.mode = p.mode;
    cfg.max_retransmissions = p.max_retransmissions;
    cfg.queue_limit = p.queue_limit;
    let receivers = layout
        .receivers
        .iter()
        .map(|&r| {
            let mut rc = ReceiverConfig::new(r);
            rc.ack_delay_max = p.ack_delay_max;
            rc
        })
        .collect();
    Deployment::hosts(cfg, receivers)
}

/// `saw` for a driver's adapter ([`Deployable`]).
#[derive(Debug, Clone, Copy)]
pub struct Saw;

impl Deployable for Saw {
    type Params = Params;
    type Deployment = Deployment;
    fn read<V: Values + ?Sized>(values: &mut V) -> Result<Params, V::Error> {
        Params::read(values)
    }
    fn deploy(layout: &Layout<'_>, p: &Params) -> Result<Deployment, DeployError> {
        Ok(deploy(layout, p))
    }
}

role!(SenderConfig => dyn Agent, |c, _rng| Sender::new(c));
role!(ReceiverConfig => dyn Agent, |c, rng| {
    let r = rng(c.node, 0);
    Receiver::new(c, r)
});
