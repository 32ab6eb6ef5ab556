//! `pgm` — the essentials of PGM (RFC 3208) as seed 003 §5.10 simulated them: ODATA, RDATA,
//! NAK, NCF, SPM, and network elements (routers) that keep repair state per lost packet.
//!
//! * [`Source`] multicasts ODATA and, every [`SourceConfig::spm_interval`], an SPM announcing
//!   the leading edge (so receivers detect tail loss). It answers **every** NAK that reaches it
//!   with an NCF and an RDATA (the behaviour behind the seed's repeated retransmissions);
//!   with [`SourceConfig::repair_delay`] > 0 it instead waits that long after the first NAK
//!   and sends one RDATA for all NAKs that arrived meanwhile (the heuristic the seed mentions).
//! * [`Receiver`] detects gaps (ODATA, RDATA, SPM leading edge), waits a random NAK back-off
//!   uniform in `[0, nak_backoff]` (0 in the seed's runs), unicasts a NAK toward the source,
//!   repeats it after `nak_repeat` until an NCF arrives, then waits `nak_rdata` for the RDATA
//!   before starting over. An NCF heard during the back-off suppresses its NAK. At most
//!   [`REQUESTS_PER_ROUND`] NAKs go out, and as many new losses are detected, per round (a
//!   NAK repeat interval); the others wait for the next rounds (a defence against a forged
//!   leading edge). With
//!   [`ReceiverConfig::nak_rto_min`] set (on sockets), both waits follow the measured repair
//!   round trip instead (see there).
//! * [`NetworkElement`] is the router agent: the first NAK for a packet creates repair state
//!   (the interface it came in on), is forwarded upstream, and is confirmed with an NCF down
//!   that interface; later NAKs add their interface, are confirmed and discarded. RDATA is
//!   forwarded only on the interfaces in the state, which it then clears; RDATA without state is
//!   discarded. Upstream NCFs are absorbed (the element already confirmed downstream). State
//!   that no RDATA cleared expires after [`NeConfig::state_lifetime`].
//!
//! * **FEC repair** (on with [`SourceConfig::fec_k`] > 0; off by default, and then nothing
//!   here changes), in the spirit of RFC 3208 §11's on-demand parity: block `b` (a
//!   transmission group) is ODATA `b·k .. (b+1)·k`. A receiver missing packets of a block
//!   whose end it knows (a later packet, an SPM's lead or the block's parity) NAKs the block
//!   once (BNAK) with the parity total it needs: the parity the source is known to have sent
//!   for it plus the symbols it still lacks. A network element keeps per block the largest
//!   total it forwarded and forwards a block NAK only when its total is larger (each NAK is
//!   confirmed with a BNCF carrying that largest total, so a receiver learns what was asked);
//!   parity goes down the interfaces that asked until the asked total has passed. The source
//!   answers a block NAK with the parity indices from the next unused one up to the total
//!   ([`crate::fec`]: index `j` is the same symbol however many are made), so one parity
//!   packet repairs different losses at different receivers, and a receiver decodes as soon
//!   as it holds `k` symbols of the block. A loss in a block whose end is not known within
//!   `nak_repeat` (the stream paused or ended mid-block) is repaired packet by packet with
//!   RDATA as without FEC, and so is a block that has used up its 256 − `k` parity indices.
//!   Block NAKs are not counted by the NAK budget (there is one per block, not per packet).
//!
//! Set-up: [`deploy`] lays the roles out on a [`Layout`](crate::deploy::Layout) (the driver's
//! topology as plain data) with typed [`Params`], whose defaults are the spec's.
//!
//! Choices where the seed is silent: NAKs travel as unicast datagrams addressed to the source
//! (every router on the way is a PGM network element and sees them), rather than hop by hop to
//! the SPM's path address; the source sends no NCF ahead of a delayed RDATA beyond the one per
//! NAK; there is no DLR, and FEC is the on-demand parity above plus, with
//! [`SourceConfig::fec_proactive`] > 0, proactive parity (in the spirit of RFC 3208's
//! OPT_PARITY_PRM with the P bit): the source multicasts a block's first parity symbols right
//! after its last packet, network elements forward them everywhere as ODATA, receivers
//! (told the count, [`ReceiverConfig::fec_proactive`]) wait for them before NAKing a block and
//! count them as sent when they do NAK. They carry the retransmission flag, so the simulator
//! counts them as repairs.

mod cc;
mod deploy;
mod measured;
mod ne;
mod overtaken;
mod parity;
pub mod rfc3208;
pub mod spec;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_list;
#[cfg(test)]
mod tests_rfc3208;
mod txw;

pub use crate::budget::REQUESTS_PER_ROUND;
pub use cc::{FeedbackReceiver, PacedSource};
pub use deploy::{check_proactive, deploy, Deployment, Params, Pgm, ProactiveError};
pub use ne::{NeConfig, NetworkElement};

use crate::budget::RequestBudget;
use crate::fec::{self, BlockDecoder};
use crate::outbox::envelope;
use crate::retx::RetransmitBuffer;
use crate::rng::AgentRng;
use crate::sendq::{DataFormat, Originals, SourceTimer};
use crate::seqmap::SeqMap;
use crate::timer::TimerSet;
use crate::window::HeldWindow;
use crate::{hold, Agent, Dest, Event, NodeId, Outbox, SenderAgent, Time};
use bytes::Bytes;
use core::time::Duration;
use measured::{Backoff, Measured, Naked};
use rmcast_wire::{pgm as wire, Message, FLAG_RETRANSMISSION, HEADER_LEN, MAX_DATAGRAM};
use std::collections::BTreeMap;

/// Largest application message one ODATA packet carries.
pub const MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 8;

/// Largest application message with FEC on: its parity symbol (the message, a two-byte
/// length prefix) and PARITY's block, index and k fit a datagram.
pub const FEC_MAX_MESSAGE: usize = MAX_DATAGRAM - HEADER_LEN - 12 - fec::LEN_PREFIX;

/// Original data: ODATA packets of at most [`MAX_MESSAGE`] bytes.
const ODATA: DataFormat = DataFormat {
    max_message: MAX_MESSAGE,
    data: |seq, payload| Message::Pgm(wire::Message::Odata { seq, payload }),
};

/// Original data with FEC on: ODATA packets of at most [`FEC_MAX_MESSAGE`] bytes.
const ODATA_FEC: DataFormat = DataFormat {
    max_message: FEC_MAX_MESSAGE,
    ..ODATA
};

crate::config::group_config! {
    /// Source configuration.
    pub struct SourceConfig {
        /// SPM period (`None`: no SPMs).
        pub spm_interval: Option<Duration> = p.spm_interval,
        /// Wait this long after a NAK before sending the RDATA (0: answer every NAK at once).
        pub repair_delay: Duration = p.repair_delay,
        /// After answering a NAK (NCF and RDATA), ignore NAKs for the same packet this long
        /// (0: answer every NAK). Receivers sharing a loss then cost one repair, and a flood of
        /// NAKs at most one repair per hold-off per packet.
        pub rdata_holdoff: Duration = p.rdata_holdoff,
        /// How long after [`SenderAgent::close`] the source reports [`Event::Completed`] (and
        /// stops SPMs): PGM has no acknowledgments, so the source cannot know when receivers
        /// finish.
        pub linger: Duration = p.linger,
        /// Transmit window (`None`: unbounded, every packet kept): at most this many packets
        /// beyond what every receiver delivered ([`SenderAgent::delivered_by_all`]); the
        /// source refuses new data ([`SenderAgent::can_send`] false) until a report opens the
        /// window. It
        /// keeps for repair the newest this many packets, whether delivered or not, so a
        /// receiver that restarts mid-session (a new process NAKing from sequence 0) is
        /// repaired from them; only older packets that every receiver delivered are let go.
        pub txw: Option<u64> = None,
        /// FEC: source packets per block (0: off). Block NAKs are answered with parity.
        pub fec_k: u16 = p.fec_k,
        /// FEC: parity symbols (indices 0, 1, …) multicast after each whole block without a
        /// NAK (0: none); NAK answers go on from the next index. Capped at 256 − `fec_k`.
        pub fec_proactive: u16 = p.fec_proactive,
        /// Congestion control (`None`: off): wrap the source in a [`PacedSource`].
        pub cc: Option<crate::tfmcc::Config> = cc::config(p),
    }
    pub fn new() from p: Params;
}

/// The source's timers; its own: the delayed RDATA for a packet.
type SKey = SourceTimer<u64>;

/// The PGM source.
pub struct Source {
    cfg: SourceConfig,
    sent: Originals,
    buf: RetransmitBuffer,
    /// Every receiver delivered the packets below this: the transmit window counts from here.
    delivered: u64,
    /// The repair store holds no packet below this (the window's trailing edge, in SPMs).
    trail: u64,
    spm_seq: u64,
    timers: TimerSet<SKey>,
    out: Outbox,
    /// When each packet's last NAK was answered (kept only with a hold-off).
    answered: BTreeMap<u64, Time>,
    /// NAKs received.
    pub naks_received: u64,
    /// Of those, NAKs ignored within the hold-off of an earlier answer.
    pub naks_held_off: u64,
    /// FEC: parity symbols sent per block (the next unused index).
    parity_sent: BTreeMap<u64, u16>,
    /// FEC: block NAKs received.
    pub block_naks_received: u64,
}

impl Source {
    /// A source built from `cfg`.
    pub fn new(cfg: SourceConfig) -> Self {
        Source {
            timers: Originals::timers(cfg.spm_interval),
            sent: Originals::new(
                cfg.node,
                cfg.group,
                cfg.session,
                if cfg.fec_k > 0 { ODATA_FEC } else { ODATA },
            ),
            cfg,
            buf: RetransmitBuffer::new(usize::MAX),
            delivered: 0,
            trail: 0,
            spm_seq: 0,
            out: Outbox::new(),
            answered: BTreeMap::new(),
            naks_received: 0,
            naks_held_off: 0,
            parity_sent: BTreeMap::new(),
            block_naks_received: 0,
        }
    }

    /// Whether a NAK for `seq` falls within the hold-off of the last answer for it; if not,
    /// it is answered now and opens a new hold-off.
    fn held_off(&mut self, now: Time, seq: u64) -> bool {
        let holdoff = self.cfg.rdata_holdoff;
        if holdoff.is_zero() {
            return false;
        }
        if self.answered.get(&seq).is_some_and(|&t| now < t + holdoff) {
            return true;
        }
        self.answered.insert(seq, now);
        // Forget answers whose hold-off ran out (bounded by the packets NAKed in one hold-off).
        if self.answered.len() > 1024 {
            self.answered.retain(|_, t| now < *t + holdoff);
        }
        false
    }

    fn push(&mut self, msg: wire::Message<'_>, flags: u8) {
        self.sent.push(&mut self.out, &Message::Pgm(msg), flags);
    }

    fn rdata(&mut self, now: Time, seq: u64) {
        if let Some(data) = self.buf.mark_resent(seq, now) {
            self.out.stats.repairs_sent += 1;
            self.push(
                wire::Message::Rdata {
                    seq,
                    payload: &data,
                },
                FLAG_RETRANSMISSION,
            );
        }
    }
}

impl Source {
    fn on_message(&mut self, now: Time, _from: NodeId, m: wire::Message<'_>) {
        match m {
            wire::Message::BlockNak { block, total } if self.cfg.fec_k > 0 => {
                self.block_nak(block, total)
            }
            wire::Message::Nak { seq } if self.buf.get(seq).is_some() => {
                if self.nak_taken(now, seq) {
                    self.out.stats.control_sent += 1;
                    self.push(wire::Message::Ncf { seq }, 0);
                    self.repair(now, seq);
                }
            }
            wire::Message::NakList { seqs } => self.nak_list(now, seqs),
            _ => self.out.ignore(),
        }
    }

    /// A NAK for `seq`, which the source holds, counted: whether it is answered (not within
    /// the hold-off of the last answer).
    fn nak_taken(&mut self, now: Time, seq: u64) -> bool {
        self.naks_received += 1;
        if self.held_off(now, seq) {
            self.naks_held_off += 1;
            return false;
        }
        true
    }

    /// Repair `seq` now, or after the repair delay.
    fn repair(&mut self, now: Time, seq: u64) {
        if self.cfg.repair_delay.is_zero() {
            self.rdata(now, seq);
        } else if !self.timers.is_armed(SKey::Own(seq)) {
            self.timers.set(SKey::Own(seq), now + self.cfg.repair_delay);
        }
    }

    /// A NAK list: each number the source holds is taken as its own NAK; those answered are
    /// confirmed in one NCF (a list, or a plain NCF for one), then repaired.
    fn nak_list(&mut self, now: Time, seqs: wire::SeqList<'_>) {
        let held: Vec<u64> = seqs
            .iter()
            .filter(|&seq| self.buf.get(seq).is_some())
            .collect();
        if held.is_empty() {
            return self.out.ignore();
        }
        let answered: Vec<u64> = held
            .into_iter()
            .filter(|&seq| self.nak_taken(now, seq))
            .collect();
        if answered.is_empty() {
            return;
        }
        self.out.stats.control_sent += 1;
        name_seqs(&answered, Naming::Confirmation, |m| self.push(m, 0));
        for seq in answered {
            self.repair(now, seq);
        }
    }
}

/// What a NAK or NCF names: the request (NAK, NAK list) or its confirmation (NCF, NCF list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Naming {
    Request,
    Confirmation,
}

/// Hand `emit` the `kind` of message for `seqs` (increasing, at most
/// [`wire::MAX_NAK_LIST`]): the plain one for a single number, the list for more.
pub(super) fn name_seqs(seqs: &[u64], kind: Naming, emit: impl FnOnce(wire::Message<'_>)) {
    if let [seq] = *seqs {
        return emit(match kind {
            Naming::Request => wire::Message::Nak { seq },
            Naming::Confirmation => wire::Message::Ncf { seq },
        });
    }
    let mut raw = Vec::with_capacity(8 * seqs.len());
    wire::SeqList::encode_seqs(seqs.iter().copied(), &mut raw);
    if let Some(seqs) = wire::SeqList::from_raw(&raw) {
        emit(match kind {
            Naming::Request => wire::Message::NakList { seqs },
            Naming::Confirmation => wire::Message::NcfList { seqs },
        });
    }
}

impl Source {
    /// Queue an SPM now, outside its interval: a driver's answer to an SPMR (RFC 3208
    /// §13.6), which the agents' own receivers never send (open mode's peers do).
    pub fn spm_now(&mut self, now: Time) {
        self.spm(now);
    }

    fn spm(&mut self, _now: Time) {
        self.out.stats.control_sent += 1;
        let (spm_seq, trail, lead) = (self.spm_seq, self.trail, self.sent.next());
        self.spm_seq += 1;
        self.push(
            wire::Message::Spm {
                spm_seq,
                trail,
                lead,
            },
            0,
        );
    }
}

impl Agent for Source {
    crate::outbox::agent_io!(out, on_message);
    crate::sendq::source_timers!(sent, timers, announce: spm every spm_interval, own: rdata);
    fn as_sender(&mut self) -> Option<&mut dyn SenderAgent> {
        Some(self)
    }
}

impl SenderAgent for Source {
    crate::sendq::originals_field!(sent, buf: buf, timers: timers, after_send: after_send);

    fn can_send(&self) -> bool {
        !self.sent.is_closed()
            && self
                .cfg
                .txw
                .is_none_or(|w| self.sent.next().saturating_sub(self.delivered) < w)
    }

    fn delivered_by_all(&mut self, _now: Time, messages: u64) {
        let upto = messages.min(self.sent.next());
        if self.cfg.txw.is_some() && upto > self.delivered {
            self.delivered = upto;
            self.release();
        }
    }
}

crate::config::receiver_config! {
    /// Receiver configuration.
    pub struct ReceiverConfig {
        /// The data source (where NAKs go).
        pub source: NodeId = source,
        /// NAK back-off upper bound (`NAK_BO_IVL`); 0 in the seed's runs.
        pub nak_backoff: Duration = p.nak_backoff,
        /// Repeat a NAK when no NCF came within this (`NAK_RPT_IVL`).
        pub nak_repeat: Duration = p.nak_repeat,
        /// After an NCF, wait this long for the RDATA (`NAK_RDATA_IVL`).
        pub nak_rdata: Duration = p.nak_rdata,
        /// Packets of receive window beyond the next expected one.
        pub window: usize = crate::config::RECEIVE_WINDOW,
        /// `None` (the seed's PGM, and the simulator's): a NAK is repeated after the fixed
        /// `nak_repeat` and `nak_rdata`. `Some(floor)`: both waits are the retransmission
        /// timeout of the repair round trip the receiver measures — from a NAK sent once to its
        /// confirmation (NCF; FEC: BNCF or parity), RFC 6298's arithmetic in
        /// [`RttEstimator`](crate::rtt::RttEstimator) —
        /// doubled for each of that loss's (or FEC block's) own waits that ran out since the
        /// last sample (`Backoff`), never below `floor` and never above `nak_repeat` /
        /// `nak_rdata`, which also stand until the first sample. On a LAN a lost
        /// RDATA then costs a few round trips instead of `nak_rdata`, and a receiver whose
        /// answers come late (it is behind, or the source is) measures that and waits longer.
        pub nak_rto_min: Option<Duration> = p.nak_rto_min,
        /// Most sequence numbers in one NAK: losses NAKed at the same instant (found together,
        /// or their waits ran out together) go in NAK lists of up to this many (NAKL, RFC
        /// 3208's OPT_NAK_LIST), sent when the instant's work is done. 1 (the seed's PGM, and
        /// the simulator's default): a NAK per loss, sent at once.
        pub nak_list: u16 = p.nak_list,
        /// Ask again at once for a loss whose repair was overtaken: the repair of a loss
        /// the source confirmed later arrived first (`overtaken`). Off (the seed's PGM,
        /// and the simulator's default): only the NCF's wait (`nak_rdata`) asks again.
        pub nak_overtaken: bool = p.nak_overtaken,
        /// FEC: source packets per block (0: off; the source's [`SourceConfig::fec_k`]).
        pub fec_k: u16 = p.fec_k,
        /// FEC: parity symbols the source sends unasked after each block (its
        /// [`SourceConfig::fec_proactive`]): a block whose last packet arrived is taken as
        /// ended, and NAKed, only once those symbols or a later packet came.
        pub fec_proactive: u16 = p.fec_proactive,
        /// Congestion control (`None`: off): wrap the receiver in a [`FeedbackReceiver`].
        pub cc: Option<crate::tfmcc::Config> = cc::config(p),
    }
    pub fn new(source: NodeId) from p: Params;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    BackOff,
    WaitNcf,
    WaitData,
    /// FEC: a loss in a block whose end is not known yet; NAKed packet by packet if it is
    /// still not known after `nak_repeat`.
    BlockWait,
}

/// What a loss's (or a block's) timer leads to.
enum Expiry {
    /// NAK (again).
    Nak,
    /// Back off anew before the next NAK.
    BackOff,
}

/// A receiver's timers: the NAK budget's next round (first at equal deadlines, so the NAKs
/// it deferred go before repeats), and each loss's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Key {
    Round,
    Seq(u64),
    Block(u64),
    /// With NAK lists: send the NAKs of this instant (last at equal deadlines, after every
    /// loss whose wait ran out with it).
    Flush,
    /// With [`ReceiverConfig::nak_overtaken`]: no awaited repair came for a timeout.
    Tail,
}

/// FEC: a receiver's block with a packet held or missing, until it holds every source packet.
struct RxBlock {
    dec: BlockDecoder,
    /// Parity the source is known to have sent or promised for it (indices `0 .. known`).
    known: u16,
    /// Its block NAK, once sent: when first, and its back-off (kept without adaptive timers
    /// too, where nothing reads it).
    naked: Option<Naked>,
    /// Where its block NAK stands (`None`: its end is not known yet, or nothing is missing).
    phase: Option<Phase>,
    /// Its parity ran out: the missing packets went to the packet-by-packet NAKs.
    per_packet: bool,
}

impl RxBlock {
    /// Its block NAK's back-off (none before its first NAK).
    fn backoff(&self) -> Backoff {
        self.naked.map_or(Backoff::default(), |n| n.backoff)
    }
}

/// A PGM receiver.
pub struct Receiver {
    cfg: ReceiverConfig,
    rng: AgentRng,
    window: HeldWindow,
    known: u64,
    /// Losses being recovered. One whose NAK the budget deferred keeps its phase and has no
    /// timer until its round comes.
    lost: SeqMap<Phase>,
    timers: TimerSet<Key>,
    budget: RequestBudget,
    out: Outbox,
    /// With [`ReceiverConfig::nak_rto_min`]: what the receiver measures of its repairs;
    /// boxed, as the seed's PGM has none.
    repair: Option<Box<Measured>>,
    /// FEC: blocks with a packet held or missing and not yet whole.
    blocks: BTreeMap<u64, RxBlock>,
    /// Every sequence number below this is known to exist (FEC: where block ends are known).
    lead: u64,
    /// With NAK lists: the losses NAKed this instant, sent together at [`Key::Flush`].
    pending: Vec<u64>,
    /// With [`ReceiverConfig::nak_overtaken`]: the confirmed losses by confirmation order.
    overtaken: Option<Box<overtaken::Overtaken>>,
}

impl Receiver {
    /// A receiver built from `cfg`, drawing its random delays from `rng`.
    pub fn new(cfg: ReceiverConfig, rng: AgentRng) -> Self {
        let repair = cfg
            .nak_rto_min
            .map(|floor| Box::new(Measured::new(&cfg, floor)));
        Receiver {
            overtaken: cfg.nak_overtaken.then(Box::default),
            repair,
            window: HeldWindow::new(cfg.window),
            cfg,
            rng,
            known: 0,
            lost: SeqMap::new(),
            timers: TimerSet::new(),
            budget: RequestBudget::default(),
            out: Outbox::new(),
            blocks: BTreeMap::new(),
            lead: 0,
            pending: Vec::new(),
        }
    }

    fn backoff(&mut self, now: Time, seq: u64) {
        let wait = self
            .rng
            .duration_between(Duration::ZERO, self.cfg.nak_backoff);
        self.lost.insert(seq, Phase::BackOff);
        if wait.is_zero() {
            self.nak(now, seq);
        } else {
            self.timers.set(Key::Seq(seq), now + wait);
        }
    }

    /// A round of the NAK budget: the NAK repeat interval (the repair round trip's timeout,
    /// not doubled; the fixed interval before the first sample). Also the tail probe: how
    /// long without an awaited repair before the awaited ones are taken for lost.
    fn round(&self) -> Duration {
        self.wait(self.cfg.nak_repeat, Backoff::default())
    }

    fn nak(&mut self, now: Time, seq: u64) {
        let admitted = self.budget.admit(now, self.round(), seq);
        // Re-armed either way: a measured round trip may have cut the round short.
        self.budget.arm(&mut self.timers, Key::Round);
        if !admitted {
            return;
        }
        self.lost.insert(seq, Phase::WaitNcf);
        if self.cfg.nak_list > 1 {
            self.pending.push(seq);
            if self.pending.len() >= usize::from(self.cfg.nak_list) {
                self.flush_naks();
            } else if !self.timers.is_armed(Key::Flush) {
                self.timers.set(Key::Flush, now);
            }
        } else {
            self.send_nak(&[seq]);
        }
        if let Some(m) = self.repair.as_deref_mut() {
            m.naked
                .entry(seq)
                .and_modify(Naked::repeat)
                .or_insert(Naked::first(now));
        }
        let wait = self.wait(self.cfg.nak_repeat, self.backoff_of(seq));
        self.timers.set(Key::Seq(seq), now + wait);
    }

    /// Send one NAK (or NAK list) for `seqs`, increasing.
    fn send_nak(&mut self, seqs: &[u64]) {
        let env = envelope(self.cfg.session, self.cfg.node, 0);
        let (out, source) = (&mut self.out, self.cfg.source);
        name_seqs(seqs, Naming::Request, |m| {
            if out.transmit(Dest::Node(source), env, &Message::Pgm(m)) {
                out.stats.control_sent += 1;
            }
        });
    }

    /// Send the NAKs of this instant in lists of at most [`ReceiverConfig::nak_list`], for
    /// the losses still missing.
    fn flush_naks(&mut self) {
        self.timers.cancel(Key::Flush);
        let mut seqs = core::mem::take(&mut self.pending);
        seqs.sort_unstable();
        seqs.dedup();
        seqs.retain(|&s| self.lost.get(s) == Some(&Phase::WaitNcf));
        let most = usize::from(self.cfg.nak_list).clamp(1, wire::MAX_NAK_LIST);
        for chunk in seqs.chunks(most) {
            self.send_nak(chunk);
        }
        seqs.clear();
        self.pending = seqs;
    }

    /// The budget's next round: the NAKs it deferred, oldest first, for losses still missing
    /// with nothing scheduled (an NCF or the data may have come meanwhile); then the next
    /// sequence numbers known to exist.
    fn next_round(&mut self, now: Time) {
        let len = self.round();
        while let Some(seq) = self.budget.next_waiting(now, len) {
            if self.lost.contains_key(seq) && !self.timers.is_armed(Key::Seq(seq)) {
                self.nak(now, seq);
            }
        }
        self.detect(now);
    }

    /// How long to wait for an answer with back-off `b`: `fixed`, or the measured timeout
    /// doubled as `b` says, within it.
    fn wait(&self, fixed: Duration, b: Backoff) -> Duration {
        match self.repair.as_deref() {
            Some(m) => m.rtt.rto_doubled(b.doublings(m.epoch())).min(fixed),
            None => fixed,
        }
    }

    /// How long to wait for `seq`'s repair after its NCF: with adaptive timers the repair
    /// round trip's timeout (doubled by its back-off) plus the timeout of the measured delay
    /// from an NCF to its repair, within `nak_rdata`. The NCF leaves at once and its repair
    /// waits in the source's paced queue: behind a slow port that queue held 100-200 ms of
    /// repairs, longer than the round trip, and the waits ran out while the repairs were still
    /// queued (most of the receiver's NAKs, each spending the round's budget, asked for
    /// repairs queued already; issue 59).
    fn rdata_wait(&self, seq: u64) -> Duration {
        let wait = self.wait(self.cfg.nak_rdata, self.backoff_of(seq));
        match self.repair.as_deref().map(|m| &m.rdata_delay) {
            Some(d) if d.samples() > 0 => (wait + d.rto()).min(self.cfg.nak_rdata),
            _ => wait,
        }
    }

    /// Loss `seq`'s back-off (none without adaptive timers).
    fn backoff_of(&self, seq: u64) -> Backoff {
        self.repair
            .as_deref()
            .and_then(|m| m.naked.get(&seq))
            .map_or(Backoff::default(), |n| n.backoff)
    }

    /// What clears the back-offs ([`Measured::epoch`]; 0 without adaptive timers).
    fn epoch(&self) -> u64 {
        self.repair.as_deref().map_or(0, Measured::epoch)
    }

    /// An answer for `seq` arrived: its NCF (`done` false: a round-trip sample if it was
    /// NAKed once, and its wait for the repair begins), or its data (`done`: the loss's record
    /// is forgotten, and the delay from its NCF measured). Data that comes before any NCF is no
    /// round-trip sample: the NCF was lost, and the data came after the source's queue of
    /// repairs. Behind a slow port, which drops NCFs as it drops everything, such samples of
    /// 1-2 s made the repair round trip's timeout 1 s, so the NAK budget's rounds stretched to
    /// `nak_repeat` and the losses queued for it while the port idled (issue 59).
    fn answered(&mut self, now: Time, seq: u64, done: bool) {
        let Some(m) = self.repair.as_deref_mut() else {
            return;
        };
        if !done {
            if let Some(n) = m.naked.get_mut(&seq) {
                n.answer(now, &mut m.rtt);
                n.confirmed = Some(now);
            }
            return;
        }
        if let Some(n) = m.naked.remove(&seq) {
            m.repaired += 1;
            if let Some(at) = n.confirmed {
                m.rdata_delay.sample(now.saturating_since(at));
            }
        }
    }

    /// A loss's or block's timer ran out in `phase`: after the back-off a NAK, after a NAK
    /// without an NCF the NAK again, after an NCF without the data a new back-off (both
    /// waits counted as timeouts); a loss that waited in vain for its block's end backs off
    /// to be NAKed packet by packet. The second value says whether a wait for an answer ran
    /// out (counted in the stats; the caller doubles that loss's or block's next wait).
    fn expiry(&mut self, phase: Option<Phase>) -> Option<(Expiry, bool)> {
        let (next, timeout) = match phase? {
            Phase::BackOff => (Expiry::Nak, false),
            Phase::WaitNcf => (Expiry::Nak, true),
            Phase::WaitData => (Expiry::BackOff, true),
            Phase::BlockWait => (Expiry::BackOff, false),
        };
        if timeout {
            self.out.stats.timeouts += 1;
        }
        Some((next, timeout))
    }

    /// Packets below `next` exist: start recovering those not received, inside the receive
    /// window and at most the budget's new losses per round ([`RequestBudget::learn`]).
    fn learn(&mut self, now: Time, next: u64) {
        let ended = self.cfg.fec_k > 0 && next > self.lead;
        if ended {
            self.lead = next;
        }
        self.budget
            .learn(self.window.window(), &mut self.known, next);
        self.detect(now);
        if ended {
            self.blocks_ended(now);
        }
    }

    /// Examine the known sequence numbers for loss while the round's budget allows.
    fn detect(&mut self, now: Time) {
        let len = self.round();
        while let Some(s) = self
            .budget
            .next_unseen(now, len, self.window.window().base())
        {
            if !self.window.window().contains(s) && !self.lost.contains_key(s) {
                self.budget.detected();
                self.out.event(Event::LossDetected { seq: s });
                if self.cfg.fec_k > 0 {
                    self.fec_loss(now, s);
                } else {
                    self.backoff(now, s);
                }
            }
        }
        self.budget.arm(&mut self.timers, Key::Round);
    }

    fn data(&mut self, now: Time, seq: u64, payload: &[u8], shared: Option<&Bytes>) {
        self.accept(now, seq, payload, shared, self.cfg.fec_k > 0)
    }

    /// The repair of `seq` arrived: ask again at once for the losses it overtook, and wait
    /// a tail probe's time for the next.
    fn ask_overtaken(&mut self, now: Time, seq: u64) {
        let Some(o) = self.overtaken.as_deref_mut() else {
            return;
        };
        let overtaken = o.arrived(seq);
        let awaited = !o.is_empty();
        self.ask_again(now, overtaken);
        if awaited {
            let probe = self.round();
            self.timers.set(Key::Tail, now + probe);
        } else {
            self.timers.cancel(Key::Tail);
        }
    }

    /// No awaited repair came for a tail probe's time: ask again for every awaited one.
    fn ask_tail(&mut self, now: Time) {
        if let Some(o) = self.overtaken.as_deref_mut() {
            let all = o.take_all();
            self.ask_again(now, all);
        }
    }

    /// NAK again the losses of `seqs` still awaiting their repair.
    fn ask_again(&mut self, now: Time, seqs: Vec<u64>) {
        for s in seqs {
            if self.lost.get(s) == Some(&Phase::WaitData) {
                self.timers.cancel(Key::Seq(s));
                self.nak(now, s);
            }
        }
    }

    /// `seq` was being recovered and no longer is. The loss map holds no buffer once empty:
    /// a receiver of a large simulation recovers a loss or two and then keeps nothing.
    fn recovered(&mut self, seq: u64) -> bool {
        self.lost.remove(seq).is_some()
    }

    /// Data for `seq` (received, or decoded when `!fec`); with `fec`, its block keeps it.
    fn accept(&mut self, now: Time, seq: u64, payload: &[u8], shared: Option<&Bytes>, fec: bool) {
        if self
            .out
            .arrived_held(&mut self.window, seq, || hold(shared, payload))
        {
            if self.recovered(seq) {
                self.answered(now, seq, true);
                self.ask_overtaken(now, seq);
            }
            self.timers.cancel(Key::Seq(seq));
            if fec {
                self.fec_source(now, seq, hold(shared, payload));
            }
            self.learn(now, seq + 1);
            self.out.deliver_held(&mut self.window);
        }
    }
}

impl Receiver {
    fn on_message(&mut self, now: Time, m: wire::Message<'_>, shared: Option<&Bytes>) {
        match m {
            wire::Message::Odata { seq, payload } | wire::Message::Rdata { seq, payload } => {
                self.data(now, seq, payload, shared)
            }
            wire::Message::Spm { lead, .. } => self.learn(now, lead),
            wire::Message::Parity {
                block,
                index,
                k,
                payload,
            } if self.cfg.fec_k > 0 => self.parity(now, block, index, k, hold(shared, payload)),
            wire::Message::BlockNcf { block, total } if self.cfg.fec_k > 0 => {
                self.block_ncf(now, block, total)
            }
            wire::Message::Ncf { seq } => self.ncf(now, seq),
            wire::Message::NcfList { seqs } => seqs.iter().for_each(|seq| self.ncf(now, seq)),
            _ => self.out.ignore(),
        }
    }
}

impl Receiver {
    /// An NCF for `seq`: wait for its data (an NCF for a loss not yet detected announces it
    /// too).
    fn ncf(&mut self, now: Time, seq: u64) {
        if self.window.window().contains(seq) {
            return;
        }
        self.learn(now, seq.saturating_add(1));
        if let Some(phase) = self.lost.get_mut(seq) {
            *phase = Phase::WaitData;
            if let Some(o) = self.overtaken.as_deref_mut() {
                o.confirmed(seq);
                if !self.timers.is_armed(Key::Tail) {
                    let probe = self.round();
                    self.timers.set(Key::Tail, now + probe);
                }
            }
            self.answered(now, seq, false);
            let wait = self.rdata_wait(seq);
            self.timers.set(Key::Seq(seq), now + wait);
        }
    }

    fn on_timer(&mut self, now: Time, key: Key) {
        let seq = match key {
            Key::Round => return self.next_round(now),
            Key::Flush => return self.flush_naks(),
            Key::Tail => return self.ask_tail(now),
            Key::Block(b) => return self.on_block_timer(now, b),
            Key::Seq(seq) => seq,
        };
        let Some((next, timeout)) = self.expiry(self.lost.get(seq).copied()) else {
            return;
        };
        if let Some(o) = self.overtaken.as_deref_mut() {
            o.forget(seq);
        }
        if timeout {
            let epoch = self.epoch();
            if let Some(n) = self
                .repair
                .as_deref_mut()
                .and_then(|m| m.naked.get_mut(&seq))
            {
                n.backoff.expire(epoch);
            }
        }
        match next {
            Expiry::Nak => self.nak(now, seq),
            Expiry::BackOff => self.backoff(now, seq),
        }
    }
}

impl Agent for Receiver {
    crate::outbox::agent_io!(out, on_message with bytes, timers => on_timer);
}
