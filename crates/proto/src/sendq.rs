//! The application's send queue every sender shares: messages handed to `Agent::send` wait
//! here until the protocol's window takes them. It enforces the three refusals of
//! [`Agent::send`](crate::Agent::send) in one place: closed, too large, full.

use crate::outbox::envelope;
use crate::retx::RetransmitBuffer;
use crate::{Dest, GroupId, NodeId, Outbox, SendError, Time};
use bytes::Bytes;
use rmcast_wire::Message;
use std::collections::VecDeque;

/// The refusals of [`Agent::send`](crate::Agent::send) that do not depend on a queue, for a
/// sender that transmits at once (no window): closed, then larger than `max_message` bytes.
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

/// The sending side of a source that multicasts each application message at once and keeps
/// it for repair — the `pgm` and `lms` sources and `srm`'s members — written once: its identity
/// on the wire, the numbering of original data, and the closed state behind
/// [`Agent::send`](crate::Agent::send) and [`close`](crate::Agent::close).
#[derive(Debug, Clone)]
pub(crate) struct Originals {
    node: NodeId,
    group: GroupId,
    session: u32,
    max_message: usize,
    next: u64,
    closed: bool,
}

impl Originals {
    /// `node` sending to `group` in `session`, messages of at most `max_message` bytes.
    pub(crate) fn new(node: NodeId, group: GroupId, session: u32, max_message: usize) -> Self {
        Originals {
            node,
            group,
            session,
            max_message,
            next: 0,
            closed: false,
        }
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

    /// [`Agent::send`](crate::Agent::send): [`admit`], then number the message, multicast
    /// `data(seq, payload)`, count it in `data_sent` and keep it in `buf` for repair.
    pub(crate) fn send(
        &mut self,
        now: Time,
        payload: Bytes,
        out: &mut Outbox,
        buf: &mut RetransmitBuffer,
        data: for<'a> fn(u64, &'a [u8]) -> Message<'a>,
    ) -> Result<(), SendError> {
        admit(self.closed, &payload, self.max_message)?;
        let seq = self.next;
        self.next += 1;
        out.stats.data_sent += 1;
        self.push(out, &data(seq, &payload), 0);
        buf.insert(seq, payload, now);
        Ok(())
    }

    /// [`Agent::close`](crate::Agent::close): `true` the first time (the caller then arms
    /// its linger: these sources have no acknowledgments to wait for).
    pub(crate) fn close(&mut self) -> bool {
        !std::mem::replace(&mut self.closed, true)
    }
}

/// Implements [`Agent::send`](crate::Agent::send), [`can_send`](crate::Agent::can_send) and
/// [`close`](crate::Agent::close) of a sender whose application messages wait in the
/// [`SendQueue`] field `field`: `send` queues the message (or says why not) and then calls
/// `self.take(now)` so the window takes what it can; `can_send` is the queue's
/// [`can_accept`](SendQueue::can_accept); `close` closes the queue and then calls
/// `after_close(self, now)` (what the sender does once no more messages come). Write it inside
/// the trait impl: `send_queue_field!(queue, take: fill, after_close: |s, _| s.maybe_complete());`.
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
    /// [`Event::Completed`](crate::Event::Completed).
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
