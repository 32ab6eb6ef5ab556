//! PGM's on-demand parity (FEC repair, see the module doc of [`super`]): the source's block
//! NAK answers and the receiver's block state, NAKs and decoding.

use super::*;

/// FEC repair at the source.
impl Source {
    /// The source packets of block `block` (`k` each), if all were sent and are still held.
    pub(super) fn block_sources(&self, block: u64) -> Option<Vec<Bytes>> {
        let k = u64::from(self.cfg.fec_k);
        let first = block.checked_mul(k)?;
        if k == 0 || first.checked_add(k)? > self.sent.next() {
            return None;
        }
        (first..first + k)
            .map(|seq| self.buf.get(seq).map(|e| e.data.clone()))
            .collect()
    }

    /// A block NAK: confirm it with the total this block's parity will reach, and send the
    /// parity indices from the next unused one up to `total` (at most the block's 256 − k).
    pub(super) fn block_nak(&mut self, block: u64, total: u16) {
        let Some(sources) = self.block_sources(block) else {
            return self.out.ignore();
        };
        self.block_naks_received += 1;
        let k = usize::from(self.cfg.fec_k);
        let total = total.min(fec::max_parity(k) as u16);
        let sent = self.parity_sent.get(&block).copied().unwrap_or(0);
        self.out.stats.control_sent += 1;
        self.push(
            wire::Message::BlockNcf {
                block,
                total: total.max(sent),
            },
            0,
        );
        self.send_parity(block, &sources, sent, total);
    }

    /// After an original: if it completed a block, multicast the block's first
    /// `fec_proactive` parity symbols (proactive parity), unasked.
    pub(super) fn proactive_parity(&mut self) {
        let (k, n) = (u64::from(self.cfg.fec_k), self.cfg.fec_proactive);
        let next = self.sent.next();
        if k == 0 || n == 0 || !next.is_multiple_of(k) {
            return;
        }
        let block = next / k - 1;
        let Some(sources) = self.block_sources(block) else {
            return;
        };
        let n = n.min(fec::max_parity(k as usize) as u16);
        self.send_parity(block, &sources, 0, n);
    }

    /// Parity indices `from..to` of `block` (from its `sources`), each counted a repair; the
    /// block's next unused index becomes `to`. Nothing when `to <= from`.
    fn send_parity(&mut self, block: u64, sources: &[Bytes], from: u16, to: u16) {
        if to <= from {
            return;
        }
        let Ok(parity) = fec::parity(sources, usize::from(from), usize::from(to - from)) else {
            return;
        };
        for (index, payload) in (from..to).zip(parity) {
            self.out.stats.repairs_sent += 1;
            self.push(
                wire::Message::Parity {
                    block,
                    index,
                    k: self.cfg.fec_k,
                    payload: &payload,
                },
                FLAG_RETRANSMISSION,
            );
        }
        self.parity_sent.insert(block, to);
    }
}

/// FEC repair (see the module doc).
impl Receiver {
    pub(super) fn k(&self) -> u64 {
        u64::from(self.cfg.fec_k)
    }

    /// Block `block`'s state, made if missing (`None` with FEC off).
    pub(super) fn block(&mut self, block: u64) -> Option<&mut RxBlock> {
        let k = usize::from(self.cfg.fec_k);
        match self.blocks.entry(block) {
            std::collections::btree_map::Entry::Occupied(e) => Some(e.into_mut()),
            std::collections::btree_map::Entry::Vacant(e) => Some(e.insert(RxBlock {
                dec: BlockDecoder::new(k).ok()?,
                known: 0,
                naked: None,
                phase: None,
                per_packet: false,
            })),
        }
    }

    /// Whether every packet of `block` is known to have been sent, and with proactive parity
    /// also that symbol: the block's last proactive symbol (or any later one) arrived, or a
    /// packet beyond the block did.
    pub(super) fn ended(&self, block: u64) -> bool {
        block_ended(
            block,
            self.k(),
            self.lead,
            self.cfg.fec_proactive,
            self.blocks.get(&block),
        )
    }

    /// A loss was detected: its block NAKs it once the block's end is known; until then it
    /// waits `nak_repeat`, then goes the packet-by-packet way.
    pub(super) fn fec_loss(&mut self, now: Time, seq: u64) {
        let b = seq / self.k();
        if self.block(b).is_none_or(|blk| blk.per_packet) {
            return self.backoff(now, seq);
        }
        if self.ended(b) {
            return self.blocks_ended(now);
        }
        self.lost.insert(seq, Phase::BlockWait);
        self.timers.set(
            Key::Seq(seq),
            now + self.wait(self.cfg.nak_repeat, Backoff::default()),
        );
    }

    /// Source packet `seq` arrived (or was decoded): the block keeps it until it is whole.
    pub(super) fn fec_source(&mut self, now: Time, seq: u64, data: Bytes) {
        let (b, i) = (seq / self.k(), (seq % self.k()) as usize);
        let Some(blk) = self.block(b) else { return };
        blk.dec.add_source(i, data);
        self.try_decode(now, b);
    }

    /// Blocks that ended with packets missing start their NAK (the losses waiting for the
    /// block's end join it).
    pub(super) fn blocks_ended(&mut self, now: Time) {
        let k = self.k();
        let (lead, proactive) = (self.lead, self.cfg.fec_proactive);
        let ended: Vec<u64> = self
            .blocks
            .range(..self.lead / k)
            .filter(|(_, blk)| blk.phase.is_none() && !blk.per_packet && !blk.dec.is_complete())
            .filter(|(&b, blk)| block_ended(b, k, lead, proactive, Some(blk)))
            .map(|(&b, _)| b)
            .collect();
        for b in ended {
            for seq in b * k..(b + 1) * k {
                if self.recovered(seq) {
                    self.timers.cancel(Key::Seq(seq));
                    if let Some(m) = self.repair.as_deref_mut() {
                        m.naked.remove(&seq);
                    }
                }
            }
            self.block_backoff(now, b);
        }
    }

    pub(super) fn block_backoff(&mut self, now: Time, b: u64) {
        let wait = self
            .rng
            .duration_between(Duration::ZERO, self.cfg.nak_backoff);
        if let Some(blk) = self.blocks.get_mut(&b) {
            blk.phase = Some(Phase::BackOff);
        }
        if wait.is_zero() {
            self.block_nak(now, b);
        } else {
            self.timers.set(Key::Block(b), now + wait);
        }
    }

    /// NAK block `b` for the parity it needs; when its parity indices are used up, NAK its
    /// missing packets one by one instead.
    pub(super) fn block_nak(&mut self, now: Time, b: u64) {
        let k = self.k();
        let Some(blk) = self.blocks.get_mut(&b) else {
            return;
        };
        let need = blk.dec.needed();
        // The source sent its proactive symbols for every whole block, heard or not.
        let proactive = usize::from(self.cfg.fec_proactive).min(fec::max_parity(k as usize));
        let total = usize::from(blk.known).max(proactive) + need;
        if total > fec::max_parity(k as usize) {
            blk.per_packet = true;
            blk.phase = None;
            let missing: Vec<u64> = (0..k)
                .filter(|&i| !blk.dec.has_source(i as usize))
                .map(|i| b * k + i)
                .collect();
            self.timers.cancel(Key::Block(b));
            for seq in missing {
                self.backoff(now, seq);
            }
            return;
        }
        blk.phase = Some(Phase::WaitNcf);
        match blk.naked.as_mut() {
            Some(n) => n.repeat(),
            None => blk.naked = Some(Naked::first(now)),
        }
        let backoff = blk.backoff();
        let env = envelope(self.cfg.session, self.cfg.node, 0);
        let nak = Message::Pgm(wire::Message::BlockNak {
            block: b,
            total: total as u16,
        });
        if self.out.transmit(Dest::Node(self.cfg.source), env, &nak) {
            self.out.stats.control_sent += 1;
        }
        let wait = self.wait(self.cfg.nak_repeat, backoff);
        self.timers.set(Key::Block(b), now + wait);
    }

    /// A block NAK's confirmation: the parity the source will have sent. One heard during
    /// the back-off that covers this receiver's need suppresses its NAK.
    pub(super) fn block_ncf(&mut self, now: Time, b: u64, total: u16) {
        self.learn(now, b.saturating_add(1).saturating_mul(self.k()));
        self.block_answered(now, b);
        let Some(backoff) = self.blocks.get(&b).map(RxBlock::backoff) else {
            return;
        };
        let rdata = self.wait(self.cfg.nak_rdata, backoff);
        let Some(blk) = self.blocks.get_mut(&b) else {
            return;
        };
        let covered = usize::from(total) >= usize::from(blk.known) + blk.dec.needed();
        blk.known = blk.known.max(total);
        let wait = match blk.phase {
            Some(Phase::WaitNcf) => true,
            Some(Phase::BackOff) => covered,
            _ => false,
        };
        if wait {
            blk.phase = Some(Phase::WaitData);
            self.timers.set(Key::Block(b), now + rdata);
        }
    }

    /// An answer (BNCF or parity) for block `b`: with adaptive timers, a sample of the repair
    /// round trip if its block NAK is outstanding and was sent once (Karn's rule, as for a
    /// packet's NAK). Without it, a receiver repaired by parity alone never measured the
    /// round trip and waited the fixed 500 / 1,000 ms on every lost BNCF or parity.
    fn block_answered(&mut self, now: Time, b: u64) {
        let (Some(m), Some(blk)) = (self.repair.as_deref_mut(), self.blocks.get_mut(&b)) else {
            return;
        };
        if let (Some(Phase::WaitNcf), Some(n)) = (blk.phase, blk.naked.as_mut()) {
            n.answer(now, &mut m.rtt);
        }
    }

    /// A parity symbol of block `b`.
    pub(super) fn parity(&mut self, now: Time, b: u64, index: u16, k: u16, symbol: Bytes) {
        // A block not tracked is wanted only if none of its packets is held (a block whose
        // packets all arrived was forgotten).
        let first = b
            .checked_mul(self.k())
            .filter(|f| f.checked_add(self.k()).is_some());
        let wanted = k == self.cfg.fec_k
            && first.is_some_and(|first| {
                self.blocks.contains_key(&b)
                    || !(first..first + self.k()).any(|s| {
                        s < self.window.window().base() || self.window.window().contains(s)
                    })
            });
        if !wanted {
            return self.out.ignore();
        }
        self.block_answered(now, b);
        match self.block(b) {
            Some(blk) => {
                blk.known = blk.known.max(index.saturating_add(1));
                if blk.dec.add_parity(usize::from(index), symbol).is_err() {
                    self.out.ignore();
                }
            }
            None => return self.out.ignore(),
        }
        self.try_decode(now, b);
        self.learn(now, b.saturating_add(1).saturating_mul(self.k()));
    }

    /// Decode block `b` if it holds `k` symbols; forget it once every source packet is held.
    pub(super) fn try_decode(&mut self, now: Time, b: u64) {
        let Some(blk) = self.blocks.get_mut(&b) else {
            return;
        };
        let mut found = Vec::new();
        if !blk.dec.is_complete() && blk.dec.needed() == 0 {
            match blk.dec.decode() {
                Ok(f) => found = f,
                // Parity that does not fit the packets held: forget it.
                Err(_) => {
                    blk.dec.clear_parity();
                    self.out.ignore();
                }
            }
        }
        if blk.dec.is_complete() {
            self.blocks.remove(&b);
            self.timers.cancel(Key::Block(b));
        }
        // The block is whole and forgotten: its decoded packets arrive as data, without
        // making it anew.
        for (i, data) in found {
            let seq = b * self.k() + i as u64;
            self.accept(now, seq, &data, Some(&data), false);
        }
    }

    pub(super) fn on_block_timer(&mut self, now: Time, b: u64) {
        let Some((next, timeout)) = self.expiry(self.blocks.get(&b).and_then(|blk| blk.phase))
        else {
            return;
        };
        let epoch = self.epoch();
        if let Some(n) = self
            .blocks
            .get_mut(&b)
            .and_then(|blk| blk.naked.as_mut())
            .filter(|_| timeout)
        {
            n.backoff.expire(epoch);
        }
        match next {
            Expiry::Nak => self.block_nak(now, b),
            Expiry::BackOff => self.block_backoff(now, b),
        }
    }
}

/// [`Receiver::ended`]'s rule for block `b` of `k` packets, the lead `lead` (the next sequence
/// number known to have been sent), `proactive` symbols after each block and the block's state.
fn block_ended(b: u64, k: u64, lead: u64, proactive: u16, blk: Option<&RxBlock>) -> bool {
    let Some(end) = b.checked_add(1).and_then(|b| b.checked_mul(k)) else {
        return false;
    };
    if proactive == 0 {
        return end <= lead;
    }
    end < lead || (end == lead && blk.is_some_and(|blk| blk.known >= proactive))
}
