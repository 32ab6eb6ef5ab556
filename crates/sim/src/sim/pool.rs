//! Packets in flight: each originated packet once (payload, route), and the copies of it
//! travelling towards nodes, both in free-listed slabs so that a run allocates only while
//! the number in flight grows.

use rmcast_proto::{Bytes, Dest};
use rmcast_wire::PacketClass;

/// An originated packet, shared by its copies (reference counted).
pub(crate) struct Pkt {
    pub(crate) payload: Bytes,
    pub(crate) src: u32,
    pub(crate) dest: Dest,
    /// The routing tree it follows (an index into the route cache).
    pub(crate) tree: u32,
    pub(crate) class: Option<PacketClass>,
    refs: u32,
    pub(crate) id: u64,
}

/// One copy of a packet on its way to `node`, entering it on `iface`; `local` is `node`'s
/// place in the packet's tree (`NONE`: off the tree, addressed only).
#[derive(Clone, Copy)]
pub(crate) struct Copy {
    pub(crate) pkt: u32,
    pub(crate) local: u32,
    pub(crate) node: u32,
    pub(crate) iface: u32,
}

#[derive(Default)]
pub(crate) struct Pool {
    pkts: Vec<Pkt>,
    pkt_free: Vec<u32>,
    next_id: u64,
    copies: Vec<Copy>,
    copy_free: Vec<u32>,
}

impl Pool {
    /// The next packet id (ids number packets in origination order).
    pub(crate) fn next_id(&mut self) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Store a packet held once (by the caller, until [`Pool::release`]).
    pub(crate) fn insert(
        &mut self,
        id: u64,
        payload: Bytes,
        src: u32,
        dest: Dest,
        tree: u32,
        class: Option<PacketClass>,
    ) -> u32 {
        let pk = Pkt {
            payload,
            src,
            dest,
            tree,
            class,
            refs: 1,
            id,
        };
        if let Some(i) = self.pkt_free.pop() {
            self.pkts[i as usize] = pk;
            i
        } else {
            self.pkts.push(pk);
            self.pkts.len() as u32 - 1
        }
    }

    pub(crate) fn pkt(&self, p: u32) -> &Pkt {
        &self.pkts[p as usize]
    }

    /// One more holder of packet `p` (a frame queued on a bus).
    pub(crate) fn hold(&mut self, p: u32) {
        self.pkts[p as usize].refs += 1;
    }

    /// A new copy (it holds its packet).
    pub(crate) fn new_copy(&mut self, c: Copy) -> u32 {
        self.hold(c.pkt);
        self.store_copy(c)
    }

    /// Store copy `c`, which already holds its packet (a copy that travelled inline and now
    /// waits in a host queue or for its delivery event).
    pub(crate) fn store_copy(&mut self, c: Copy) -> u32 {
        if let Some(i) = self.copy_free.pop() {
            self.copies[i as usize] = c;
            i
        } else {
            self.copies.push(c);
            self.copies.len() as u32 - 1
        }
    }

    /// Take copy `c` out of its slot; the copy keeps its hold on the packet (the caller
    /// [`Pool::release`]s it).
    pub(crate) fn take_copy(&mut self, c: u32) -> Copy {
        self.copy_free.push(c);
        self.copies[c as usize]
    }

    /// Copy `c` is done with (delivered, dropped or consumed).
    pub(crate) fn free_copy(&mut self, c: u32) {
        let p = self.copies[c as usize].pkt;
        self.copy_free.push(c);
        self.release(p);
    }

    /// One holder of packet `p` lets go of it; the last frees it.
    pub(crate) fn release(&mut self, p: u32) {
        let pk = &mut self.pkts[p as usize];
        pk.refs -= 1;
        if pk.refs == 0 {
            pk.payload = Bytes::new();
            self.pkt_free.push(p);
        }
    }
}
