//! `pgm` (seed 003, after RFC 3208) on sockets, as hosts run it without network elements:
//! the source multicasts ODATA at the pacer's rate and an SPM with the leading edge every
//! [`spec::pgm::SOCKET_SPM_INTERVAL_MS`]; a receiver that finds a gap NAKs the source by
//! unicast after a short random back-off, the source confirms it with a multicast NCF (which
//! suppresses the same NAK at receivers still backing off) and multicasts the RDATA.
//! Receivers that lose nothing send nothing, whatever the group's size. PGM has no positive
//! acknowledgment: the source learns that receivers finished from the session's reports, so
//! it keeps its SPMs and repairs going until every receiver reported (or `--final-wait` ran
//! out after the last data), see [`NetProtocol::acknowledged`].
//!
//! With `--rate auto` the source runs TFMCC (RFC 4654, [`rmcast_proto::tfmcc`]): the running
//! ANNOUNCE's parameters say so ([`PARAM_TFMCC`]), receivers then report their TCP-friendly
//! rate and the source paces new data at the slowest one's, never above `--max-rate`.

use super::{Announced, Me, NetProtocol, Received, SenderSettings, SenderSide, Start, Started};
use crate::NetError;
use rmcast_proto::spec;
use rmcast_proto::{pgm, tfmcc, GroupId, NodeId};
use std::time::Duration;

/// Bit of the ANNOUNCE's one parameter byte: congestion control (TFMCC) is on. No byte (the
/// default) means off; other bits are refused.
pub const PARAM_TFMCC: u8 = 0x01;

/// TFMCC as it runs on sockets: the spec's socket defaults, capped at `rate_bps` (0: no cap).
fn cc_config(rate_bps: u64) -> tfmcc::Config {
    tfmcc::Config {
        initial_rtt: socket_ms("tfmcc_initial_rtt_ms"),
        max_rate: rate_bps / 8,
        ..tfmcc::Config::default()
    }
}

/// The sender's side of a congestion-controlled session: it announces it.
struct Controlled;
impl SenderSide for Controlled {
    fn params(&self) -> Result<Vec<u8>, NetError> {
        Ok(vec![PARAM_TFMCC])
    }
}

/// Whether an ANNOUNCE's pgm parameters turn congestion control on.
fn announced_tfmcc(params: &[u8]) -> Result<bool, NetError> {
    match params {
        [] => Ok(false),
        [b] if b & !PARAM_TFMCC == 0 => Ok(b & PARAM_TFMCC != 0),
        _ => Err(NetError::Failed(format!(
            "the sender's pgm parameters are malformed: {} bytes ({:02x?}), this receiver \
             knows none or one byte of known flags",
            params.len(),
            params.get(..8).unwrap_or(params)
        ))),
    }
}

pub struct Pgm;

/// The socket default of the pgm parameter `key`, in ms, from the spec table.
fn socket_ms(key: &str) -> Duration {
    super::socket_ms("pgm", key)
}

/// How long the source answers after the last data when no report ends it first: the
/// session ends the transfer earlier (every receiver reported, or `--final-wait`).
const LINGER: Duration = Duration::from_secs(24 * 3600);

impl NetProtocol for Pgm {
    /// ODATA: the header and an 8-byte sequence number.
    fn data_fields(&self, _receivers: usize) -> usize {
        8
    }

    fn acknowledged(&self) -> bool {
        false
    }

    fn congestion_control(&self) -> bool {
        true
    }

    fn check(&self, s: &SenderSettings) -> Result<(), NetError> {
        let range = spec::lookup("pgm")
            .and_then(|p| p.param("txw"))
            .map(|q| q.range);
        match range {
            Some(r) if !r.admits(s.pgm_txw as f64) => Err(NetError::setup(format!(
                "--txw {} is out of range: give {r:?} packets",
                s.pgm_txw
            ))),
            _ => Ok(()),
        }
    }

    fn start(&self, s: &SenderSettings, _start: &Start<'_>) -> Result<Started, NetError> {
        let mut c = pgm::SourceConfig::new(NodeId(s.node), GroupId(0));
        c.session = s.session;
        let spm = socket_ms("spm_interval_ms");
        c.spm_interval = (!spm.is_zero()).then_some(spm);
        c.repair_delay = socket_ms("repair_delay_ms");
        c.rdata_holdoff = socket_ms("rdata_holdoff_ms");
        c.linger = LINGER;
        c.txw = Some(s.pgm_txw.max(1));
        if !s.tfmcc {
            return Started::plain(pgm::Source::new(c));
        }
        let cc = cc_config(s.rate_bps);
        c.cc = Some(cc);
        Ok(Started {
            agent: Box::new(pgm::PacedSource::new(pgm::Source::new(c), cc)),
            side: Box::new(Controlled),
        })
    }

    /// Built from the running ANNOUNCE, whose parameters say whether congestion control is on
    /// (the gathering one carries none).
    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        if !a.running {
            return Ok(None);
        }
        let tfmcc = announced_tfmcc(a.params)?;
        let mut c = pgm::ReceiverConfig::new(NodeId(me.node), NodeId(me.sender));
        c.session = me.session;
        c.nak_backoff = socket_ms("nak_backoff_ms");
        c.nak_repeat = socket_ms("nak_repeat_ms");
        c.nak_rdata = socket_ms("nak_rdata_ms");
        c.nak_rto_min = Some(socket_ms("nak_rto_min_ms"));
        if !tfmcc {
            return Received::plain(pgm::Receiver::new(c, me.rng()));
        }
        let cc = cc_config(0);
        c.cc = Some(cc);
        let mut rng = me.rng();
        let feedback = rmcast_proto::rng::AgentRng::from_seed(rng.range_inclusive(0, u64::MAX));
        let inner = pgm::Receiver::new(c, rng);
        Received::plain(pgm::FeedbackReceiver::new(inner, cc, feedback))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_s_transmit_window_is_its_socket_default() {
        let w = spec::pgm::SOCKET_TXW;
        assert!(w > 0);
        let p = spec::lookup("pgm").unwrap().param("txw").unwrap();
        assert_eq!(p.socket_default(), spec::Value::Int(w));
        assert_eq!(p.flag, Some("txw"));
    }

    #[test]
    fn a_transmit_window_out_of_the_spec_s_range_is_refused() {
        let mut s = crate::agents::tests::settings();
        assert!(Pgm.check(&s).is_ok());
        s.pgm_txw = 0;
        assert!(matches!(Pgm.check(&s), Err(NetError::Setup(_))));
        s.pgm_txw = 1 << 30;
        assert!(matches!(Pgm.check(&s), Err(NetError::Setup(_))));
    }

    #[test]
    fn every_timer_read_from_the_spec_is_a_positive_duration() {
        for key in [
            "spm_interval_ms",
            "nak_backoff_ms",
            "nak_repeat_ms",
            "nak_rdata_ms",
            "nak_rto_min_ms",
            "rdata_holdoff_ms",
            "tfmcc_initial_rtt_ms",
        ] {
            assert!(!socket_ms(key).is_zero(), "{key}");
        }
        assert_eq!(socket_ms("repair_delay_ms"), Duration::ZERO);
    }

    #[test]
    fn the_announce_says_whether_congestion_control_is_on_and_unknown_bits_are_refused() {
        assert_eq!(announced_tfmcc(&[]).ok(), Some(false));
        assert_eq!(Controlled.params().ok(), Some(vec![PARAM_TFMCC]));
        assert_eq!(announced_tfmcc(&[PARAM_TFMCC]).ok(), Some(true));
        assert_eq!(announced_tfmcc(&[0]).ok(), Some(false));
        for bad in [&[0x02][..], &[0x81], &[1, 0], &[0; 40]] {
            assert!(
                matches!(announced_tfmcc(bad), Err(NetError::Failed(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn rate_auto_builds_a_paced_source_capped_at_the_rate() {
        let mut s = crate::agents::tests::settings();
        s.tfmcc = true;
        s.rate_bps = 800_000_000;
        assert_eq!(cc_config(s.rate_bps).max_rate, 100_000_000);
        assert_eq!(cc_config(0).max_rate, 0);
        let start = Start {
            joined: &[],
            group: "239.1.2.3:5000".parse().unwrap(),
            stream: "",
        };
        let mut started = Pgm.start(&s, &start).unwrap();
        assert_eq!(started.side.params().unwrap(), vec![PARAM_TFMCC]);
        let any = started.agent.as_any_mut().unwrap();
        assert!(any.downcast_mut::<pgm::PacedSource>().is_some());
    }
}
