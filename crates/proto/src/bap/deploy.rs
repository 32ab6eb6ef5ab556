//! `bap`'s typed parameters and its roles on a [`Layout`]: the sender at the source, a
//! receiver at every receiver running its ACK-delay timer at
//! [`spec::bap_ack_timeout`] of the sender's timeout, as on sockets.

use super::spec;
use super::{Receiver, ReceiverConfig, Sender, SenderConfig};
use crate::deploy::{role, DeployError, Deployable, Layout};
use crate::saw::spec as saw;
use crate::spec::{ms, typed_params, Values};
use core::time::Duration;

typed_params! {
    /// `bap`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's defaults.
    Params from spec::PARAMS {
        /// Window `n`: messages in flight before the block acknowledgment.
        window: u16 = small("window") or spec::BAP_WINDOW,
        /// Packet timeout: the window is sent again when not acknowledged within it.
        rto: Duration = ms("rto_ms") or ms(saw::SOCKET_RTO_MS),
        /// Upper bound of each receiver's random ACK delay (BAPrand).
        ack_delay_max: Duration = ms("ack_delay_max_ms") or ms(saw::ACK_DELAY_MAX_MS),
        /// Retransmissions of one message before it is given up (`None`: no limit).
        max_retransmissions: Option<u32> = limit("max_retransmissions") or None,
    }
}

/// Every role of one `bap` connection.
pub type Deployment = crate::deploy::Deployment<SenderConfig, ReceiverConfig>;

/// `bap` on `layout` (seed 000 §2.6): window `n`, the packet timeout `rto`; receivers run
/// their ACK-delay timer at a quarter of it and delay each ACK by up to `ack_delay_max`.
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Deployment {
    let mut cfg = SenderConfig::new(
        layout.source,
        layout.group,
        layout.receivers.to_vec(),
        p.window,
        p.rto,
    );
    cfg.max_retransmissions = p.max_retransmissions;
    let ack_timeout = spec::bap_ack_timeout(p.rto);
    let receivers = layout
        .receivers
        .iter()
        .map(|&r| {
            let mut rc = ReceiverConfig::new(r, p.window, ack_timeout);
            rc.ack_delay_max = p.ack_delay_max;
            rc
        })
        .collect();
    Deployment::hosts(cfg, receivers)
}

/// `bap` for a driver's adapter ([`Deployable`]).
#[derive(Debug, Clone, Copy)]
pub struct Bap;

impl Deployable for Bap {
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
