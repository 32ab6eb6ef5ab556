//! The receiver's session layer: finding a session, being admitted to it, and its sender's
//! session messages (later ANNOUNCEs, END).
//!
//! A receiver belongs to the address its session started with: the address of the first
//! ANNOUNCE it acted on. The sender sends everything from one socket and never moves, so a
//! copy of its packets sent again from another host is a stranger's, however new its seal: a
//! keyed receiver that followed the newest authenticated ANNOUNCE from any address was taken
//! over by a peer that re-multicast a running ANNOUNCE the sender had sealed for it. It
//! moves only when that address has fallen silent for [`FOLLOW_AFTER`] (its relay died):
//! then it follows its own session's running ANNOUNCE (same session, same sender node id;
//! under a key authenticated and fresh) to the address it now comes from, a standby relay
//! that took over, and JOINs there ([`Receiving::follow`]). A host re-sending sealed
//! ANNOUNCEs can capture only a receiver whose path is already dead, and can then only
//! forward or drop what the sender seals.
//!
//! Only its own sender ends a receiver, and the past does not:
//!
//! * a session that does not answer its JOINs within [`UNANSWERED`] (a dead sender, a replay of
//!   an old session, a copy of an ANNOUNCE re-sent from a host that serves nothing) is given
//!   up, ignored from that address for [`SHUNNED_FOR`], and the receiver listens again;
//! * a session found already running without it is not joined: the receiver asks its sender
//!   (a JOIN) and ends `not-admitted` only on the answer bound to it, an END from that sender
//!   that names it (`Endpoint::refuse` on the sender). A replay never answers.

use super::{late_offer, Receiving, JOIN_AGAIN};
use crate::agents;
use crate::endpoint::session_packet;
use crate::receiver::announce::check_announce;
use crate::receiver::joined::Joined;
use crate::receiver::RecvObserver;
use crate::secure::Keys;
use crate::NetError;
use rmcast_proto::Time;
use rmcast_wire::session::{self, Outcome, Phase};
use rmcast_wire::{Header, Message, Packet};
use std::net::SocketAddr;
use std::time::Duration;

/// A receiver that found a session and is not admitted this long after (JOINing every
/// [`JOIN_AGAIN`]) gives it up and listens again: a live sender answers a JOIN within a round
/// trip, by admitting the receiver or by refusing it.
pub(in crate::receiver) const UNANSWERED: Duration = Duration::from_secs(3);

/// A session given up for not answering is ignored from that address for this long, so the
/// copies that captured the receiver do not capture it again at once.
pub(in crate::receiver) const SHUNNED_FOR: Duration = Duration::from_secs(10);

/// A receiver that finds its session running with its node id listed (it restarted) JOINs
/// for this long, every [`JOIN_AGAIN`], so the sender moves it to its new address.
const REJOIN_FOR: Duration = Duration::from_secs(1);

/// A receiver whose session's address has been silent this long follows the session's
/// running ANNOUNCE to another address ([`Receiving::follow`]): a standby relay's takeover
/// (`rmcast relay --standby`). Four of the sender's 250-ms running ANNOUNCEs missed; far
/// below `--sender-timeout`.
pub(in crate::receiver) const FOLLOW_AFTER: Duration = Duration::from_secs(1);

/// At most this many sessions found running without this receiver are asked at once; at most
/// this many given-up sessions are remembered.
const REMEMBERED: usize = 8;

/// A session found running without this receiver, whose sender it asked to join.
#[derive(Debug, Clone, Copy)]
pub(in crate::receiver) struct Asked {
    session: u32,
    node: u32,
    addr: SocketAddr,
    next_join: Time,
}

/// A session given up for not answering: ignored from `addr` until `until`.
#[derive(Debug, Clone, Copy)]
pub(in crate::receiver) struct Shunned {
    session: u32,
    addr: SocketAddr,
    until: Time,
}

impl Receiving {
    /// JOIN our session's sender (it answers a JOIN with the ANNOUNCE as it stands: admission,
    /// and the running session's parameters; or with a refusal).
    pub(super) fn join(&mut self) {
        if let Some(j) = self.st.joined.as_ref() {
            let (session, to) = (j.session, j.sender_addr);
            self.join_to(session, to);
        }
    }

    fn join_to(&mut self, session: u32, to: SocketAddr) {
        // The HAVE first: a sender that admits on the JOIN has it already.
        self.have(session, to);
        let pkt = session_packet(
            session,
            self.st.node,
            session::Message::Join {
                region: self.cfg.region,
            },
        );
        // A JOIN always encodes (fixed size).
        if let Ok(pkt) = pkt {
            let _ = self.st.wire.send(&self.usock, to, &pkt, false);
        }
    }

    /// Tell the sender of `session` at `to` which partial copies this receiver holds
    /// (restart mode, [`crate::resume`]), if any.
    pub(super) fn have(&mut self, session: u32, to: SocketAddr) {
        if self.st.held.is_empty() {
            return;
        }
        let files = session::encode_held(&self.st.held);
        if let Ok(pkt) = session_packet(
            session,
            self.st.node,
            session::Message::Have { files: &files },
        ) {
            let _ = self.st.wire.send(&self.usock, to, &pkt, false);
        }
    }

    /// Give up the session found if it has not admitted this receiver within [`UNANSWERED`];
    /// returns whether it did.
    pub(super) fn unanswered(&mut self, now: Time) -> bool {
        let late = self
            .st
            .joined
            .as_ref()
            .is_some_and(|j| !j.admitted && now.saturating_since(j.since) >= UNANSWERED);
        if late {
            self.give_up(
                now,
                &format!("its sender did not admit this receiver within {UNANSWERED:.0?}"),
            );
        }
        late
    }

    /// Leave the session found (never admitted to it), ignore it from its address for
    /// [`SHUNNED_FOR`] and listen again.
    fn give_up(&mut self, now: Time, why: &str) {
        let Some(j) = self.st.joined.take() else {
            return;
        };
        let (session, from) = (j.session, j.sender_addr);
        tracing::warn!(session = %format_args!("{session:08x}"), %from, "{why}: listening for another session");
        self.st.shunned.retain(|s| s.until > now);
        if self.st.shunned.len() >= REMEMBERED {
            self.st.shunned.remove(0);
        }
        self.st.shunned.push(Shunned {
            session,
            addr: from,
            until: now + SHUNNED_FOR,
        });
        self.st.refused = Some(format!("session {session:08x} from {from}: {why}"));
        if let Some(mut s) = self.st.lsock.take() {
            let _ = self.poll.registry().deregister(&mut s);
        }
        self.st.open_local = None;
        self.st.first_data = None;
        self.writer.late(None);
    }

    /// Whether the session `session` from `from` was given up and is still ignored.
    fn shunned(&self, now: Time, session: u32, from: SocketAddr) -> bool {
        self.st
            .shunned
            .iter()
            .any(|s| s.session == session && s.addr == from && s.until > now)
    }

    /// A session runs without this receiver: ask its sender to join (at most every
    /// [`JOIN_AGAIN`]); only its answer, a refusal naming this receiver, ends the receive.
    fn ask(&mut self, now: Time, session: u32, node: u32, from: SocketAddr) {
        let known = self
            .st
            .asked
            .iter()
            .position(|a| a.session == session && a.node == node && a.addr == from);
        let i = match known {
            Some(i) => i,
            None => {
                if self.st.asked.len() >= REMEMBERED {
                    self.st.asked.remove(0);
                }
                tracing::info!(session = %format_args!("{session:08x}"), %from, "the session runs without this receiver: asking its sender");
                self.st.refused = Some(format!(
                    "session {session:08x} from {from} runs without this receiver, and its \
                     sender did not answer its JOIN (a session that started before this \
                     receiver, or a replay of one)"
                ));
                self.st.asked.push(Asked {
                    session,
                    node,
                    addr: from,
                    next_join: now,
                });
                self.st.asked.len() - 1
            }
        };
        let Some(a) = self.st.asked.get_mut(i) else {
            return;
        };
        if now >= a.next_join {
            a.next_join = now + JOIN_AGAIN;
            self.join_to(session, from);
        }
    }

    /// Whether `outcomes` (an END's) name this receiver.
    fn names_me(&self, outcomes: &[u8]) -> bool {
        session::outcomes(outcomes).any(|(n, _)| n == self.st.node)
    }

    /// The sender of `session` at `from` refused this receiver: it ends `not-admitted`.
    fn refused_by(&mut self, session: u32, from: SocketAddr) {
        self.st.end = Some((
            "not-admitted",
            Some(format!(
                "session {session:08x} from {from} runs without this receiver: its sender \
                 refused the JOIN; start `rmcast recv` before `rmcast send`, or raise the \
                 sender's --receivers"
            )),
        ));
    }

    /// A session packet: an ANNOUNCE that finds a session, one from our sender, or the
    /// answer of a session we asked.
    pub(super) fn session_packet(
        &mut self,
        now: Time,
        h: Header,
        pkt: &[u8],
        from: SocketAddr,
        obs: &mut dyn RecvObserver,
    ) -> Result<(), NetError> {
        let Ok(p) = Packet::decode(pkt) else {
            self.st.wire.stats.rejected_malformed += 1;
            return Ok(());
        };
        let Message::Session(m) = p.message else {
            return Ok(());
        };
        if let Some(sealed) = self.st.wire.opened_counter() {
            // A replay from another process's time (a dead session) is refused: its ANNOUNCE
            // and its END.
            let stale = crate::secure::stale_announce(sealed, self.cfg.freshness);
            match (&m, stale) {
                (session::Message::Announce { .. }, Some(why)) => {
                    self.st.wire.stats.rejected_auth += 1;
                    tracing::warn!(session = %format_args!("{:08x}", h.session), %from, "{why}");
                    return Ok(());
                }
                (session::Message::End { .. }, Some(_)) => {
                    self.st.wire.stats.rejected_auth += 1;
                    return Ok(());
                }
                _ => {}
            }
        }
        if self.cfg.sock.source.is_some_and(|s| s != from.ip()) {
            // --source: only the named sender's packets.
            self.st.wire.stranger();
            return Ok(());
        }
        let mut ours =
            self.st.joined.as_ref().map(|j| {
                h.session == j.session && h.source == j.sender_node && from == j.sender_addr
            });
        if ours == Some(false) && self.follow(now, h, &m, from) {
            ours = Some(true);
        }
        match (ours, &m) {
            (Some(true), _) => self.sender_message(now, m),
            (None, session::Message::Announce { .. }) => self.found(now, h, m, from, obs),
            (None, session::Message::End { outcomes })
                if self.names_me(outcomes)
                    && self.st.asked.iter().any(|a| {
                        a.session == h.session && a.node == h.source && a.addr == from
                    }) =>
            {
                self.refused_by(h.session, from);
                Ok(())
            }
            _ => {
                self.st.wire.stranger();
                Ok(())
            }
        }
    }

    /// Our session's running ANNOUNCE from another address, after [`FOLLOW_AFTER`] of
    /// silence from the one we had (our relay died and a standby took over, or the route
    /// moved): follow it there and JOIN again, so the sender takes this receiver back at the
    /// address its JOINs now come from. Whether it moved. Under a key the ANNOUNCE was
    /// authenticated and found fresh above; the sender's node id and session must be ours.
    fn follow(&mut self, now: Time, h: Header, m: &session::Message<'_>, from: SocketAddr) -> bool {
        let Some(j) = self.st.joined.as_mut() else {
            return false;
        };
        let running = matches!(
            m,
            session::Message::Announce {
                phase: Phase::Running,
                ..
            }
        );
        let silent = now.saturating_since(j.last_from_sender);
        if !running
            || !j.admitted
            || h.session != j.session
            || h.source != j.sender_node
            || silent < FOLLOW_AFTER
        {
            return false;
        }
        tracing::warn!(
            session = %format_args!("{:08x}", j.session),
            old = %j.sender_addr,
            new = %from,
            "nothing from the session's address for {:.1}s; its running ANNOUNCE comes from \
             another: following it there (a relay died and another took over)",
            silent.as_secs_f64()
        );
        j.sender_addr = from;
        j.moves += 1;
        j.rejoin_until = Some(now + REJOIN_FOR);
        self.st.next_join = Time::ZERO;
        true
    }

    /// The first ANNOUNCE of a session: join it (or, if it runs without us, ask its sender).
    fn found(
        &mut self,
        now: Time,
        h: Header,
        m: session::Message<'_>,
        from: SocketAddr,
        obs: &mut dyn RecvObserver,
    ) -> Result<(), NetError> {
        let session::Message::Announce {
            phase,
            members,
            protocol,
            params,
            ..
        } = m
        else {
            return Ok(());
        };
        if self.cfg.session.is_some_and(|s| s != h.session) || self.shunned(now, h.session, from) {
            self.st.wire.stranger();
            return Ok(());
        }
        if let Err(why) = check_announce(&m, Keys::announced_security(self.cfg.keys.as_ref())) {
            self.refuse(h.session, from, why);
            return Ok(());
        }
        let admitted = session::members(members).any(|x| x == self.st.node);
        if let super::Output::Dir { path, .. } = &self.cfg.output {
            self.st.held = crate::resume::scan(path);
            if !self.st.held.is_empty() {
                tracing::info!(
                    files = self.st.held.len(),
                    "partial copies here: telling the sender (restart mode)"
                );
            }
        }
        let offer = if phase == Phase::Running && !admitted {
            late_offer(protocol, params).ok().flatten()
        } else {
            None
        };
        if let Some(name) = &offer {
            tracing::info!(
                stream = %name,
                "joining a running stream late: from the join point on, without back-fill"
            );
        } else if phase == Phase::Running && !admitted {
            // Not joined: a running session that does not list us may be the past replayed.
            self.st.wire.stats.rejected_announce += 1;
            self.ask(now, h.session, h.source, from);
            return Ok(());
        }
        let mut built = Joined {
            session: h.session,
            sender_node: h.source,
            sender_addr: from,
            admitted,
            built: None,
            last_from_sender: now,
            late: offer.is_some(),
            since: now,
            reported: false,
            moves: 0,
            early: Default::default(),
            gathers: false,
            rejoin_until: admitted.then(|| {
                tracing::info!("the session lists this node id already: rejoining (a restart)");
                now + REJOIN_FOR
            }),
        };
        // The agent, if the ANNOUNCE says enough: parameters it cannot build from are
        // refused like any invalid ANNOUNCE.
        let local = match built.build(&m, self.st.node, self.cfg.sock.group) {
            Ok(local) => local,
            Err(e) => {
                self.refuse(h.session, from, e.to_string());
                return Ok(());
            }
        };
        obs.session(h.session, from);
        self.writer.late(offer);
        let keyed = self.cfg.keys.is_some();
        let early =
            agents::announced(protocol).and_then(|p| p.early_group(self.cfg.sock.group, keyed));
        self.st.open_local = local.or(early);
        self.st.joined = Some(built);
        self.st.next_join = Time::ZERO;
        Ok(())
    }

    /// Count and ignore an ANNOUNCE this receiver cannot act on.
    pub(super) fn refuse(&mut self, session: u32, from: SocketAddr, why: String) {
        self.st.wire.stats.rejected_announce += 1;
        if self.st.refused.as_deref() != Some(why.as_str()) {
            tracing::warn!(session = %format_args!("{session:08x}"), %from, "ANNOUNCE refused: {why}");
        }
        self.st.refused = Some(why);
    }

    /// A session message from our sender: a later ANNOUNCE (admission, the agent, evictions)
    /// or END.
    fn sender_message(&mut self, now: Time, m: session::Message<'_>) -> Result<(), NetError> {
        let node = self.st.node;
        if let Err(why) = check_announce(&m, Keys::announced_security(self.cfg.keys.as_ref())) {
            let (session, from) = self
                .st
                .joined
                .as_ref()
                .map_or((0, self.cfg.sock.group), |j| (j.session, j.sender_addr));
            self.refuse(session, from, why);
            return Ok(());
        }
        let Some(j) = self.st.joined.as_mut() else {
            return Ok(());
        };
        j.last_from_sender = now;
        match m {
            session::Message::Announce {
                members, params, ..
            } => {
                if !j.admitted && session::members(members).any(|x| x == node) {
                    j.admitted = true;
                    self.st.next_report = Time::ZERO;
                }
                if j.admitted && j.built.is_none() {
                    match j.build(&m, node, self.cfg.sock.group) {
                        Ok(local) => self.st.open_local = local,
                        Err(e) => {
                            let (session, from) = (j.session, j.sender_addr);
                            self.refuse(session, from, e.to_string());
                            return Ok(());
                        }
                    }
                }
                if let Some(b) = j.built.as_mut() {
                    b.side.announced(now, &mut *b.agent, params);
                }
                // Not admitted (a session that started without us, or the past replayed):
                // the JOINs go on, and the sender's refusal or `UNANSWERED` decides.
                self.release_early(now);
            }
            session::Message::End { outcomes } => {
                let (session, from, admitted) = (j.session, j.sender_addr, j.admitted);
                let mine = session::outcomes(outcomes)
                    .find(|(n, _)| *n == node)
                    .map(|(_, o)| o);
                self.st.end = match (admitted, mine) {
                    (false, Some(_)) => {
                        self.refused_by(session, from);
                        return Ok(());
                    }
                    (false, None) => {
                        self.give_up(now, "the session ended without this receiver");
                        return Ok(());
                    }
                    // Every END of our session names every member: one that does not name
                    // us is no end of ours (the refusal of another receiver).
                    (true, None) => {
                        self.st.wire.stranger();
                        return Ok(());
                    }
                    (true, Some(Outcome::Completed)) => Some(("completed", None)),
                    (true, Some(Outcome::Evicted)) => Some((
                        "evicted",
                        Some("the sender evicted this receiver (it was silent too long)".into()),
                    )),
                    (true, Some(Outcome::Failed)) if self.writer.flush().finished => {
                        Some(("completed", None))
                    }
                    (true, Some(Outcome::Failed)) => Some((
                        "failed",
                        Some(
                            "the sender ended the session before this receiver had everything"
                                .into(),
                        ),
                    )),
                };
            }
            _ => self.st.wire.stranger(),
        }
        Ok(())
    }
}
