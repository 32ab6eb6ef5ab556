//! `norm`'s deployment: its roles on a layout, and its adapter for drivers.

use super::{CcReceiver, CcSender, Params, Receiver, ReceiverConfig, Sender, SenderConfig};
use crate::deploy::{role, DeployError, Deployable, FromParams, Layout};
use crate::spec::Values;

/// Every role of one NORM session.
pub type Deployment = crate::deploy::Deployment<SenderConfig, ReceiverConfig>;

/// NORM on `layout`: the sender at the source, acked by every receiver; a receiver at each;
/// the source is a member of the data group (receivers multicast their NACKs there).
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Deployment {
    let mut source = SenderConfig::from_params(p, (layout.source, layout.group));
    source.receivers = layout.receivers.to_vec();
    let receivers = layout.receivers.iter().map(|&r| {
        let mut c = ReceiverConfig::from_params(p, (r, layout.source));
        c.group = layout.group;
        c
    });
    let mut d = Deployment::hosts(source, receivers.collect());
    d.groups.push((layout.group, layout.members()));
    d
}

role!(SenderConfig => boxed dyn Agent, |c, _rng| match c.cc {
    Some(cc) => Box::new(CcSender::new(Sender::new(c), cc)),
    None => Box::new(Sender::new(c)),
});
role!(ReceiverConfig => boxed dyn Agent, |c, rng| {
    let r = rng(c.node, 0);
    match c.cc {
        Some(cc) => {
            let fb = rng(c.node, 1);
            Box::new(CcReceiver::new(Receiver::new(c, r), cc, fb))
        }
        None => Box::new(Receiver::new(c, r)),
    }
});

/// `norm` for a driver's adapter ([`Deployable`]).
#[derive(Debug, Clone, Copy)]
pub struct Norm;

impl Deployable for Norm {
    type Params = Params;
    type Deployment = Deployment;
    fn read<V: Values + ?Sized>(values: &mut V) -> Result<Params, V::Error> {
        Params::read(values)
    }
    fn deploy(layout: &Layout<'_>, p: &Params) -> Result<Deployment, DeployError> {
        Ok(deploy(layout, p))
    }
}
