//! `norm`'s deployment: its roles on a layout, and its adapter for drivers.

use super::{wire, CcReceiver, CcSender, Params, Receiver, ReceiverConfig, Sender, SenderConfig};
use crate::deploy::{role, DeployError, Deployable, FromParams, Layout};
use crate::spec::Values;
use crate::NodeId;

/// Every role of one NORM session.
pub type Deployment = crate::deploy::Deployment<SenderConfig, ReceiverConfig>;

/// NORM on `layout`: the sender at the source, a receiver at each member; the source is a
/// member of the data group (receivers multicast their NACKs there).
///
/// Two settings come from the group, as a libnorm application sets them:
/// * the acking nodes ([`acking_nodes`]): every receiver up to the [`wire::MAX_ACKING`] one
///   ACK REQ names, else that many spread evenly over the group;
/// * the group size estimate (`NormSetGroupSize`): the configured `gsize`, or the group's
///   size where it is larger. RFC 5740 §5.3 makes the estimate what keeps the back-off's
///   early draws few; below the group's size each NACK and probe answer comes from many.
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Deployment {
    let mut source = SenderConfig::from_params(p, (layout.source, layout.group));
    source.receivers = acking_nodes(layout.receivers);
    let gsize = (p.gsize as f64).max(layout.receivers.len() as f64);
    let receivers = layout.receivers.iter().map(|&r| {
        let mut c = ReceiverConfig::from_params(p, (r, layout.source));
        c.group = layout.group;
        c.gsize = gsize;
        c
    });
    let mut d = Deployment::hosts(source, receivers.collect());
    d.groups.push((layout.group, layout.members()));
    d
}

/// The sender's acking nodes among `receivers`: all of them if one ACK REQ can name them
/// ([`wire::MAX_ACKING`]), else that many, spread evenly (every `n / MAX_ACKING`-th).
///
/// libnorm acks only the nodes the application names (none by default: the sender then ends
/// after its flush rounds), and each round's ACK REQ names the pending ones that fit one
/// segment. Naming 10^6 receivers would take thousands of rounds, each a multicast to the
/// whole group; a few named receivers spread over the group stand for it, as an application
/// naming its acking nodes would choose them. The others recover the same repairs but are not
/// asked for a watermark ACK: the sender completes once the named ones hold the data.
pub fn acking_nodes(receivers: &[NodeId]) -> Vec<NodeId> {
    let n = receivers.len();
    if n <= wire::MAX_ACKING {
        return receivers.to_vec();
    }
    (0..wire::MAX_ACKING)
        .filter_map(|i| receivers.get(i * n / wire::MAX_ACKING))
        .copied()
        .collect()
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
