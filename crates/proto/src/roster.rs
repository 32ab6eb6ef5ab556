//! [`Roster`]: the receivers a sender waits for, looked up by node id. Every sender that
//! keeps per-receiver state in a `Vec` (by the receiver's position in its configuration)
//! finds a feedback packet's slot and forgets an evicted receiver through it.

use crate::{GroupId, NodeId};

/// Who a one-to-many sender is and whom it serves: the identity every group sender's
/// configuration (saw, bap, rra, ff, prmp, xtp) embeds as its `id` field, written once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SenderIdentity {
    /// This agent's node id (the source of every datagram it sends).
    pub node: NodeId,
    /// Session id: carried in every datagram, and datagrams of another session are ignored.
    pub session: u32,
    /// The multicast group the data goes to.
    pub group: GroupId,
    /// The static group membership: the receivers the sender serves and waits for.
    pub receivers: Vec<NodeId>,
}

impl SenderIdentity {
    /// `node` sending to `group` for `receivers`, in session 0.
    pub fn new(node: NodeId, group: GroupId, receivers: Vec<NodeId>) -> Self {
        SenderIdentity {
            node,
            session: 0,
            group,
            receivers,
        }
    }
}

/// Lets a sender configuration that embeds a [`SenderIdentity`] as its `id` field be read and
/// set as if the identity's fields were its own (`cfg.session = 7`, `cfg.receivers.len()`).
macro_rules! embeds_sender_identity {
    ($config:ty) => {
        impl core::ops::Deref for $config {
            type Target = $crate::roster::SenderIdentity;
            fn deref(&self) -> &Self::Target {
                &self.id
            }
        }
        impl core::ops::DerefMut for $config {
            fn deref_mut(&mut self) -> &mut Self::Target {
                &mut self.id
            }
        }
    };
}
pub(crate) use embeds_sender_identity;

/// Receivers sorted by node id, each with its *slot*: its position in the configured
/// receiver list (the first one where a node is listed twice).
#[derive(Debug, Clone, Default)]
pub struct Roster {
    index: Vec<(NodeId, usize)>,
}

impl Roster {
    /// The roster of `receivers`; a node listed twice keeps its first slot.
    pub fn new(receivers: &[NodeId]) -> Self {
        let mut index: Vec<(NodeId, usize)> =
            receivers.iter().enumerate().map(|(i, &n)| (n, i)).collect();
        index.sort_unstable();
        index.dedup_by_key(|(n, _)| *n);
        Roster { index }
    }

    /// The slot of `node`, if it is on the roster.
    pub fn slot(&self, node: NodeId) -> Option<usize> {
        let pos = self.index.binary_search_by_key(&node, |&(n, _)| n).ok()?;
        self.index.get(pos).map(|&(_, i)| i)
    }

    /// Take `node` off the roster; its slot, or `None` if it was not on it.
    pub fn remove(&mut self, node: NodeId) -> Option<usize> {
        let pos = self.index.binary_search_by_key(&node, |&(n, _)| n).ok()?;
        Some(self.index.remove(pos).1)
    }

    /// The slots of the receivers on the roster, in node-id order.
    pub fn slots(&self) -> impl Iterator<Item = usize> + '_ {
        self.index.iter().map(|&(_, i)| i)
    }

    /// How many receivers are on the roster.
    pub fn len(&self) -> usize {
        self.index.len()
    }

    /// Whether the roster is empty (every receiver removed, or none configured).
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_follow_the_configuration_and_duplicates_keep_the_first() {
        let mut r = Roster::new(&[NodeId(7), NodeId(3), NodeId(7), NodeId(5)]);
        assert_eq!(r.len(), 3);
        assert_eq!(r.slot(NodeId(7)), Some(0));
        assert_eq!(r.slot(NodeId(3)), Some(1));
        assert_eq!(r.slot(NodeId(5)), Some(3));
        assert_eq!(r.slot(NodeId(4)), None);
        assert_eq!(r.slots().collect::<Vec<_>>(), vec![1, 3, 0]);
        assert_eq!(r.remove(NodeId(3)), Some(1));
        assert_eq!(r.remove(NodeId(3)), None);
        assert_eq!(r.slot(NodeId(3)), None);
        assert_eq!(r.slots().collect::<Vec<_>>(), vec![3, 0]);
        assert!(!r.is_empty());
    }
}
