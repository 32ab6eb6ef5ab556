//! [`NodeLists`]: per-node lists that most nodes of a large network leave empty (loss rules,
//! recorded events), at 4 bytes a node instead of an empty `Vec`'s 24.

use crate::network::NONE;

/// A list per node, stored only for the nodes that have one: a node's slot in `at` (grown
/// only as far as the highest such node) names its list in `lists`, or is `NONE`.
#[derive(Debug, Clone)]
pub(crate) struct NodeLists<T> {
    at: Vec<u32>,
    lists: Vec<Vec<T>>,
}

impl<T> Default for NodeLists<T> {
    fn default() -> Self {
        NodeLists {
            at: Vec::new(),
            lists: Vec::new(),
        }
    }
}

impl<T> NodeLists<T> {
    /// Append `item` to `node`'s list.
    pub(crate) fn push(&mut self, node: usize, item: T) {
        if self.at.len() <= node {
            self.at.resize(node + 1, NONE);
        }
        if self.at[node] == NONE {
            self.at[node] = self.lists.len() as u32;
            self.lists.push(Vec::new());
        }
        self.lists[self.at[node] as usize].push(item);
    }

    /// `node`'s list (empty if it has none).
    pub(crate) fn get(&self, node: usize) -> &[T] {
        match self.at.get(node) {
            Some(&i) if i != NONE => &self.lists[i as usize],
            _ => &[],
        }
    }

    /// `node`'s list, mutably (empty if it has none).
    pub(crate) fn get_mut(&mut self, node: usize) -> &mut [T] {
        match self.at.get(node) {
            Some(&i) if i != NONE => &mut self.lists[i as usize],
            _ => &mut [],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_per_node_in_push_order() {
        let mut l = NodeLists::default();
        assert!(l.get(5).is_empty() && l.get_mut(0).is_empty());
        l.push(7, 'a');
        l.push(2, 'b');
        l.push(7, 'c');
        assert_eq!(l.get(7), ['a', 'c']);
        assert_eq!(l.get(2), ['b']);
        assert!(l.get(3).is_empty() && l.get(8).is_empty());
        l.get_mut(7)[1] = 'd';
        assert_eq!(l.get(7), ['a', 'd']);
        assert_eq!(l.at.len(), 8, "grown only to the highest node with a list");
    }
}
