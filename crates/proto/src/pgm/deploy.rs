//! `pgm`'s typed parameters and its roles on a [`Layout`]: the source, a receiver per
//! receiver, a network element on every router of the layout.

use super::spec;
use super::{NeConfig, NetworkElement, Receiver, ReceiverConfig, Source, SourceConfig};
use crate::deploy::{
    role, DeployError, Deployable, FromParams, Layout, Needs, RouterSite, Routers,
};
use crate::spec::{ms, period, typed_params, Values};
use crate::GroupId;
use core::time::Duration;

typed_params! {
    /// `pgm`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's defaults.
    Params from spec::PARAMS {
        /// Upper bound of a receiver's random NAK back-off.
        nak_backoff: Duration = ms("nak_backoff_ms") or ms(spec::NAK_BACKOFF_MS),
        /// A NAK is repeated when no NCF arrives within this.
        nak_repeat: Duration = ms("nak_repeat_ms") or ms(spec::NAK_REPEAT_MS),
        /// A NAK is repeated when no RDATA follows its NCF within this.
        nak_rdata: Duration = ms("nak_rdata_ms") or ms(spec::NAK_RDATA_MS),
        /// The source's delay before answering NAKs.
        repair_delay: Duration = ms("repair_delay_ms") or ms(spec::REPAIR_DELAY_MS),
        /// After answering a NAK the source ignores NAKs for the same packet this long.
        rdata_holdoff: Duration = ms("rdata_holdoff_ms") or ms(spec::RDATA_HOLDOFF_MS),
        /// Interval of the source's SPMs (`None`: none).
        spm_interval: Option<Duration> = period("spm_interval_ms") or period(spec::SPM_INTERVAL_MS),
        /// How long a network element keeps repair state.
        state_lifetime: Duration = ms("state_lifetime_ms") or ms(spec::STATE_LIFETIME_MS),
        /// A network element discards a repeat NAK only this long after forwarding one
        /// (`None`: while its repair state lives).
        nak_elim: Option<Duration> = period("nak_elim_ms") or period(spec::NAK_ELIM_MS),
        /// How long the source keeps answering after the last data.
        linger: Duration = ms("linger_ms") or ms(spec::LINGER_MS),
        /// Floor of the receivers' adaptive NAK timers (`None`: the fixed timers).
        nak_rto_min: Option<Duration> = period("nak_rto_min_ms") or period(spec::NAK_RTO_MIN_MS),
        /// Most sequence numbers in one NAK (1: a NAK per loss).
        nak_list: u16 = small("nak_list") or spec::NAK_LIST as u16,
        /// Ask again at once for a loss whose repair was overtaken.
        nak_overtaken: bool = switch("nak_overtaken") or spec::NAK_OVERTAKEN,
        /// FEC: source packets per block (0: off).
        fec_k: u16 = small("fec_k") or spec::FEC_K as u16,
        /// FEC: parity symbols sent unasked after each whole block (0: none).
        fec_proactive: u16 = small("fec_proactive") or spec::FEC_PROACTIVE as u16,
        /// Congestion control (TFMCC) on.
        tfmcc: bool = switch("tfmcc") or spec::TFMCC,
        /// TFMCC: the RTT assumed until one is measured.
        tfmcc_initial_rtt: Duration = ms("tfmcc_initial_rtt_ms") or ms(spec::TFMCC_INITIAL_RTT_MS),
    }
}

/// Why a proactive parity count does not fit the FEC blocks ([`check_proactive`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProactiveError {
    /// Proactive parity without FEC blocks (`fec_k` 0).
    NoBlocks,
    /// More than the `max` parity indices a block has.
    TooMany {
        /// The block's parity indices, 256 − `fec_k`.
        max: usize,
    },
}

/// The rule between `fec_k` and `fec_proactive` that their ranges cannot say: proactive
/// parity is sent per FEC block, and a block has at most 256 − `fec_k` parity indices.
/// One rule for scenarios ([`Params::check`]) and sockets (`rmcast send`, the ANNOUNCE).
pub fn check_proactive(fec_k: u16, fec_proactive: u16) -> Result<(), ProactiveError> {
    if fec_proactive == 0 {
        return Ok(());
    }
    if fec_k == 0 {
        return Err(ProactiveError::NoBlocks);
    }
    let max = crate::fec::max_parity(usize::from(fec_k));
    if usize::from(fec_proactive) > max {
        return Err(ProactiveError::TooMany { max });
    }
    Ok(())
}

impl Params {
    /// The rule between parameters that their ranges cannot say ([`check_proactive`]).
    /// `Err` says what `fec_proactive` may be.
    pub fn check(&self) -> Result<(), String> {
        check_proactive(self.fec_k, self.fec_proactive).map_err(|e| match e {
            ProactiveError::NoBlocks => {
                "0 without fec_k (proactive parity is sent per FEC block)".into()
            }
            ProactiveError::TooMany { max } => format!(
                "at most {max}, the parity indices a block of fec_k {} has",
                self.fec_k
            ),
        })
    }
}

/// A network element needs only its router's node: it keeps repair state per interface a
/// NAK came in on.
impl FromParams<Params, (&RouterSite, GroupId)> for NeConfig {
    fn from_params(p: &Params, (site, group): (&RouterSite, GroupId)) -> Self {
        Self::from_params(p, (site.node, group))
    }
}

/// Every role of one PGM connection: the source, the receivers, a network element per router.
pub type Deployment = crate::deploy::Deployment<SourceConfig, ReceiverConfig, NeConfig>;

/// PGM on `layout`: the source, its receivers (NAKs go to the source), and a network element
/// on every router of the layout. PGM needs no group beyond the data's.
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Deployment {
    Deployment::lay_out(layout, p)
}

role!(SourceConfig => boxed dyn Agent, |c, _rng| match c.cc {
    Some(cc) => Box::new(super::PacedSource::new(Source::new(c), cc)),
    None => Box::new(Source::new(c)),
});
role!(ReceiverConfig => boxed dyn Agent, |c, rng| {
    let r = rng(c.node, 0);
    match c.cc {
        Some(cc) => {
            let fb = rng(c.node, 1);
            Box::new(super::FeedbackReceiver::new(Receiver::new(c, r), cc, fb))
        }
        None => Box::new(Receiver::new(c, r)),
    }
});
role!(NeConfig => dyn RouterAgent, |c, _rng| NetworkElement::new(c));

/// `pgm` for a driver's adapter ([`Deployable`]): a network element on every router.
#[derive(Debug, Clone, Copy)]
pub struct Pgm;

impl Deployable for Pgm {
    type Params = Params;
    type Deployment = Deployment;
    fn read<V: Values + ?Sized>(values: &mut V) -> Result<Params, V::Error> {
        Params::read(values)
    }
    fn needs(_: &Params) -> Needs {
        Needs {
            routers: Routers::All,
            ..Needs::default()
        }
    }
    fn deploy(layout: &Layout<'_>, p: &Params) -> Result<Deployment, DeployError> {
        p.check()
            .map_err(|why| DeployError::new("fec_proactive", why))?;
        Ok(deploy(layout, p))
    }
}
