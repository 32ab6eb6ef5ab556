//! The `xtp` receiver: joining, in-order delivery, CNTL status on SREQ, FASTNAK.

use super::*;

crate::config::receiver_config! {
    /// Receiver parameters.
    pub struct ReceiverConfig {
        /// Packets the receiver buffers beyond `rseq` (its allocation).
        pub buffer: usize = 256,
    }
    pub fn new();
}

/// The `xtp` receiver.
#[derive(Debug)]
pub struct Receiver {
    cfg: ReceiverConfig,
    out: Outbox,
    sender: Option<NodeId>,
    joined: bool,
    win: SeqWindow,
    held: BTreeMap<u64, (u16, Bytes)>,
    partial: Vec<u8>,
    skipping: bool,
    delivered: u64,
    noerr: bool,
    fastnak: bool,
    nak_rseq: Option<u64>,
}

impl Receiver {
    /// A receiver built from `cfg`.
    pub fn new(cfg: ReceiverConfig) -> Self {
        let cap = cfg.buffer.max(1);
        Receiver {
            cfg,
            out: Outbox::new(),
            sender: None,
            joined: false,
            win: SeqWindow::new(cap),
            held: BTreeMap::new(),
            partial: Vec::new(),
            skipping: false,
            delivered: 0,
            noerr: false,
            fastnak: false,
            nak_rseq: None,
        }
    }

    /// Every packet below this is held (XTP's `rseq`).
    pub fn rseq(&self) -> u64 {
        self.win.base()
    }
    /// Whether the receiver has joined an association.
    pub fn joined(&self) -> bool {
        self.joined
    }

    fn join(&mut self, from: NodeId, seq: u64, mid_stream: bool) {
        self.joined = true;
        self.sender = Some(from);
        self.win = SeqWindow::starting_at(seq, self.cfg.buffer.max(1));
        self.skipping = mid_stream;
    }

    fn note_options(&mut self, options: u16) {
        self.noerr = options & opt::NOERR != 0;
        self.fastnak = options & opt::FASTNAK != 0;
    }

    fn deliver(&mut self, data: Bytes) {
        self.out.deliver(self.delivered, data);
        self.delivered += 1;
    }

    fn process(&mut self, options: u16, payload: &Bytes) {
        if options & opt::RECS != 0 {
            self.skipping = false;
            self.partial.clear();
            let mut recs = Vec::new();
            for r in wire::records(payload) {
                match r {
                    Ok(d) => recs.push(payload.slice_ref(d)),
                    Err(_) => {
                        self.out.stats.malformed += 1;
                        break;
                    }
                }
            }
            for d in recs {
                self.deliver(d);
            }
            return;
        }
        if self.skipping {
            if options & opt::EOM != 0 {
                self.skipping = false;
            }
            return;
        }
        self.partial.extend_from_slice(payload);
        if options & opt::EOM != 0 {
            let d = Bytes::from(std::mem::take(&mut self.partial));
            self.deliver(d);
        }
    }

    fn send_status(&mut self, to: NodeId, echo: u16, fastnak: bool) {
        let base = self.win.base();
        let mut spans: Vec<Span> = Vec::new();
        for &s in self.held.keys() {
            if s < base {
                continue;
            }
            match spans.last_mut() {
                Some(l) if l.right == s => l.right = s + 1,
                _ => {
                    if spans.len() == MAX_SPANS {
                        break;
                    }
                    spans.push(Span {
                        left: s,
                        right: s + 1,
                    });
                }
            }
        }
        let mut raw = Vec::with_capacity(spans.len() * wire::SPAN_LEN);
        Spans::encode(spans, &mut raw);
        let Ok(spans) = Spans::from_raw(&raw) else {
            return;
        };
        let st = Status {
            rseq: base,
            echo,
            options: 0,
            alloc: base.saturating_add(self.cfg.buffer as u64),
            spans,
        };
        let msg = Message::Xtp(if fastnak {
            wire::Message::Fastnak(st)
        } else {
            wire::Message::Cntl(st)
        });
        let env = crate::outbox::envelope(self.cfg.session, self.cfg.node, 0);
        self.out.control(to, env, &msg);
    }

    fn on_data(&mut self, from: NodeId, seq: u64, options: u16, payload: &[u8]) {
        if !self.joined {
            self.join(from, seq, seq != 0 && options & opt::RECS == 0);
        }
        self.note_options(options);
        if self.noerr && seq > self.win.base() {
            // Unreliable: what is missing stays missing.
            for s in self.win.base()..seq.min(self.win.base().saturating_add(1_000_000)) {
                self.out.event(Event::LossDetected { seq: s });
            }
            self.partial.clear();
            self.skipping = true;
            self.held.clear();
            self.win = SeqWindow::starting_at(seq, self.cfg.buffer.max(1));
        }
        if self.out.arrived(&mut self.win, seq) {
            self.held
                .insert(seq, (options, Bytes::copy_from_slice(payload)));
            while let Some(s) = self.win.pop_in_order() {
                if let Some((o, d)) = self.held.remove(&s) {
                    self.process(o, &d);
                }
            }
            let base = self.win.base();
            if !self.noerr && self.fastnak && base < seq && self.nak_rseq != Some(base) {
                self.nak_rseq = Some(base);
                self.out.event(Event::LossDetected { seq: base });
                self.send_status(from, 0, true);
            }
        }
    }
}

impl Agent for Receiver {
    fn handle_packet(&mut self, _now: Time, from: NodeId, packet: &[u8]) {
        let Some(m) = self.out.accept(packet, self.cfg.session) else {
            return;
        };
        if self.sender.is_some_and(|s| s != from) {
            self.out.ignore();
            return;
        }
        match &m {
            wire::Message::First {
                seq, sync, options, ..
            } => {
                if !self.joined {
                    self.join(from, *seq, false);
                }
                self.note_options(*options);
                if options & opt::SREQ != 0 && !self.noerr {
                    self.send_status(from, *sync, false);
                }
            }
            wire::Message::Data {
                seq,
                sync,
                options,
                payload,
            } => {
                self.on_data(from, *seq, *options, payload);
                if options & opt::SREQ != 0 && !self.noerr {
                    self.send_status(from, *sync, false);
                }
            }
            wire::Message::Cntl(st) if st.options & opt::SREQ != 0 => {
                // The sender's synchronizing handshake: `rseq` is its next sequence number.
                if !self.joined {
                    self.join(from, st.rseq, st.rseq != 0);
                }
                self.send_status(from, st.echo, false);
            }
            _ => self.out.ignore(),
        }
    }

    fn handle_timeout(&mut self, _now: Time) {}
    fn poll_timeout(&self) -> Option<Time> {
        None
    }
    crate::outbox_field!(out);
}
