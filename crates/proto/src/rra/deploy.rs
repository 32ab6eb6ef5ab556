//! `rra`'s typed parameters and its roles on a [`Layout`]: the sender at the source, a
//! receiver at every receiver.

use super::spec;
use super::{Receiver, ReceiverConfig, Sender, SenderConfig};
use crate::deploy::{role, DeployError, Deployable, Layout};
use crate::saw::spec as saw;
use crate::spec::{ms, typed_params, Values};
use core::time::Duration;

typed_params! {
    /// `rra`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's defaults.
    Params from spec::PARAMS {
        /// Unfinished messages the sender keeps (the receivers' buffer too).
        window: usize = size("window") or spec::SOCKET_WINDOW as usize,
        /// How long the sender waits for a solicited ACK.
        timeout: Duration = ms("timeout_ms") or ms(saw::SOCKET_RTO_MS),
        /// Unanswered requests in a row before the sender gives up on a receiver (`None`: no
        /// limit).
        max_retransmissions: Option<u32> = limit("max_retransmissions") or None,
    }
}

/// Every role of one `rra` connection.
pub type Deployment = crate::deploy::Deployment<SenderConfig, ReceiverConfig>;

/// `rra` on `layout` (seed 000 Ch. 5, proposed): `window` unfinished messages, `timeout` for
/// each solicited ACK, `max_retransmissions` unanswered requests in a row.
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Deployment {
    let mut cfg = SenderConfig::new(
        layout.source,
        layout.group,
        layout.receivers.to_vec(),
        p.window,
        p.timeout,
    );
    cfg.max_retransmissions = p.max_retransmissions;
    let receivers = layout
        .receivers
        .iter()
        .map(|&r| ReceiverConfig::new(r, p.window))
        .collect();
    Deployment::hosts(cfg, receivers)
}

/// `rra` for a driver's adapter ([`Deployable`]).
#[derive(Debug, Clone, Copy)]
pub struct Rra;

impl Deployable for Rra {
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
role!(ReceiverConfig => dyn Agent, |c, _rng| Receiver::new(c));
