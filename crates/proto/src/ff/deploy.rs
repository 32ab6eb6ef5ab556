//! `ff`'s typed parameters and its roles on a [`Layout`]: the sender at the source, a
//! receiver at every receiver. (FF-IW-IT, FF-IW without the implosion queue, is the driver's
//! receive queue at the source, not a parameter here.)

use super::spec;
use super::{Receiver, ReceiverConfig, Sender, SenderConfig};
use crate::deploy::{role, Built, DeployError, Deployable, Layout};
use crate::spec::{ms, typed_params, Values};
use core::time::Duration;

typed_params! {
    /// `ff`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's defaults.
    Params from spec::PARAMS {
        /// Window `S`: the sender's window and the receivers' buffer.
        window: u64 = int("window") or spec::WINDOW,
        /// The gap between two transmissions of the sender.
        ipg: Duration = ms("ipg_ms") or ms(spec::IPG_MS),
        /// RTT assumed before the first measurement.
        initial_rtt: Duration = ms("initial_rtt_ms") or ms(spec::INITIAL_RTT_MS),
    }
}

/// Every role of one `ff` connection: the sender (built: its constructor checks the window).
pub type Deployment = crate::deploy::Deployment<Built<Sender>, ReceiverConfig>;

/// `ff` on `layout` (seed 004's full-feedback baseline; FF-IW with a large `window`); an
/// error on `window` where the sender refuses it.
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Result<Deployment, DeployError> {
    let mut c = SenderConfig::new(layout.source, layout.group, layout.receivers.to_vec());
    c.window = p.window;
    c.ipg = p.ipg;
    c.initial_rtt = p.initial_rtt;
    let agent = Sender::new(c).map_err(|e| DeployError::new("window", e.to_string()))?;
    let receivers = layout
        .receivers
        .iter()
        .map(|&r| ReceiverConfig::new(r, p.window))
        .collect();
    Ok(Deployment::hosts(
        Built {
            node: layout.source,
            agent,
        },
        receivers,
    ))
}

/// `ff` for a driver's adapter ([`Deployable`]).
#[derive(Debug, Clone, Copy)]
pub struct Ff;

impl Deployable for Ff {
    type Params = Params;
    type Deployment = Deployment;
    fn read<V: Values + ?Sized>(values: &mut V) -> Result<Params, V::Error> {
        Params::read(values)
    }
    fn deploy(layout: &Layout<'_>, p: &Params) -> Result<Deployment, DeployError> {
        deploy(layout, p)
    }
}

role!(ReceiverConfig => dyn Agent, |c, _rng| Receiver::new(c));
