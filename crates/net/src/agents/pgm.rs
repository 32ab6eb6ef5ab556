//! `pgm` (seed 003, after RFC 3208) on sockets, as hosts run it without network elements:
//! the source multicasts ODATA at the pacer's rate and an SPM with the leading edge every
//! [`spec::pgm::SOCKET_SPM_INTERVAL_MS`]; a receiver that finds a gap NAKs the source by
//! unicast after a short random back-off, the source confirms it with a multicast NCF (which
//! suppresses the same NAK at receivers still backing off) and multicasts the RDATA.
//! Receivers that lose nothing send nothing, whatever the group's size. PGM has no positive
//! acknowledgment: the source learns that receivers finished from the session's reports, so
//! it keeps its SPMs and repairs going until every receiver reported (or `--final-wait` ran
//! out after the last data), see [`NetProtocol::acknowledged`].

use super::{Announced, Me, NetProtocol, Received, SenderSettings, Start, Started};
use crate::NetError;
use rmcast_proto::spec;
use rmcast_proto::{pgm, GroupId, NodeId};
use std::time::Duration;

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
        Started::plain(pgm::Source::new(c))
    }

    fn receiver(&self, _a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        let mut c = pgm::ReceiverConfig::new(NodeId(me.node), NodeId(me.sender));
        c.session = me.session;
        c.nak_backoff = socket_ms("nak_backoff_ms");
        c.nak_repeat = socket_ms("nak_repeat_ms");
        c.nak_rdata = socket_ms("nak_rdata_ms");
        c.nak_rto_min = Some(socket_ms("nak_rto_min_ms"));
        Received::plain(pgm::Receiver::new(c, me.rng()))
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
        ] {
            assert!(!socket_ms(key).is_zero(), "{key}");
        }
        assert_eq!(socket_ms("repair_delay_ms"), Duration::ZERO);
    }
}
