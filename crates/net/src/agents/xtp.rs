//! `xtp` (seed 002) on sockets: the only protocol that runs by unicast to one receiver
//! (`--unicast`) and admits receivers while a stream runs (`--late-join`). It splits a user
//! write over packets itself, so it chooses the message size. The running ANNOUNCE's
//! parameters ([`XtpParams`]) say whether late joiners are admitted and name the stream.

use super::{nodes, Announced, Me, NetProtocol, Received, SenderSettings, SenderSide, Start};
use super::{Started, QUEUE_LIMIT};
use crate::frame::DATA_OVERHEAD;
use crate::NetError;
use rmcast_proto::{xtp, GroupId, NodeId};

pub struct Xtp;

impl NetProtocol for Xtp {
    /// Its parameters (the late-join offer, read by late_offer).
    fn check_params(&self, _params: &[u8]) -> Result<(), NetError> {
        Ok(())
    }

    fn unicast(&self) -> bool {
        true
    }

    fn late_join(&self) -> bool {
        true
    }

    fn message_size(&self, s: &SenderSettings) -> Result<Option<usize>, NetError> {
        Ok(Some(match s.xtp_write_size {
            Some(w) if w > DATA_OVERHEAD && w <= xtp::MAX_WRITE => w - DATA_OVERHEAD,
            Some(w) => {
                return Err(NetError::setup(format!(
                    "--write-size {w} is out of range: choose between {} and {}",
                    DATA_OVERHEAD + 1,
                    xtp::MAX_WRITE
                )))
            }
            None => s.xtp_maxdata.saturating_sub(DATA_OVERHEAD).max(1),
        }))
    }

    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError> {
        let ids = start.ids();
        if s.xtp_unicast && (ids.len() != 1 || s.xtp_accept_joins) {
            return Err(NetError::setup(format!(
                "xtp unicast sends to exactly one receiver and admits no late joiners \
                 ({} receivers{}): drop --unicast, or use --receivers 1 without --late-join",
                ids.len(),
                if s.xtp_accept_joins {
                    ", late join on"
                } else {
                    ""
                }
            )));
        }
        let (node, group, multicast) = (NodeId(s.node), GroupId(0), !s.xtp_unicast);
        let mut c = if s.xtp_thesis {
            xtp::SenderConfig::thesis(node, group, nodes(&ids), multicast)
        } else {
            let mut c = xtp::SenderConfig::improved(node, group, nodes(&ids), multicast);
            c.block_on_ack = false;
            c.window = u32::from(s.window.max(1));
            c
        };
        c.session = s.session;
        c.accept_joins = s.xtp_accept_joins;
        c.maxdata = s.xtp_maxdata.max(1);
        c.queue_limit = QUEUE_LIMIT;
        Ok(Started {
            agent: Box::new(xtp::Sender::new(c)),
            side: Box::new(LateJoin {
                offered: s.xtp_accept_joins,
                open: s.xtp_accept_joins,
                stream: start.stream.to_string(),
            }),
        })
    }

    fn receiver(&self, _a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
        let mut c = xtp::ReceiverConfig::new(NodeId(me.node));
        c.session = me.session;
        c.buffer = 4096;
        Received::plain(xtp::Receiver::new(c))
    }

    fn late_offer(&self, params: &[u8]) -> Result<Option<String>, NetError> {
        Ok(XtpParams::decode(params)?
            .filter(|p| p.late_join)
            .map(|p| p.stream))
    }
}

/// The sender's late-join offer (`--late-join`): open while the source lasts.
struct LateJoin {
    /// Late joining was asked for: the running ANNOUNCE carries [`XtpParams`].
    offered: bool,
    /// Late joiners are admitted now.
    open: bool,
    stream: String,
}

impl SenderSide for LateJoin {
    fn params(&self) -> Result<Vec<u8>, NetError> {
        if !self.offered {
            return Ok(Vec::new());
        }
        Ok(XtpParams {
            late_join: self.open,
            stream: self.stream.clone(),
        }
        .encode())
    }

    fn admits_joiners(&self) -> bool {
        self.open
    }

    fn close_joins(&mut self) -> bool {
        std::mem::replace(&mut self.open, false)
    }
}

/// `xtp` announce parameters: whether the sender admits late joiners now, and the name of
/// the stream they would join (a late joiner keeps what it gets as `<name>.partial`).
/// Layout: one flag byte (bit 0: late joiners admitted), then the name in UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XtpParams {
    /// Late joiners are admitted now.
    pub late_join: bool,
    /// The name of the stream sent.
    pub stream: String,
}

impl XtpParams {
    /// The parameter block of a running ANNOUNCE.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = vec![u8::from(self.late_join)];
        v.extend_from_slice(self.stream.as_bytes());
        v
    }

    /// `None` for an empty parameter block (a sender that offers nothing).
    pub fn decode(raw: &[u8]) -> Result<Option<Self>, NetError> {
        let Some((&flags, name)) = raw.split_first() else {
            return Ok(None);
        };
        let stream = std::str::from_utf8(name)
            .map_err(|_| NetError::Failed("the sender's xtp parameters are malformed".into()))?;
        Ok(Some(XtpParams {
            late_join: flags & 1 != 0,
            stream: stream.to_string(),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xtp_params_round_trip() {
        let p = XtpParams {
            late_join: true,
            stream: "live.log".into(),
        };
        assert_eq!(XtpParams::decode(&p.encode()).unwrap(), Some(p));
        assert_eq!(XtpParams::decode(&[]).unwrap(), None);
        assert!(XtpParams::decode(&[1, 0xff, 0xfe]).is_err());
        assert!(!XtpParams::decode(&[0]).unwrap().unwrap().late_join);
    }
}
