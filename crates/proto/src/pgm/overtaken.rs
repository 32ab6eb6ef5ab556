//! A receiver's losses whose NCF came and whose repair is awaited, in the order the source
//! confirmed them ([`super::ReceiverConfig::nak_overtaken`]).
//!
//! A source answers one receiver's NAKs in the order it confirmed them (an NCF list's
//! numbers in the list's order). So when the repair of one confirmed loss arrives, every
//! loss confirmed before it whose repair has not come was most likely lost on the way
//! (behind a slow port, in front of its full queue): it is overtaken, and asked for again at
//! once instead of after the NCF's wait (`nak_rdata`, doubled for each wait that ran out),
//! as TCP's RACK marks a segment lost once a later one is acknowledged. A wrong guess (the
//! source served another receiver's request for it first) costs a NAK the source's queue
//! ignores. Without it a receiver behind a slow port waits out one such timer per round of
//! lost repairs, and its link idles meanwhile (docs/performance.md, "An uneven LAN").
//! The last repairs of a burst have nothing after them to overtake them: when no awaited
//! repair has come for a retransmission timeout of the repair round trip, every awaited one
//! is asked for again (a tail loss probe).

use std::collections::{BTreeMap, HashMap};

/// The awaited repairs by confirmation order.
#[derive(Debug, Default)]
pub(super) struct Overtaken {
    /// The next confirmation's order.
    next: u64,
    /// Sequence numbers by their confirmation's order.
    by_order: BTreeMap<u64, u64>,
    /// Each awaited sequence number's order.
    order: HashMap<u64, u64>,
}

impl Overtaken {
    /// `seq`'s NCF came: its repair is awaited after every one confirmed so far. One
    /// confirmed again while awaited (its NAK repeated when a wait ran out) keeps its place:
    /// its repair is still queued where the first NAK put it.
    pub fn confirmed(&mut self, seq: u64) {
        if self.order.contains_key(&seq) {
            return;
        }
        let k = self.next;
        self.next += 1;
        self.order.insert(seq, k);
        self.by_order.insert(k, seq);
    }

    /// `seq` is no longer awaited (its wait ran out, or it came otherwise).
    pub fn forget(&mut self, seq: u64) {
        if let Some(k) = self.order.remove(&seq) {
            self.by_order.remove(&k);
        }
    }

    /// The repair of `seq` arrived: the awaited ones confirmed before it, oldest first, which
    /// are no longer tracked (the caller asks for them again, and a new NCF tracks them anew).
    pub fn arrived(&mut self, seq: u64) -> Vec<u64> {
        let Some(k) = self.order.remove(&seq) else {
            return Vec::new();
        };
        self.by_order.remove(&k);
        let later = self.by_order.split_off(&k);
        let before = std::mem::replace(&mut self.by_order, later);
        before
            .into_values()
            .inspect(|s| {
                self.order.remove(s);
            })
            .collect()
    }

    /// Every awaited loss, oldest first, no longer tracked: no repair came for a while, so
    /// those still awaited were lost at the tail of a burst, with nothing after them to
    /// overtake them (TCP's tail loss probe).
    pub fn take_all(&mut self) -> Vec<u64> {
        self.order.clear();
        std::mem::take(&mut self.by_order).into_values().collect()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.order.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repair_overtakes_those_confirmed_before_it() {
        let mut o = Overtaken::default();
        for s in [10, 11, 12, 13] {
            o.confirmed(s);
        }
        assert_eq!(o.arrived(11), vec![10], "10 was confirmed before 11");
        assert_eq!(o.arrived(11), Vec::<u64>::new(), "not awaited any more");
        // 12 confirmed again while awaited: it keeps its place, before 13.
        o.confirmed(12);
        assert_eq!(o.arrived(13), vec![12]);
        // Asked for again after being overtaken, it is confirmed anew: after 14.
        o.confirmed(14);
        o.confirmed(12);
        assert_eq!(o.arrived(12), vec![14]);
        assert_eq!(o.len(), 0);
    }

    #[test]
    fn a_forgotten_loss_is_not_overtaken() {
        let mut o = Overtaken::default();
        for s in [1, 2, 3] {
            o.confirmed(s);
        }
        o.forget(1);
        assert_eq!(o.arrived(3), vec![2]);
        assert_eq!(o.arrived(99), Vec::<u64>::new(), "never confirmed");
        o.confirmed(5);
        o.confirmed(4);
        assert_eq!(o.take_all(), vec![5, 4], "in the order confirmed");
        assert!(o.is_empty());
    }
}
