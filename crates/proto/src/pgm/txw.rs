//! The source's transmit window: which packets it keeps for repair.

use super::Source;

impl Source {
    /// After each new packet: FEC's proactive parity, and the repair store trimmed.
    pub(super) fn after_send(&mut self) {
        self.proactive_parity();
        self.release();
    }

    /// Let go of the packets every receiver delivered that are older than the newest
    /// [`super::SourceConfig::txw`] (see there).
    pub(super) fn release(&mut self) {
        let Some(w) = self.cfg.txw else {
            return;
        };
        let mut upto = self.delivered.min(self.sent.next().saturating_sub(w));
        // FEC: parity is computed over a whole block, so the block a receiver is still
        // inside keeps all its packets (the receiver may lack one after those it delivered).
        let k = u64::from(self.cfg.fec_k);
        if k > 0 {
            upto -= upto % k;
        }
        if upto > self.trail {
            self.trail = upto;
            self.buf.remove_below(upto);
        }
    }
}
