//! `pgm`'s typed parameters and its roles on a [`Layout`]: the source, a receiver per
//! receiver, a network element on every router of the layout.

use super::{NeConfig, NetworkElement, Receiver, ReceiverConfig, Source, SourceConfig};
use crate::deploy::{role, Layout};
use crate::spec::{ms, period, pgm as spec, Reader, Values};
use crate::{GroupId, NodeId};
use core::time::Duration;

/// `pgm`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// Upper bound of a receiver's random NAK back-off.
    pub nak_backoff: Duration,
    /// A NAK is repeated when no NCF arrives within this.
    pub nak_repeat: Duration,
    /// A NAK is repeated when no RDATA follows its NCF within this.
    pub nak_rdata: Duration,
    /// The source's delay before answering NAKs.
    pub repair_delay: Duration,
    /// After answering a NAK the source ignores NAKs for the same packet this long.
    pub rdata_holdoff: Duration,
    /// Interval of the source's SPMs (`None`: none).
    pub spm_interval: Option<Duration>,
    /// How long a network element keeps repair state.
    pub state_lifetime: Duration,
    /// How long the source keeps answering after the last data.
    pub linger: Duration,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            nak_backoff: ms(spec::NAK_BACKOFF_MS),
            nak_repeat: ms(spec::NAK_REPEAT_MS),
            nak_rdata: ms(spec::NAK_RDATA_MS),
            repair_delay: ms(spec::REPAIR_DELAY_MS),
            rdata_holdoff: ms(spec::RDATA_HOLDOFF_MS),
            spm_interval: period(spec::SPM_INTERVAL_MS),
            state_lifetime: ms(spec::STATE_LIFETIME_MS),
            linger: ms(spec::LINGER_MS),
        }
    }
}

impl Params {
    /// The parameters `values` give, row by row (the scenario keys of [`spec::PARAMS`]).
    pub fn read<V: Values>(values: &mut V) -> Result<Self, V::Error> {
        let mut r = Reader::new(spec::PARAMS, values);
        Ok(Params {
            nak_backoff: r.ms("nak_backoff_ms")?,
            nak_repeat: r.ms("nak_repeat_ms")?,
            nak_rdata: r.ms("nak_rdata_ms")?,
            repair_delay: r.ms("repair_delay_ms")?,
            rdata_holdoff: r.ms("rdata_holdoff_ms")?,
            spm_interval: r.period("spm_interval_ms")?,
            state_lifetime: r.ms("state_lifetime_ms")?,
            linger: r.ms("linger_ms")?,
        })
    }

    /// The source at `node` sending to `group`.
    pub fn source(&self, node: NodeId, group: GroupId) -> SourceConfig {
        SourceConfig {
            node,
            group,
            session: 0,
            spm_interval: self.spm_interval,
            repair_delay: self.repair_delay,
            rdata_holdoff: self.rdata_holdoff,
            linger: self.linger,
            txw: None,
        }
    }

    /// A receiver at `node` of `source`'s data.
    pub fn receiver(&self, node: NodeId, source: NodeId) -> ReceiverConfig {
        ReceiverConfig {
            node,
            source,
            session: 0,
            nak_backoff: self.nak_backoff,
            nak_repeat: self.nak_repeat,
            nak_rdata: self.nak_rdata,
            window: 1 << 16,
        }
    }

    /// A network element at router `node` for `group`.
    pub fn element(&self, node: NodeId, group: GroupId) -> NeConfig {
        NeConfig {
            node,
            group,
            session: 0,
            state_lifetime: self.state_lifetime,
        }
    }
}

/// Every role of one PGM connection: the source, the receivers, a network element per router.
pub type Deployment = crate::deploy::Deployment<SourceConfig, ReceiverConfig, NeConfig>;

/// PGM on `layout`: the source, its receivers (NAKs go to the source), and a network element
/// on every router of the layout. PGM needs no group beyond the data's.
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Deployment {
    Deployment::lay_out(
        layout,
        |node, group| p.source(node, group),
        |node, source| p.receiver(node, source),
        |site, group| p.element(site.node, group),
    )
}

role!(SourceConfig => dyn Agent, |c, _rng| Source::new(c));
role!(ReceiverConfig => dyn Agent, |c, rng| {
    let r = rng(c.node, 0);
    Receiver::new(c, r)
});
role!(NeConfig => dyn RouterAgent, |c, _rng| NetworkElement::new(c));
