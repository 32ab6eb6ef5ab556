//! `xtp`'s typed parameters and its roles on a [`Layout`]: the sender at the source, a
//! receiver at every receiver. Most settings come from a preset
//! ([`SenderConfig::thesis`] or [`SenderConfig::improved`]); every other key the driver
//! gives overrides one field of it.

use super::spec;
use super::{Receiver, ReceiverConfig, Retransmission, Sender, SenderConfig};
use crate::deploy::{role, DeployError, Deployable, Layout};
use crate::spec::{ms, typed_params, Values};

/// The sender configuration a scenario starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Preset {
    /// Go-back-N, uncapped WTIMER back-off, block on ack ([`SenderConfig::thesis`]).
    Thesis,
    /// Selective repeat, back-off capped at 1 s, an SREQ every 8 packets
    /// ([`SenderConfig::improved`]).
    Improved,
}

fn preset(w: &str) -> Option<Preset> {
    match w {
        "thesis" => Some(Preset::Thesis),
        "improved" => Some(Preset::Improved),
        _ => None,
    }
}

fn retx(w: &str) -> Option<Retransmission> {
    match w {
        "gbn" | "go-back-n" => Some(Retransmission::GoBackN),
        "selective" => Some(Retransmission::Selective),
        _ => None,
    }
}

typed_params! {
    /// `xtp`'s parameters ([`spec::PARAMS`], typed): the preset, and each field it sets
    /// unless the driver gives a value (`None`: the preset's); `Default` is the spec's.
    Params from spec::PARAMS {
        /// The preset.
        preset: Preset = choice("preset", preset) or Preset::Thesis,
        /// Go-back-N or selective repeat.
        retx: Option<Retransmission> = opt_choice("retx", retx) or None,
        /// Multicast, or unicast to a single receiver.
        multicast: bool = switch("multicast") or true,
        /// Error control on.
        error_control: Option<bool> = opt_switch("error_control") or None,
        /// Flow control on.
        flow_control: Option<bool> = opt_switch("flow_control") or None,
        /// Rate control, bit/s (0: off).
        rate_bps: Option<u64> = opt_int("rate_bps") or None,
        /// Data bytes per packet.
        maxdata: Option<u64> = opt_int("maxdata") or None,
        /// Window, packets.
        window: Option<u64> = opt_int("window") or None,
        /// Each write waits until every receiver holds it.
        block_on_ack: Option<bool> = opt_switch("block_on_ack") or None,
        /// FIRST+SREQ group set-up.
        first_sreq: Option<bool> = opt_switch("first_sreq") or None,
        /// FASTNAK.
        fastnak: Option<bool> = opt_switch("fastnak") or None,
        /// An SREQ every this many packets (0: only at window ends).
        sreq_every: Option<u64> = opt_int("sreq_every") or None,
        /// WTIMER's initial and smallest value, ms.
        wtimer_ms: Option<f64> = opt_real("wtimer_ms") or None,
        /// WTIMER's back-off cap, ms (0: uncapped).
        wtimer_cap_ms: Option<f64> = opt_real("wtimer_cap_ms") or None,
        /// Coalesce small writes into full packets.
        coalesce: Option<bool> = opt_switch("coalesce") or None,
        /// CTIMEOUT, s.
        ctimeout_s: f64 = real("ctimeout_s") or spec::CTIMEOUT_S,
        /// A receiver's buffer, packets.
        buffer: usize = size("buffer") or spec::BUFFER as usize,
    }
}

impl Params {
    /// The sender's configuration at `layout`'s source: the preset with the overrides.
    pub fn sender(&self, layout: &Layout<'_>) -> SenderConfig {
        let (node, group, rx) = (layout.source, layout.group, layout.receivers.to_vec());
        let mut cfg = match self.preset {
            Preset::Thesis => SenderConfig::thesis(node, group, rx, self.multicast),
            Preset::Improved => SenderConfig::improved(node, group, rx, self.multicast),
        };
        cfg.retx = self.retx.unwrap_or(cfg.retx);
        cfg.error_control = self.error_control.unwrap_or(cfg.error_control);
        cfg.flow_control = self.flow_control.unwrap_or(cfg.flow_control);
        if let Some(bps) = self.rate_bps {
            cfg.rate = bps / 8;
        }
        if let Some(m) = self.maxdata {
            cfg.maxdata = m as usize;
        }
        if let Some(w) = self.window {
            cfg.window = w as u32;
        }
        cfg.block_on_ack = self.block_on_ack.unwrap_or(cfg.block_on_ack);
        cfg.first_sreq = self.first_sreq.unwrap_or(cfg.first_sreq);
        cfg.fastnak = self.fastnak.unwrap_or(cfg.fastnak);
        cfg.coalesce = self.coalesce.unwrap_or(cfg.coalesce);
        if let Some(n) = self.sreq_every {
            cfg.sreq_every = (n > 0).then_some(n.min(u64::from(u32::MAX)) as u32);
        }
        if let Some(w) = self.wtimer_ms {
            cfg.wtimer.initial = ms(w);
            cfg.wtimer.min = ms(w);
        }
        if let Some(c) = self.wtimer_cap_ms {
            cfg.wtimer.cap = (c > 0.0).then(|| ms(c));
        }
        cfg.ctimeout = ms(self.ctimeout_s * 1000.0);
        cfg
    }
}

/// Every role of one XTP connection.
pub type Deployment = crate::deploy::Deployment<SenderConfig, ReceiverConfig>;

/// XTP on `layout` (seed 002); an error on `multicast` for unicast to other than exactly one
/// receiver.
pub fn deploy(layout: &Layout<'_>, p: &Params) -> Result<Deployment, DeployError> {
    if !p.multicast && layout.receivers.len() != 1 {
        return Err(DeployError::new(
            "multicast",
            "true unless the scenario has exactly one receiver",
        ));
    }
    let receivers = layout
        .receivers
        .iter()
        .map(|&r| {
            let mut rc = ReceiverConfig::new(r);
            rc.buffer = p.buffer;
            rc
        })
        .collect();
    Ok(Deployment::hosts(p.sender(layout), receivers))
}

/// `xtp` for a driver's adapter ([`Deployable`]).
#[derive(Debug, Clone, Copy)]
pub struct Xtp;

impl Deployable for Xtp {
    type Params = Params;
    type Deployment = Deployment;
    fn read<V: Values + ?Sized>(values: &mut V) -> Result<Params, V::Error> {
        Params::read(values)
    }
    fn deploy(layout: &Layout<'_>, p: &Params) -> Result<Deployment, DeployError> {
        deploy(layout, p)
    }
}

role!(SenderConfig => dyn Agent, |c, _rng| Sender::new(c));
role!(ReceiverConfig => dyn Agent, |c, _rng| Receiver::new(c));
