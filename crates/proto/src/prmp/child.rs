//! What the parent knows of each child (windows, RTT, silence) and of each packet
//! (how many children are in which standing).

use super::*;

/// A child's standing with respect to one packet, as the parent knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Cat {
    Acked,
    Nacked,
    Repolled,
    Unknown,
}

#[derive(Debug)]
pub(super) struct Child {
    pub(super) node: NodeId,
    pub(super) active: bool,
    /// `W_p,i`: base is `LE_p,i`.
    pub(super) w: SeqWindow,
    /// `HR_p,i`.
    pub(super) hr: Option<u64>,
    pub(super) rtt: RttEstimator,
    /// Polls sent to this child still awaiting a response: (poll id, TS, SEQ), in send order.
    pub(super) pending: VecDeque<(u64, Time, u64)>,
    /// Highest `RESP.SEQ` received.
    pub(super) answered_seq: Option<u64>,
    /// Highest `POLL.SEQ` among polls found absent.
    pub(super) absent_seq: Option<u64>,
    /// MPT: consecutive absent responses, and the TS of the last absent poll.
    pub(super) mpt_count: u32,
    pub(super) mpt_ts: Time,
}

impl Child {
    pub(super) fn le(&self) -> u64 {
        self.w.base()
    }

    pub(super) fn cat(&self, seq: u64) -> Cat {
        if self.w.contains(seq) {
            return Cat::Acked;
        }
        if self.hr.is_some_and(|h| h >= seq) {
            return Cat::Nacked;
        }
        let ok = self
            .pending
            .iter()
            .map(|&(_, _, s)| s)
            .chain(self.answered_seq)
            .max();
        if self.absent_seq.is_some_and(|a| a >= seq) && ok.is_none_or(|o| o < seq) {
            Cat::Repolled
        } else {
            Cat::Unknown
        }
    }

    /// Move `LE_p,i` up to `le` (everything below it is received).
    pub(super) fn advance_le(&mut self, le: u64) {
        while self.w.base() < le {
            let b = self.w.base();
            self.w.insert(b);
            self.w.pop_in_order();
        }
    }
}

#[derive(Debug)]
pub(super) struct SeqInfo {
    pub(super) status: Status,
    pub(super) acked: u64,
    pub(super) nacked: u64,
    pub(super) repolled: u64,
    pub(super) sent_at: Time,
    pub(super) transmissions: u32,
    /// Latest multicast retransmission (§3's special RTxT entry).
    pub(super) mcast_at: Option<Time>,
}
