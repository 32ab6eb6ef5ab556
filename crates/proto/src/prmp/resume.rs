//! A parent that takes over children already part-way through the transfer: a standby relay
//! replacing a dead one (`rmcast relay --standby`), whose region's receivers kept their
//! windows. Before it sends anything it asks its children where they are — a POLL with
//! `POLL.SEQ` 0 naming every child not heard yet, multicast every [`resync_interval`] until
//! each active child answered (or was removed) — and then numbers its packets from the
//! lowest `LE_i` heard, each child's window starting at its own `LE_i` (and `HR_i`): a child
//! ahead of that acknowledges the packets it already holds as they go out, and one that knew
//! of packets it lacks counts as asking for them.
//!
//! A poll with `POLL.SEQ` 0 is one any child answers (§3: it is inside every window, and
//! raises `HR_i` to 0 at most), so no child needs to know it is being resumed. Without
//! [`Sender::resume_children`] nothing here runs and the parent starts at 0 as seed 004's.

use super::sender::Key;
use super::*;

/// How often a resuming parent repeats its question to the children not heard yet: its RTO
/// floor, at least 10 ms.
pub(super) fn resync_interval(min_rto: Duration) -> Duration {
    min_rto.max(Duration::from_millis(10))
}

impl Sender {
    /// Ask the children where they are before sending anything, and start from the lowest
    /// left edge heard (module doc). Only before the first packet went out; `false` (and
    /// nothing changes) after that.
    pub fn resume_children(&mut self) -> bool {
        if self.next_seq != 0 || self.resync.is_some() || !self.outstanding.is_empty() {
            return false;
        }
        self.resync = Some(BTreeMap::new());
        self.timers.set(Key::Resync, Time::ZERO);
        true
    }

    /// Whether it is still asking its children where they are (sends no data meanwhile).
    pub fn resuming(&self) -> bool {
        self.resync.is_some()
    }

    /// The question again, to the active children not heard yet; done when there are none.
    pub(super) fn resync_poll(&mut self, now: Time) {
        let Some(heard) = &self.resync else {
            return;
        };
        let waiting: Vec<u32> = self
            .children
            .iter()
            .enumerate()
            .filter(|&(i, c)| c.active && !heard.contains_key(&i))
            .map(|(_, c)| c.node.0)
            .take(MAX_POLL_CLD)
            .collect();
        if waiting.is_empty() {
            return self.resync_check(now);
        }
        let mut raw = Vec::with_capacity(waiting.len() * 4);
        wire::ChildList::encode_ids(waiting, &mut raw);
        if let Some(cld) = wire::ChildList::from_raw(&raw) {
            let msg = wire::Message::Poll {
                ts: now.as_nanos(),
                seq: 0,
                cld,
            };
            let env = crate::outbox::envelope(self.cfg.session, self.cfg.node, 0);
            if self
                .out
                .transmit(Dest::Group(self.cfg.group), env, &Message::Prmp(msg))
            {
                self.out.stats.control_sent += 1;
            }
        }
        let next = now + resync_interval(self.cfg.min_rto);
        self.timers.set(Key::Resync, next);
    }

    /// A child's answer while resuming: where it is.
    pub(super) fn resync_resp(&mut self, now: Time, i: usize, le: u64, hr: Option<u64>) {
        if let Some(heard) = self.resync.as_mut() {
            heard.insert(i, (le, hr.filter(|&h| h.checked_add(1) >= Some(le))));
        }
        self.resync_check(now);
    }

    /// Every active child heard: number from the lowest left edge, each child's window at its
    /// own.
    pub(super) fn resync_check(&mut self, now: Time) {
        let Some(heard) = &self.resync else {
            return;
        };
        let all = self
            .children
            .iter()
            .enumerate()
            .all(|(i, c)| !c.active || heard.contains_key(&i));
        if !all {
            return;
        }
        let Some(heard) = self.resync.take() else {
            return;
        };
        self.timers.cancel(Key::Resync);
        let base = self
            .children
            .iter()
            .enumerate()
            .filter(|(_, c)| c.active)
            .filter_map(|(i, _)| heard.get(&i).map(|&(le, _)| le))
            .min()
            .unwrap_or(0);
        self.next_seq = base;
        let cap = usize::try_from(self.cfg.window).unwrap_or(usize::MAX);
        self.les.clear();
        for (i, c) in self.children.iter_mut().enumerate() {
            if !c.active {
                continue;
            }
            let (le, hr) = heard.get(&i).copied().unwrap_or((base, None));
            c.w = SeqWindow::starting_at(le, cap);
            c.hr = hr;
            self.ahead |= le > base || hr.is_some();
            *self.les.entry(le).or_insert(0) += 1;
        }
        self.pump(now);
    }
}
