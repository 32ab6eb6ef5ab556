//! `xtp` — XTP-style transmitter-driven multicast (seed 002: Johnstone & Williams 1997, who
//! measured SandiaXTP, an implementation of XTP 4.0; digest §1, §5.1).
//!
//! **Transmitter-driven.** Receivers speak when the sender asks: every packet carrying the
//! SREQ option makes each receiver answer with a CNTL status (its `rseq` — every packet below
//! it held —, its allocation and the spans it holds above `rseq`), echoing the request's
//! `sync` number. The only unsolicited feedback is FASTNAK: with the FASTNAK option a receiver
//! reports a gap the moment it sees one (once per `rseq` value).
//!
//! **Group set-up.** The sender opens the association with a FIRST packet (traffic spec:
//! service, retransmission scheme, packet size, rate, window). With SREQ on FIRST (the
//! thesis's `-f`), data waits until every receiver has answered: that is how "the transmitter
//! knows the receivers are active". The sender keeps one *auxiliary context* per receiver
//! (its last status); the send window advances only when **every** receiver holds the data, so
//! the slowest receiver governs.
//!
//! **User writes.** [`SenderAgent::send`](crate::SenderAgent::send) is one user write; it is split
//! into packets of at most [`SenderConfig::maxdata`] bytes (default [`MAX_DATA_ETHERNET`] = 1448),
//! the last marked EOM. With [`SenderConfig::block_on_ack`] (the thesis's `-g`) the last packet of
//! each write carries SREQ and the next write is refused
//! ([`SenderAgent::can_send`](crate::SenderAgent::can_send) false) until every receiver holds it.
//! With [`SenderConfig::coalesce`] small queued writes share one packet (RECS). Packet sequence
//! numbers count packets (XTP 4.0 counts bytes).
//!
//! **Error control.** Go-back-N ([`Retx::GoBackN`], the thesis's setting): a FASTNAK or a
//! status showing `rseq < sent` makes the sender resend everything from `rseq` on. Selective
//! ([`Retx::Selective`], the thesis's recommendation): only the packets missing between `rseq`
//! and the end, per the receiver's spans. Packets are resent as stored (a write's last packet
//! keeps its SREQ). A packet retransmitted less than one smoothed RTT ago is not queued again
//! for the same report (the report may predate that retransmission).
//!
//! **WTIMER and the synchronizing handshake.** Every SREQ sent arms WTIMER at
//! `base · 2^k`, where `base` = max([`WtimerConfig::min`], 2 · SRTT) (before any RTT sample,
//! [`WtimerConfig::initial`]) and `k` is the back-off count, optionally capped at
//! [`WtimerConfig::cap`]. An SREQ opens a *status round*; when every receiver has answered
//! it, WTIMER stops. When it expires the sender enters the **synchronizing handshake**: it
//! multicasts a CNTL with SREQ (carrying its next sequence number, so receivers learn of lost
//! tails), sends **no data** until every receiver has answered, increments `k` and re-arms
//! WTIMER. The handshake's requests repeat the round's: a receiver that answered any of them
//! has answered (every answer carries its whole state), so with many receivers behind lossy
//! links the round is not restarted by each retry (issue 61). `k` counts back-to-back
//! expiries: it returns to 0 when a status round completes. RTT samples come only from
//! answers to an SREQ carried by a packet's *first* transmission (Karn's rule) that WTIMER
//! has not repeated yet.
//!
//! **CTIMEOUT.** A watchdog (default 60 s, SandiaXTP's value) armed when a synchronizing
//! handshake starts and stopped when it completes. If it expires the association is aborted:
//! every unfinished write is reported failed ([`Event::MessageDone`] with `failed`), further
//! writes are refused, and [`Event::Completed`] follows
//! [`SenderAgent::close`](crate::SenderAgent::close).
//!
//! **Orthogonal switches.** Error control ([`SenderConfig::error_control`]; off = unreliable
//! multicast or unicast datagrams: no SREQ, no retransmission, writes finish when sent,
//! receivers deliver complete writes and skip gaps), flow control
//! ([`SenderConfig::flow_control`]: respect the receivers' `alloc`) and rate control
//! ([`SenderConfig::rate`], a [`Pacer`]) switch independently. [`SenderConfig::multicast`]
//! off sends everything unicast to the one receiver.
//!
//! **Late join.** A receiver that sees the association first through a DATA or a handshake
//! CNTL starts there (no back-fill); it discards the rest of a write it joined in the middle
//! of and numbers its deliveries from 0. With [`SenderConfig::accept_joins`] the sender adds
//! a receiver whose status arrives unannounced to its group, waiting for it from its `rseq`
//! — unless that lies below what every other receiver acknowledged (released, beyond repair):
//! such a joiner is not waited for, and never stalls the others.
//!
//! **Choices where the thesis is silent** (digest §5.3): WTIMER minimum 100 ms — the
//! thesis's Appendix implies about 0.1 s per lost single-packet write (1 MB, 64-B writes,
//! 1/10 loss: 245 s against 78 s for ≈1,600 losses); back-off factor 2; window 64 packets;
//! receiver buffer 256 packets; at most [`MAX_SPANS`] spans per status (the lowest ones).

mod deploy;
mod receiver;
mod sender;
pub mod spec;
#[cfg(test)]
mod tests;

pub use deploy::{deploy, Deployment, Params, Preset, Xtp};

pub use receiver::{Receiver, ReceiverConfig};
pub use sender::{Sender, XtpCounters};

use crate::pacing::Pacer;
use crate::retx::RetransmitBuffer;
use crate::roster::SenderIdentity;
use crate::rtt::{RttConfig, RttEstimator};
use crate::sendq::SendQueue;
use crate::timer::TimerSet;
use crate::window::SeqWindow;
use crate::{Agent, Dest, Event, GroupId, NodeId, Outbox, SendError, Time};
use bytes::Bytes;
use core::time::Duration;
use rmcast_wire::xtp::{self as wire, opt, Retx, Service, Span, Spans, Status, TrafficSpec};
use rmcast_wire::{Envelope, Message};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

pub use rmcast_wire::xtp::{Retx as Retransmission, MAX_DATA_ETHERNET, MAX_SPANS, XTP_HEADER_LEN};

/// SandiaXTP's CTIMEOUT (thesis Ch. V §A.2.a).
pub const CTIMEOUT_SANDIA: Duration = Duration::from_secs(60);
/// Largest user write one [`SenderAgent::send`](crate::SenderAgent::send) accepts.
pub const MAX_WRITE: usize = 16 * 1024 * 1024;

/// WTIMER parameters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WtimerConfig {
    /// Before the first RTT sample.
    pub initial: Duration,
    /// Lower bound of the base value.
    pub min: Duration,
    /// Largest WTIMER value; `None` = uncapped exponential back-off.
    pub cap: Option<Duration>,
}

impl Default for WtimerConfig {
    fn default() -> Self {
        WtimerConfig {
            initial: Duration::from_millis(100),
            min: Duration::from_millis(100),
            cap: None,
        }
    }
}

impl WtimerConfig {
    /// WTIMER after `k` back-offs from `base`: `base · 2^k`, capped if a cap is set,
    /// saturating at one day.
    pub fn value(&self, base: Duration, k: u32) -> Duration {
        let day = Duration::from_secs(86_400);
        let v = base.checked_mul(1u32 << k.min(31)).unwrap_or(day).min(day);
        match self.cap {
            Some(c) => v.min(c.max(base.min(c))),
            None => v,
        }
    }
}

/// Sender parameters.
#[derive(Debug, Clone)]
pub struct SenderConfig {
    /// Who the sender is and whom it serves; its fields read as `cfg.node`, `cfg.session`,
    /// `cfg.group` and `cfg.receivers`.
    pub id: SenderIdentity,
    /// Multicast to `group` (true) or unicast to the single receiver.
    pub multicast: bool,
    /// Reliability: SREQ/CNTL, retransmission, WTIMER, CTIMEOUT. Off = unreliable.
    pub error_control: bool,
    /// Respect the receivers' allocation.
    pub flow_control: bool,
    /// Rate control in bytes per second; 0 = off.
    pub rate: u64,
    /// Go-back-N or selective repeat.
    pub retx: Retx,
    /// Largest data per packet.
    pub maxdata: usize,
    /// Send window in packets (unacknowledged by the slowest receiver).
    pub window: u32,
    /// `-g`: SREQ on each write's last packet, next write only when all receivers hold it.
    pub block_on_ack: bool,
    /// `-f`: FIRST carries SREQ and data waits for every receiver's answer.
    pub first_sreq: bool,
    /// `-F`: receivers send FASTNAK on a gap.
    pub fastnak: bool,
    /// Periodic SREQ every this many new packets (the thesis's "more status requests").
    pub sreq_every: Option<u32>,
    /// WTIMER: base, back-off and cap.
    pub wtimer: WtimerConfig,
    /// CTIMEOUT: the connection is aborted after this long without progress.
    pub ctimeout: Duration,
    /// Pack small queued writes into one packet.
    pub coalesce: bool,
    /// Add receivers whose status arrives unannounced (late join).
    pub accept_joins: bool,
    /// Writes [`SenderAgent::send`](crate::SenderAgent::send) queues before `Full` (when not
    /// blocking on acknowledgment).
    pub queue_limit: usize,
}

crate::roster::embeds_sender_identity!(SenderConfig);

impl SenderConfig {
    /// The thesis's configuration (digest §5.2 common setup): reliable multicast (unicast
    /// when `multicast` is false), FIRST with SREQ, block on acknowledgment, FASTNAK,
    /// go-back-N, uncapped exponential WTIMER back-off, CTIMEOUT 60 s, no periodic SREQ.
    pub fn thesis(node: NodeId, group: GroupId, receivers: Vec<NodeId>, multicast: bool) -> Self {
        SenderConfig {
            id: SenderIdentity::new(node, group, receivers),
            multicast,
            error_control: true,
            flow_control: true,
            rate: 0,
            retx: Retx::GoBackN,
            maxdata: MAX_DATA_ETHERNET,
            window: 64,
            block_on_ack: true,
            first_sreq: true,
            fastnak: true,
            sreq_every: None,
            wtimer: WtimerConfig::default(),
            ctimeout: CTIMEOUT_SANDIA,
            coalesce: false,
            accept_joins: false,
            queue_limit: 64,
        }
    }

    /// The thesis's recommendations applied (Ch. V §B.2.a): selective retransmission,
    /// WTIMER back-off capped at 1 s, an SREQ every 8 packets. CTIMEOUT stays 60 s.
    pub fn improved(node: NodeId, group: GroupId, receivers: Vec<NodeId>, multicast: bool) -> Self {
        SenderConfig {
            retx: Retx::Selective,
            wtimer: WtimerConfig {
                cap: Some(Duration::from_secs(1)),
                ..WtimerConfig::default()
            },
            sreq_every: Some(8),
            ..Self::thesis(node, group, receivers, multicast)
        }
    }

    fn service(&self) -> Service {
        match (self.multicast, self.error_control) {
            (true, true) => Service::ReliableMulticast,
            (true, false) => Service::UnreliableMulticast,
            (false, true) => Service::ReliableUnicast,
            (false, false) => Service::UnreliableUnicast,
        }
    }

    fn base_options(&self) -> u16 {
        let mut o = 0;
        if self.multicast {
            o |= opt::MULTI;
        }
        if !self.error_control {
            o |= opt::NOERR;
        }
        if !self.flow_control {
            o |= opt::NOFLOW;
        }
        if self.fastnak && self.error_control {
            o |= opt::FASTNAK;
        }
        o
    }
}
