//! The application's send queue every sender shares: messages handed to `SenderAgent::send` wait
//! here until the protocol's window takes them. It enforces the three refusals of
//! [`SenderAgent::send`](crate::SenderAgent::send) in one place: closed, too large, full.

use crate::outbox::envelope;
use crate::retx::RetransmitBuffer;
use crate::timer::TimerSet;
use crate::{Dest, Event, GroupId, NodeId, Outbox, SendError, Time};
use bytes::Bytes;
use core::time::Duration;
use rmcast_wire::Message;
use std::collections::VecDeque;

/// The refusals of [`SenderAgent::send`](crate::SenderAgent::send) that do not depend on a queue,
/// for a sender that transmits at once (no window): closed, then larger than `max_message` bytes.
pub fn admit(closed: bool, data: &Bytes, max_message: usize) -> Result<(), SendError> {
    if closed {
        return Err(SendError::Closed);
    }
    if data.len() > max_message {
        return Err(SendError::TooLarge {
            len: data.len(),
            max: max_message,
        });
    }
    Ok(())
}

/// The timers of a [`Originals`] source: its linger after
/// [`SenderAgent::close`](crate::SenderAgent::close), its periodic announcement of the leading edge
/// (PGM's SPM, LMS's HEARTBEAT, SRM's SESSION), and the protocol's own (`K`); at equal deadlines
/// they expire in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum SourceTimer<K = ()> {
    /// The linger ran out ([`Originals::lingered`]).
    Linger,
    /// The next announcement is due ([`Originals::announced`] once it went out).
    Announce,
    /// One of the protocol's own timers.
    Own(K),
}

/// The sending side of a source that multicasts each application message at once and keeps
/// it for repair — the `pgm` and `lms` sources and `srm`'s members — written once: its identity
/// on the wire, the numbering of original data, the closed state behind
/// [`SenderAgent::send`](crate::SenderAgent::send) and [`close`](crate::SenderAgent::close), and
/// the timers ([`SourceTimer`]) of a source without acknowledgements: periodic announcements from
/// the start, and [`Event::Completed`] a linger after the close, when announcements stop (the
/// source cannot know when receivers finish).
#[derive(Debug, Clone)]
pub(crate) struct Originals {
    node: NodeId,
    group: GroupId,
    session: u32,
    format: DataFormat,
    next: u64,
    closed: bool,
}

/// How a family sends original data: the largest message, and the packet carrying `seq`
/// with `payload`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct DataFormat {
    pub max_message: usize,
    pub data: for<'a> fn(u64, &'a [u8]) -> Message<'a>,
}

impl Originals {
    /// `node` sending to `group` in `session`, its data as `format` says.
    pub(crate) fn new(node: NodeId, group: GroupId, session: u32, format: DataFormat) -> Self {
        Originals {
            node,
            group,
            session,
            format,
            next: 0,
            closed: false,
        }
    }

    /// The source's timers at the start: the first announcement at once, if it announces
    /// (every `announce`).
    pub(crate) fn timers<K: Ord + Copy>(announce: Option<Duration>) -> TimerSet<SourceTimer<K>> {
        let mut timers = TimerSet::new();
        if announce.is_some() {
            timers.set(SourceTimer::Announce, Time::ZERO);
        }
        timers
    }

    /// The sequence number the next message gets: the leading edge the source announces.
    pub(crate) fn next(&self) -> u64 {
        self.next
    }

    /// Whether [`Originals::close`] was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.closed
    }

    /// Multicast `msg` to the group, `flags` in its header.
    pub(crate) fn push(&self, out: &mut Outbox, msg: &Message<'_>, flags: u8) {
        out.transmit(
            Dest::Group(self.group),
            envelope(self.session, self.node, flags),
            msg,
        );
    }

    /// [`SenderAgent::send`](crate::SenderAgent::send): [`admit`], then number the message,
    /// multicast it, count it in `data_sent` and keep it in `buf` for repair.
    pub(crate) fn send(
        &mut self,
        now: Time,
        payload: Bytes,
        out: &mut Outbox,
        buf: &mut RetransmitBuffer,
    ) -> Result<(), SendError> {
        admit(self.closed, &payload, self.format.max_message)?;
        let seq = self.next;
        self.next += 1;
        out.stats.data_sent += 1;
        self.push(out, &(self.format.data)(seq, &payload), 0);
        buf.insert(seq, payload, now);
        Ok(())
    }

    /// An announcement went out at `now`: the next one `announce` later (at least 1 µs),
    /// unless the source is done.
    pub(crate) fn announced<K: Ord + Copy>(
        &self,
        timers: &mut TimerSet<SourceTimer<K>>,
        now: Time,
        announce: Option<Duration>,
    ) {
        let done = self.closed && !timers.is_armed(SourceTimer::Linger);
        if let (Some(i), false) = (announce, done) {
            timers.set(SourceTimer::Announce, now + i.max(Duration::from_micros(1)));
        }
    }

    /// [`SenderAgent::close`](crate::SenderAgent::close): the first time, the linger starts (it
    /// lasts `linger`).
    pub(crate) fn close<K: Ord + Copy>(
        &mut self,
        timers: &mut TimerSet<SourceTimer<K>>,
        now: Time,
        linger: Duration,
    ) {
        if !std::mem::replace(&mut self.closed, true) {
            timers.set(SourceTimer::Linger, now + linger);
        }
    }

    /// The linger ran out: no more announcements, and the source reports
    /// [`Event::Completed`].
    pub(crate) fn lingered<K: Ord + Copy>(timers: &mut TimerSet<SourceTimer<K>>, out: &mut Outbox) {
        timers.cancel(SourceTimer::Announce);
        out.event(Event::Completed);
    }
}

/// Implements [`SenderAgent::close`](crate::SenderAgent::close) and
/// [`send`](crate::SenderAgent::send) of a source whose sending side is the [`Originals`] field
/// `sent`, its repair buffer `buf` and its [`SourceTimer`] set `timers`: `close` starts the linger
/// (`self.cfg.linger`), after which the source reports `Completed` — it has no positive
/// acknowledgments to wait for; `send` multicasts the message at once and keeps it for repair, then
/// calls the agent's `after_send` method if one is named (pgm's proactive parity). Write it inside
/// the trait impl: `originals_field!(sent, buf: buf, timers: timers);`.
macro_rules! originals_field {
    ($sent:ident, buf: $buf:ident, timers: $timers:ident $(, after_send: $after:ident)?) => {
        fn close(&mut self, now: $crate::Time) {
            self.$sent.close(&mut self.$timers, now, self.cfg.linger);
        }
        fn send(
            &mut self,
            now: $crate::Time,
            data: $crate::Bytes,
        ) -> Result<(), $crate::SendError> {
            self.$sent.send(now, data, &mut self.out, &mut self.$buf)?;
            $(self.$after();)?
            Ok(())
        }
    };
}
pub(crate) use originals_field;

/// Implements [`Agent::handle_timeout`](crate::Agent::handle_timeout) and `poll_timeout` of
/// an [`Originals`] source through its [`SourceTimer`] set `timers`: at an announcement the
/// agent's `$announce(now)` sends it and the next is scheduled `self.cfg.$every` later (or,
/// written `every $method()`, what the agent's `$method(&mut self)` returns); at the
/// end of the linger the source reports `Completed` ([`Originals::lingered`]); the protocol's
/// own timers go to `$own(now, key)`. Write it inside the trait impl:
/// `source_timers!(sent, timers, announce: spm every spm_interval, own: rdata);`.
macro_rules! source_timers {
    ($sent:ident, $timers:ident, announce: $announce:ident every $every:ident $(, own: $own:ident)?) => {
        $crate::sendq::source_timers!(@ $sent, $timers, $announce, (|s: &Self| s.cfg.$every) $(, $own)?);
    };
    ($sent:ident, $timers:ident, announce: $announce:ident every $every:ident() $(, own: $own:ident)?) => {
        $crate::sendq::source_timers!(@ $sent, $timers, $announce, (|s: &mut Self| s.$every()) $(, $own)?);
    };
    (@ $sent:ident, $timers:ident, $announce:ident, $every:tt $(, $own:ident)?) => {
        fn handle_timeout(&mut self, now: $crate::Time) {
            use $crate::sendq::SourceTimer;
            while let Some(key) = self.$timers.pop_expired(now) {
                match key {
                    SourceTimer::Announce => {
                        self.$announce(now);
                        let every = $every(self);
                        self.$sent.announced(&mut self.$timers, now, every);
                    }
                    SourceTimer::Linger => {
                        $crate::sendq::Originals::lingered(&mut self.$timers, &mut self.out)
                    }
                    SourceTimer::Own(_key) => {
                        $(self.$own(now, _key);)?
                    }
                }
            }
        }
        fn poll_timeout(&self) -> Option<$crate::Time> {
            self.$timers.next()
        }
    };
}
pub(crate) use source_timers;

/// Implements [`SenderAgent::send`](crate::SenderAgent::send),
/// [`can_send`](crate::SenderAgent::can_send) and [`close`](crate::SenderAgent::close) of a sender
/// whose application messages wait in the [`SendQueue`] field `field`: `send` queues the message
/// (or says why not) and then calls `self.take(now)` so the window takes what it can; `can_send` is
/// the queue's [`can_accept`](SendQueue::can_accept); `close` closes the queue and then calls
/// `after_close(self, now)` (what the sender does once no more messages come). Write it inside the
/// trait impl: `send_queue_field!(queue, take: fill, after_close: |s, _| s.maybe_complete());`.
macro_rules! send_queue_field {
    ($field:ident, take: $take:ident, after_close: $after_close:expr) => {
        fn send(
            &mut self,
            now: $crate::Time,
            data: $crate::Bytes,
        ) -> Result<(), $crate::SendError> {
            self.$field.offer(data)?;
            self.$take(now);
            Ok(())
        }

        fn can_send(&self) -> bool {
            self.$field.can_accept()
        }

        fn close(&mut self, now: $crate::Time) {
            self.$field.close();
            let after_close: fn(&mut Self, $crate::Time) = $after_close;
            after_close(self, now);
        }
    };
}
pub(crate) use send_queue_field;

/// Messages accepted from the application and not yet taken by the protocol's window.
#[derive(Debug, Clone)]
pub struct SendQueue {
    queue: VecDeque<Bytes>,
    limit: usize,
    max_message: usize,
    closed: bool,
    completed: bool,
}

impl SendQueue {
    /// A queue holding at most `limit` messages (at least 1) of at most `max_message` bytes.
    pub fn new(limit: usize, max_message: usize) -> Self {
        SendQueue {
            queue: VecDeque::new(),
            limit: limit.max(1),
            max_message,
            closed: false,
            completed: false,
        }
    }
    /// Queue `data`, or say why not (handing a full queue's message back).
    pub fn offer(&mut self, data: Bytes) -> Result<(), SendError> {
        admit(self.closed, &data, self.max_message)?;
        if !self.can_accept() {
            return Err(SendError::Full(data));
        }
        self.queue.push_back(data);
        Ok(())
    }
    /// Whether [`offer`](Self::offer) would accept a message now.
    pub fn can_accept(&self) -> bool {
        !self.closed && self.queue.len() < self.limit
    }
    /// No more messages will be offered.
    pub fn close(&mut self) {
        self.closed = true;
    }
    /// Whether [`close`](Self::close) was called.
    pub fn is_closed(&self) -> bool {
        self.closed
    }
    /// Whether the sender is done just now: closed, nothing queued, `idle` (the sender holds
    /// nothing in flight) and not done before. True at most once; the sender then reports
    /// [`Event::Completed`].
    pub fn complete(&mut self, idle: bool) -> bool {
        if self.closed && !self.completed && idle && self.queue.is_empty() {
            self.completed = true;
            return true;
        }
        false
    }
    /// The oldest queued message.
    pub fn pop_front(&mut self) -> Option<Bytes> {
        self.queue.pop_front()
    }
    /// Messages queued.
    pub fn len(&self) -> usize {
        self.queue.len()
    }
    /// Whether no message is queued.
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_closed_too_large_and_full_in_that_order() {
        let mut q = SendQueue::new(2, 4);
        assert!(q.offer(Bytes::from_static(b"abcd")).is_ok());
        assert!(matches!(
            q.offer(Bytes::from_static(b"abcde")),
            Err(SendError::TooLarge { len: 5, max: 4 })
        ));
        assert!(q.offer(Bytes::from_static(b"b")).is_ok());
        assert!(!q.can_accept());
        assert_eq!(
            q.offer(Bytes::from_static(b"c")),
            Err(SendError::Full(Bytes::from_static(b"c")))
        );
        assert_eq!(q.pop_front(), Some(Bytes::from_static(b"abcd")));
        assert!(q.can_accept());
        q.close();
        assert!(q.is_closed() && !q.can_accept());
        assert_eq!(q.offer(Bytes::from_static(b"d")), Err(SendError::Closed));
        assert_eq!(q.len(), 1);
    }

    #[test]
    fn a_zero_limit_still_holds_one_message() {
        let mut q = SendQueue::new(0, 10);
        assert!(q.offer(Bytes::from_static(b"x")).is_ok());
        assert!(!q.can_accept());
    }
}
