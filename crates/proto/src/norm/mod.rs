//! `norm` — NACK-Oriented Reliable Multicast (RFC 5740, with the RFC 5401 building blocks),
//! as NRL's libnorm runs it with the settings of `bench/norm/normfile.cc`: one object (the
//! transfer, object 0) cut in segments (one application message each), blocks of `k` = 64
//! source segments, Reed–Solomon parity (RFC 5510, [`crate::fec`]) sent only on demand, up to
//! 16 per block, receivers multicasting their NACKs so that others suppress theirs.
//!
//! The sender lives in `sender.rs`, the receiver in `receiver.rs`; their shared settings,
//! parameters and the deployment here.
//!
//! * [`Sender`] multicasts each segment at once as DATA (the driver paces the rate), block =
//!   seq / k, symbol = seq mod k. Its CMD(CC) probes, every `probe`, carry its clock; NACKs and
//!   ACKs echo it, and the GRTT (RFC 5740 §5.5.2) is the largest round trip of a probe
//!   interval: a larger one at once, a smaller one halving the distance (our smoothing; the RFC
//!   leaves it open), never below `grtt_min`. A NACK starts the repair aggregation ((K + 1)·GRTT,
//!   §5.3); then each block is repaired with parity no receiver has seen, as many as the
//!   largest request (beyond `parity_max`, asked parity again; explicit segments as asked).
//!   Closed, it multicasts FLUSH and the watermark request ACK REQ to the acking nodes not yet
//!   acknowledged every 2·GRTT, `flush_count` rounds (a repair restarts them); all acked, every
//!   message is done and it reports [`Event::Completed`](crate::Event::Completed) (else they
//!   are done as failed).
//! * [`Receiver`] decodes a block from any `k` symbols
//!   ([`BlockDecoder`](crate::fec::BlockDecoder)) and delivers in order. A block is ready for
//!   repair once a later block, FLUSH or ACK REQ passed its end or its parity came; missing
//!   symbols start RFC 5401's random back-off (exponential over
//!   `[0, K·GRTT)` for the group size estimate, as libnorm draws it), during which another's
//!   NACK asking as many symbols of a block suppresses it. Then it multicasts a NACK (per block
//!   the parity ids after those it saw, or its missing segments once `parity_max` is spent)
//!   and holds off (K + 2)·GRTT. A probe is answered by ACK(CC) after the same back-off,
//!   suppressed by another's answer; ACK REQ naming it by ACK(FLUSH) once it holds the mark.
//!
//! NORM-CC (RFC 5740 §5.5.2, parameter `cc`): [`cc`] (the state), [`cc_agent`] (the roles).

pub mod cc;
pub mod cc_agent;
mod deploy;
mod receiver;
pub mod rfc5740;
mod sender;
pub mod spec;
#[cfg(test)]
mod tests;

pub use deploy::{acking_nodes, deploy, Deployment, Norm};
pub use receiver::Receiver;
pub use sender::Sender;

use crate::fec;
use crate::rng::AgentRng;
use crate::spec::{ms, typed_params};
use crate::{NodeId, Time};
use core::time::Duration;
use rmcast_wire::norm as wire;
use rmcast_wire::rfc5740::quant;
use rmcast_wire::{HEADER_LEN, MAX_DATAGRAM};

pub use cc_agent::{CcReceiver, CcSender};

/// Largest segment one DATA carries: its parity symbol (the segment and a two-byte length
/// prefix) fits a datagram beside DATA's 10 bytes of fields.
pub const MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 10 - fec::LEN_PREFIX;

/// Parity indices a block can have.
const MAX_PARITY: u16 = fec::MAX_SYMBOLS as u16;
/// `rtt` as a sender message's quantized `grtt` byte (RFC 5740 §4.1, rounded up).
pub fn quantize_rtt(rtt: Duration) -> u8 {
    quant::quantize_rtt(rtt.as_secs_f64())
}
/// The round trip a quantized `grtt` byte stands for (RFC 5740 §4.1).
pub fn unquantize_rtt(q: u8) -> Duration {
    Duration::from_secs_f64(quant::unquantize_rtt(q))
}

/// RFC 5401's random back-off (RFC 5740 §5.3), as libnorm draws it: a truncated exponential
/// over `[0, max)` whose weight moves toward `max` as the group grows, so that among
/// `gsize` receivers few draw early.
pub fn random_backoff(rng: &mut AgentRng, max: Duration, gsize: f64) -> Duration {
    let max_s = max.as_secs_f64();
    if max_s <= 0.0 {
        return Duration::ZERO;
    }
    let lambda = gsize.max(1.0).ln() + 1.0;
    let e = lambda.exp() - 1.0;
    let x = rng.unit() * lambda / max_s + lambda / (max_s * e);
    let t = (max_s / lambda) * (x * e * (max_s / lambda)).ln();
    Duration::from_secs_f64(t.clamp(0.0, max_s))
}

/// DATA of object 0.
fn data(block: u32, symbol: u16, block_len: u16, payload: &[u8]) -> wire::Message<'_> {
    let object = 0;
    wire::Message::Data {
        object,
        block,
        symbol,
        block_len,
        payload,
    }
}

/// A duration as whole microseconds (saturating).
fn micros(t: Time) -> u64 {
    t.as_nanos() / 1_000
}

typed_params! {
    /// `norm`'s parameters ([`spec::PARAMS`], typed); `Default` is the spec's defaults.
    Params from spec::PARAMS {
        /// Source segments per block.
        block_len: u64 = int("block_len") or spec::BLOCK_LEN,
        /// Most parity symbols per block.
        parity_max: u64 = int("parity_max") or spec::PARITY_MAX,
        /// The GRTT before one is measured.
        grtt_initial: Duration = ms("grtt_initial_ms") or ms(spec::GRTT_INITIAL_MS),
        /// The smallest GRTT advertised.
        grtt_min: Duration = ms("grtt_min_ms") or ms(spec::GRTT_MIN_MS),
        /// The back-off factor K.
        backoff_k: f64 = real("backoff_k") or spec::BACKOFF_K,
        /// The group size estimate.
        gsize: u64 = int("gsize") or spec::GSIZE,
        /// Interval of the GRTT probes.
        probe: Duration = ms("probe_ms") or ms(spec::PROBE_MS),
        /// Rounds of FLUSH and watermark request.
        flush_count: u64 = int("flush_count") or spec::FLUSH_COUNT,
        /// NORM-CC (RFC 5740 §5.5.2).
        cc: bool = switch("cc") or spec::CC,
    }
}

/// The FEC settings both sides share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fec {
    /// Source segments per block (1 to 200).
    pub k: u16,
    /// Most parity symbols per block.
    pub parity_max: u16,
    /// The back-off factor K.
    pub backoff_k: f64,
    /// The GRTT before one is known.
    pub grtt_initial: Duration,
}

impl Fec {
    fn of(p: &Params) -> Fec {
        let k = p.block_len.clamp(1, 200) as u16;
        Fec {
            k,
            parity_max: (p.parity_max as u16).min(fec::max_parity(usize::from(k)) as u16),
            backoff_k: p.backoff_k,
            grtt_initial: p.grtt_initial,
        }
    }
}

crate::config::group_config! {
    /// Sender configuration.
    pub struct SenderConfig {
        /// The acking nodes, whose watermark ACKs complete the transfer.
        pub receivers: Vec<NodeId> = Vec::new(),
        /// FEC and back-off settings.
        pub fec: Fec = Fec::of(p),
        /// The smallest GRTT advertised.
        pub grtt_min: Duration = p.grtt_min,
        /// Interval of the GRTT probes.
        pub probe: Duration = p.probe,
        /// Rounds of FLUSH and watermark request before missing ACKs are given up.
        pub flush_count: u32 = p.flush_count.min(u64::from(u32::MAX)) as u32,
        /// NORM-CC (`None`: off): wrap the sender in a [`CcSender`].
        pub cc: Option<cc::Config> = cc_agent::config(p),
    }
    pub fn new() from p: Params;
}

crate::config::receiver_config! {
    /// Receiver configuration.
    pub struct ReceiverConfig {
        /// The sender (where ACKs go, whose NACKs count).
        pub source: NodeId = source,
        /// The data group (where NACKs and probe answers go).
        pub group: crate::GroupId = crate::GroupId(0),
        /// FEC and back-off settings.
        pub fec: Fec = Fec::of(p),
        /// The group size estimate of the back-off.
        pub gsize: f64 = p.gsize as f64,
        /// NORM-CC (`None`: off): wrap the receiver in a [`CcReceiver`].
        pub cc: Option<cc::Config> = cc_agent::config(p),
    }
    pub fn new(source: NodeId) from p: Params;
}
