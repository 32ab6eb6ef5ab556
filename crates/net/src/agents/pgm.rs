//! `pgm` (seed 003, after RFC 3208) on sockets, as hosts run it without network elements:
//! the source multicasts ODATA at the pacer's rate and an SPM with the leading edge every
//! [`spec::SOCKET_SPM_INTERVAL_MS`]; a receiver that finds a gap NAKs the source by
//! unicast after a short random back-off, the source confirms it with a multicast NCF (which
//! suppresses the same NAK at receivers still backing off) and multicasts the RDATA.
//! Receivers that lose nothing send nothing, whatever the group's size. PGM has no positive
//! acknowledgment: the source learns that receivers finished from the session's reports, so
//! it keeps its SPMs and repairs going until every receiver reported (or `--final-wait` ran
//! out after the last data), see [`NetProtocol::acknowledged`].
//!
//! With `--rate auto` the source runs TFMCC (RFC 4654, [`rmcast_proto::tfmcc`]): the running
//! ANNOUNCE's parameters say so ([`PgmParams`]), receivers then report their TCP-friendly
//! rate and the source paces new data at the slowest one's, never above `--max-rate`. With
//! `--fec-k K` repairs are parity over blocks of `K` packets, as in the simulator (the
//! `pgm` module's FEC repair); the ANNOUNCE carries `K`.
//!
//! On the wire an unkeyed session's packets are RFC 3208's, on the group's port + 1
//! ([`crate::pgmwire`], the running ANNOUNCE's [`PARAM_RFC3208`]); the session layer stays
//! on the group's port. Keyed sessions and `--rmcast-header` (through `rmcast relay`, whose
//! network element reads them) carry the agents' own packets in rmcast's 20-byte header.

use super::ReceiverSide;
use super::{Announced, Me, NetProtocol, Received, SenderSettings, SenderSide, Start, Started};
use super::{Links, RelayAt, Relayed};
use crate::pgmwire::Framing;
use crate::NetError;
use rmcast_proto::pgm::spec;
use rmcast_proto::{pgm, tfmcc, GroupId, NodeId};
use std::net::SocketAddr;
use std::time::Duration;

/// Bit of the ANNOUNCE's pgm flags byte: congestion control (TFMCC) is on.
pub const PARAM_TFMCC: u8 = 0x01;
/// Bit of the ANNOUNCE's pgm flags byte: the packets go as RFC 3208 on the data port
/// ([`crate::pgmwire`]).
pub const PARAM_RFC3208: u8 = 0x02;

/// What a pgm sender announces beyond the session's fields, in the running ANNOUNCE's
/// parameters: nothing (the default: no congestion control, no FEC), a flags byte
/// ([`PARAM_TFMCC`], [`PARAM_RFC3208`]), the flags byte and FEC's block size `k` (u16, 1 to
/// the spec's maximum), or those and the proactive parity per block (u16, 1 to 256 − `k`).
/// Other lengths, unknown flag bits and a `k` or proactive count out of range are refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PgmParams {
    /// Congestion control (`--rate auto`).
    pub tfmcc: bool,
    /// FEC repair: source packets per block (0: off).
    pub fec_k: u16,
    /// FEC: parity packets sent unasked after each block (0: none).
    pub fec_proactive: u16,
    /// The packets go as RFC 3208 on the data port.
    pub rfc3208: bool,
}

impl PgmParams {
    /// The ANNOUNCE's bytes.
    pub fn encode(&self) -> Vec<u8> {
        let flags =
            if self.tfmcc { PARAM_TFMCC } else { 0 } | if self.rfc3208 { PARAM_RFC3208 } else { 0 };
        match (flags, self.fec_k, self.fec_proactive) {
            (0, 0, _) => Vec::new(),
            (f, 0, _) => vec![f],
            (f, k, 0) => {
                let [hi, lo] = k.to_be_bytes();
                vec![f, hi, lo]
            }
            (f, k, p) => {
                let ([hi, lo], [phi, plo]) = (k.to_be_bytes(), p.to_be_bytes());
                vec![f, hi, lo, phi, plo]
            }
        }
    }

    /// Read an ANNOUNCE's bytes.
    pub fn decode(params: &[u8]) -> Result<Self, NetError> {
        let bad = |why: &str| {
            NetError::Failed(format!(
                "the sender's pgm parameters are malformed ({why}): {} bytes, {:02x?}",
                params.len(),
                params.get(..8).unwrap_or(params)
            ))
        };
        let (flags, fec_k, fec_proactive) = match *params {
            [] => (0, 0, 0),
            [f] => (f, 0, 0),
            [f, hi, lo] => (f, u16::from_be_bytes([hi, lo]), 0),
            [f, hi, lo, phi, plo] => (
                f,
                u16::from_be_bytes([hi, lo]),
                u16::from_be_bytes([phi, plo]),
            ),
            _ => return Err(bad("none, one, three or five bytes")),
        };
        if flags & !(PARAM_TFMCC | PARAM_RFC3208) != 0 {
            return Err(bad("unknown flag bits"));
        }
        if params.len() >= 3 && !(1..=spec::FEC_K_MAX).contains(&u64::from(fec_k)) {
            return Err(bad("an FEC block of 0 or more than the largest k"));
        }
        if params.len() == 5
            && (fec_proactive == 0 || pgm::check_proactive(fec_k, fec_proactive).is_err())
        {
            return Err(bad(
                "proactive parity of 0 or more than a block's parity indices",
            ));
        }
        Ok(PgmParams {
            tfmcc: flags & PARAM_TFMCC != 0,
            fec_k,
            fec_proactive,
            rfc3208: flags & PARAM_RFC3208 != 0,
        })
    }
}

/// A receiver of RFC 3208 packets: it reads them on the group at the data port.
struct Rfc3208Side {
    framing: Framing,
    data: SocketAddr,
}

impl ReceiverSide for Rfc3208Side {
    fn join(&self) -> Option<SocketAddr> {
        Some(self.data)
    }

    fn framing(&self) -> Option<crate::framing::Framing> {
        Some(crate::framing::Framing::Rfc3208(self.framing))
    }
}

/// TFMCC as it runs on sockets: the spec's socket defaults, capped at `rate_bps` (0: no cap).
fn cc_config(rate_bps: u64) -> tfmcc::Config {
    tfmcc::Config {
        initial_rtt: socket_ms("tfmcc_initial_rtt_ms"),
        max_rate: rate_bps / 8,
        ..tfmcc::Config::default()
    }
}

/// The sender's side of a session that announces pgm parameters.
struct Announcing(PgmParams);
impl SenderSide for Announcing {
    fn params(&self) -> Result<Vec<u8>, NetError> {
        Ok(self.0.encode())
    }
}

/// Bytes a PARITY packet adds to a message beyond ODATA's header and sequence number:
/// block (8) + index (2) + k (2) − seq (8), and the symbol's two-byte length prefix.
const PARITY_EXTRA: usize = 12 - 8 + rmcast_proto::fec::LEN_PREFIX;

/// Bytes an RFC 3208 parity packet of a parity group past the first (index `k` and up:
/// OPT_LENGTH 4 + OPT_PARITY_GRP 8 after a 24-byte ODATA/RDATA header) takes beyond the
/// agent's PARITY (20-byte header and 12 bytes of fields).
const RFC3208_PARITY_EXTRA: usize = 24 + 4 + 8 - (rmcast_wire::HEADER_LEN + 12);

pub struct Pgm;

/// The socket default of the pgm parameter `key`, in ms, from the spec table.
fn socket_ms(key: &str) -> Duration {
    super::socket_ms("pgm", key)
}

/// How long the source answers after the last data when no report ends it first: the
/// session ends the transfer earlier (every receiver reported, or `--final-wait`).
const LINGER: Duration = Duration::from_secs(24 * 3600);

impl NetProtocol for Pgm {
    fn check_params(&self, params: &[u8]) -> Result<(), NetError> {
        PgmParams::decode(params).map(|_| ())
    }

    /// ODATA: the header and an 8-byte sequence number.
    fn data_fields(&self, _receivers: usize) -> usize {
        8
    }

    fn acknowledged(&self) -> bool {
        false
    }

    fn resumes(&self) -> bool {
        true
    }

    fn congestion_control(&self) -> bool {
        true
    }

    fn early_group(&self, group: SocketAddr, keyed: bool) -> Option<SocketAddr> {
        crate::framing::data_group(group, keyed)
    }

    fn framing(&self, s: &SenderSettings) -> Option<crate::framing::Framing> {
        s.pgm_rfc3208
            .then_some(crate::framing::Framing::Rfc3208(Framing {
                session: s.session,
                sender: s.node,
                fec: (s.pgm_fec_k, s.pgm_fec_proactive),
            }))
    }

    fn repairs_in_order(&self) -> bool {
        super::socket_switch("pgm", "nak_overtaken")
    }

    fn check(&self, s: &SenderSettings) -> Result<(), NetError> {
        let range = rmcast_proto::protocols::lookup("pgm")
            .and_then(|p| p.param("txw"))
            .map(|q| q.range);
        if let Some(r) = range {
            if !r.admits(s.pgm_txw as f64) {
                return Err(NetError::setup(format!(
                    "--txw {} is out of range: give {r:?} packets",
                    s.pgm_txw
                )));
            }
        }
        if s.pgm_fec_k > 0 && s.pgm_txw < u64::from(s.pgm_fec_k) {
            return Err(NetError::setup(format!(
                "--txw {} is smaller than an FEC block (--fec-k {}): the source keeps a block \
                 whole until every receiver delivered it",
                s.pgm_txw, s.pgm_fec_k
            )));
        }
        match pgm::check_proactive(s.pgm_fec_k, s.pgm_fec_proactive) {
            Ok(()) => {}
            Err(pgm::ProactiveError::NoBlocks) => {
                return Err(NetError::setup(format!(
                    "--fec-proactive {} needs --fec-k: proactive parity is sent per FEC block",
                    s.pgm_fec_proactive
                )))
            }
            Err(pgm::ProactiveError::TooMany { max }) => {
                return Err(NetError::setup(format!(
                    "--fec-proactive {} is out of range: a block of --fec-k {} has {max} \
                     parity indices",
                    s.pgm_fec_proactive, s.pgm_fec_k
                )))
            }
        }
        if u64::from(s.pgm_fec_k) > spec::FEC_K_MAX {
            return Err(NetError::setup(format!(
                "--fec-k {} is out of range: give 0 (off) to {} packets per block",
                s.pgm_fec_k,
                spec::FEC_K_MAX
            )));
        }
        Ok(())
    }

    /// With FEC a parity symbol (the message and its length prefix) must fit a datagram, so
    /// messages are [`PARITY_EXTRA`] bytes shorter than ODATA alone would allow (and
    /// [`RFC3208_PARITY_EXTRA`] more with RFC 3208 on the wire).
    fn message_size(&self, s: &SenderSettings) -> Result<Option<usize>, NetError> {
        if s.pgm_fec_k == 0 {
            return Ok(None);
        }
        let room = s
            .datagram_size
            .checked_sub(
                s.sealing
                    + self.data_overhead(0)
                    + PARITY_EXTRA
                    + if s.pgm_rfc3208 {
                        RFC3208_PARITY_EXTRA
                    } else {
                        0
                    },
            )
            .filter(|c| *c > 16)
            .ok_or_else(|| {
                NetError::setup(format!(
                    "--datagram-size {} leaves no room for data with FEC: raise it",
                    s.datagram_size
                ))
            })?;
        Ok(Some(room))
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
        c.fec_k = s.pgm_fec_k;
        c.fec_proactive = s.pgm_fec_proactive;
        let params = PgmParams {
            tfmcc: s.tfmcc,
            fec_k: s.pgm_fec_k,
            fec_proactive: s.pgm_fec_proactive,
            rfc3208: s.pgm_rfc3208,
        };
        let side = Box::new(Announcing(params));
        if !s.tfmcc {
            return Ok(Started {
                agent: Box::new(pgm::Source::new(c)),
                side,
            });
        }
        let cc = cc_config(s.rate_bps);
        c.cc = Some(cc);
        Ok(Started {
            agent: Box::new(pgm::PacedSource::new(pgm::Source::new(c), cc)),
            side,
        })
    }

    /// Built from the running ANNOUNCE, whose parameters say whether congestion control is on
    /// (the gathering one carries none).
    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        if !a.running {
            return Ok(None);
        }
        let p = PgmParams::decode(a.params)?;
        let mut c = pgm::ReceiverConfig::new(NodeId(me.node), NodeId(me.sender));
        c.session = me.session;
        c.nak_backoff = socket_ms("nak_backoff_ms");
        c.nak_repeat = socket_ms("nak_repeat_ms");
        c.nak_rdata = socket_ms("nak_rdata_ms");
        c.nak_rto_min = Some(socket_ms("nak_rto_min_ms"));
        c.nak_list = super::socket_int("pgm", "nak_list")
            .and_then(|n| u16::try_from(n).ok())
            .unwrap_or(1);
        c.nak_overtaken = super::socket_switch("pgm", "nak_overtaken");
        c.fec_k = p.fec_k;
        c.fec_proactive = p.fec_proactive;
        let agent: Box<dyn rmcast_proto::Agent> = if p.tfmcc {
            let cc = cc_config(0);
            c.cc = Some(cc);
            let mut rng = me.rng();
            let feedback = rmcast_proto::rng::AgentRng::from_seed(rng.range_inclusive(0, u64::MAX));
            let inner = pgm::Receiver::new(c, rng);
            Box::new(pgm::FeedbackReceiver::new(inner, cc, feedback))
        } else {
            Box::new(pgm::Receiver::new(c, me.rng()))
        };
        let framing = Framing {
            session: me.session,
            sender: me.sender,
            fec: (p.fec_k, p.fec_proactive),
        };
        let data = crate::framing::data_group(me.group, false);
        let side = match (p.rfc3208, data) {
            (true, Some(data)) => Box::new(Rfc3208Side { framing, data }) as Box<dyn ReceiverSide>,
            (true, None) => {
                return Err(NetError::Failed(
                    "the sender announced RFC 3208 packets on the port after 65535".into(),
                ))
            }
            (false, _) => Box::new(super::Plain),
        };
        Ok(Some(Received { agent, side }))
    }

    /// A network element (RFC 3208 §7): NAKs confirmed at once with an NCF down the interface
    /// they came in on, only the first NAK of a repair forwarded to the source, RDATA (and
    /// FEC parity asked for) only down the interfaces that asked. It speaks for the source:
    /// its NCFs carry the sender's node id, as PGM's carry the source's session identity.
    fn relay(&self, a: Announced<'_>, at: &RelayAt<'_>) -> Result<Option<Relayed>, NetError> {
        if !a.running {
            return Ok(None);
        }
        let p = PgmParams::decode(a.params)?;
        if p.rfc3208 {
            return Err(NetError::Failed(
                "pgm's RFC 3208 packets go on the group's port + 1, which a relay does not \
                 carry: run `rmcast send --protocol pgm --rmcast-header` through relays"
                    .into(),
            ));
        }
        let mut c = pgm::NeConfig::new(NodeId(at.sender), GroupId(0));
        c.session = at.session;
        c.state_lifetime = socket_ms("state_lifetime_ms");
        c.nak_elim = Some(socket_ms("nak_elim_ms")).filter(|d| !d.is_zero());
        c.fec_proactive = p.fec_proactive;
        Ok(Some(Relayed {
            agent: Box::new(pgm::NetworkElement::new(c)),
            links: Links::Interfaces,
            node: None,
            local_group: None,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spec_s_transmit_window_is_its_socket_default() {
        let w = spec::SOCKET_TXW;
        assert!(w > 0);
        let p = rmcast_proto::protocols::lookup("pgm")
            .unwrap()
            .param("txw")
            .unwrap();
        assert_eq!(p.socket_default(), rmcast_proto::spec::Value::Int(w));
        assert_eq!(p.flag, Some("txw"));
    }

    #[test]
    fn receivers_on_sockets_name_up_to_a_full_nak_list() {
        let n = crate::agents::socket_int("pgm", "nak_list");
        assert_eq!(n, Some(u64::from(spec::SOCKET_NAK_LIST)));
        assert_eq!(n, Some(rmcast_wire::pgm::MAX_NAK_LIST as u64));
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
    fn the_announce_says_whether_congestion_control_and_fec_are_on_and_refuses_the_unknown() {
        let dec = |b: &[u8]| PgmParams::decode(b).ok();
        assert_eq!(dec(&[]), Some(PgmParams::default()));
        assert_eq!(PgmParams::default().encode(), Vec::<u8>::new());
        let cc = PgmParams {
            tfmcc: true,
            ..PgmParams::default()
        };
        assert_eq!(cc.encode(), vec![PARAM_TFMCC]);
        assert_eq!(dec(&cc.encode()), Some(cc));
        for p in [
            PgmParams {
                tfmcc: false,
                fec_k: 16,
                fec_proactive: 0,
                rfc3208: false,
            },
            PgmParams {
                tfmcc: true,
                fec_k: 128,
                fec_proactive: 0,
                rfc3208: true,
            },
        ] {
            assert_eq!(p.encode().len(), 3);
            assert_eq!(dec(&p.encode()), Some(p));
        }
        // Proactive parity: five bytes.
        let p = PgmParams {
            tfmcc: false,
            fec_k: 16,
            fec_proactive: 2,
            rfc3208: false,
        };
        assert_eq!(p.encode(), vec![0, 0, 16, 0, 2]);
        assert_eq!(dec(&p.encode()), Some(p));
        // RFC 3208 on the wire: its own bit, with or without the others.
        let wire = PgmParams {
            rfc3208: true,
            ..PgmParams::default()
        };
        assert_eq!(wire.encode(), vec![PARAM_RFC3208]);
        assert_eq!(dec(&wire.encode()), Some(wire));
        assert_eq!(
            dec(&[PARAM_RFC3208 | PARAM_TFMCC, 0, 8]).map(|p| p.rfc3208),
            Some(true)
        );
        assert_eq!(dec(&[0]), Some(PgmParams::default()));
        for bad in [
            &[0x04][..],
            &[0x81],
            &[1, 0],
            &[0; 40],
            &[0, 0, 0],
            &[0, 0, 129],
            &[1, 0xff, 0xff],
            // proactive parity of 0, beyond 256 − k, or without k
            &[0, 0, 16, 0, 0],
            &[0, 0, 16, 0, 241],
            &[0, 0, 0, 0, 1],
            &[0, 0, 16, 0],
        ] {
            assert!(
                matches!(PgmParams::decode(bad), Err(NetError::Failed(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn fec_messages_leave_room_for_the_parity_header_and_k_is_checked() {
        let mut s = crate::agents::tests::settings();
        assert_eq!(Pgm.message_size(&s).unwrap(), None);
        s.pgm_fec_k = 16;
        s.pgm_rfc3208 = false;
        let m = Pgm.message_size(&s).unwrap().unwrap();
        // A parity symbol of the longest message (framing included) plus its prefix and
        // PARITY's fields is one datagram.
        let symbol = crate::frame::DATA_OVERHEAD + m + rmcast_proto::fec::LEN_PREFIX;
        assert_eq!(rmcast_wire::HEADER_LEN + 12 + symbol, s.datagram_size);
        // As RFC 3208: RDATA's header, OPT_LENGTH and OPT_PARITY_GRP.
        s.pgm_rfc3208 = true;
        let m = Pgm.message_size(&s).unwrap().unwrap();
        let symbol = crate::frame::DATA_OVERHEAD + m + rmcast_proto::fec::LEN_PREFIX;
        assert_eq!(24 + 4 + 8 + symbol, s.datagram_size);
        assert!(Pgm.check(&s).is_ok());
        s.pgm_fec_proactive = 240;
        assert!(Pgm.check(&s).is_ok());
        s.pgm_fec_proactive = 241;
        assert!(matches!(Pgm.check(&s), Err(NetError::Setup(_))));
        s.pgm_fec_proactive = 2;
        s.pgm_fec_k = 129;
        assert!(matches!(Pgm.check(&s), Err(NetError::Setup(_))));
        s.pgm_fec_k = 0;
        let e = Pgm.check(&s).unwrap_err().to_string();
        assert!(e.contains("--fec-proactive 2 needs --fec-k"), "{e}");
    }

    /// A running ANNOUNCE of pgm with `params`.
    fn announced(params: &[u8]) -> Announced<'_> {
        Announced {
            protocol: rmcast_wire::Family::Pgm as u8,
            window: 0,
            ack_delay_us: 0,
            ack_timeout_us: 0,
            params,
            running: true,
        }
    }

    #[test]
    fn receivers_read_rfc3208_on_the_data_port_and_a_relay_refuses_to_build_for_it() {
        let group: SocketAddr = "239.1.2.3:5000".parse().unwrap();
        let me = Me {
            node: 7,
            session: 9,
            sender: 1,
            group,
        };
        let data: SocketAddr = "239.1.2.3:5001".parse().unwrap();
        assert_eq!(Pgm.early_group(group, false), Some(data));
        assert_eq!(
            Pgm.early_group(group, true),
            None,
            "keyed: sealed whole, no data port"
        );
        let wire = [PARAM_RFC3208, 0, 8];
        let r = Pgm.receiver(announced(&wire), &me).unwrap().unwrap();
        assert_eq!(r.side.join(), Some(data));
        let Some(crate::framing::Framing::Rfc3208(f)) = r.side.framing() else {
            panic!("no RFC 3208 framing")
        };
        assert_eq!((f.session, f.sender, f.fec), (9, 1, (8, 0)));
        let plain = Pgm.receiver(announced(&[0, 0, 8]), &me).unwrap().unwrap();
        assert!(plain.side.join().is_none() && plain.side.framing().is_none());
        let at = RelayAt {
            session: 9,
            sender: 1,
            node: 3,
            receivers: &[],
            region: None,
            group,
        };
        let e = Pgm.relay(announced(&wire), &at).err().unwrap().to_string();
        assert!(e.contains("--rmcast-header"), "{e}");
        assert!(Pgm.relay(announced(&[0, 0, 8]), &at).unwrap().is_some());
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
        let started = Pgm.start(&s, &start).unwrap();
        let flags = PARAM_TFMCC | PARAM_RFC3208;
        assert_eq!(started.side.params().unwrap(), vec![flags]);
        s.pgm_fec_k = 8;
        let mut started = Pgm.start(&s, &start).unwrap();
        assert_eq!(started.side.params().unwrap(), vec![flags, 0, 8]);
        // Keyed (or `--rmcast-header`): no RFC 3208, and the ANNOUNCE says so.
        s.pgm_rfc3208 = false;
        assert!(Pgm.framing(&s).is_none());
        assert_eq!(
            Pgm.start(&s, &start).unwrap().side.params().unwrap(),
            vec![PARAM_TFMCC, 0, 8]
        );
        let any = started.agent.as_any_mut().unwrap();
        assert!(any.downcast_mut::<pgm::PacedSource>().is_some());
    }
}
