//! Step 1: announce the session every 100 ms and admit JOINs until the expected receivers
//! are in.

use super::{Admission, Endpoint, Expect, SendObserver};
use crate::NetError;
use rmcast_proto::Time;
use rmcast_wire::session::{self, Phase, ReportState};
use rmcast_wire::{Family, Message, Packet};
use std::net::SocketAddr;
use std::time::Duration;

/// A receiver of the session, as the sender's session layer sees it.
#[derive(Debug)]
pub(super) struct Member {
    pub node: u32,
    pub addr: SocketAddr,
    pub last_heard: Time,
    pub evicted: Option<String>,
    pub final_state: Option<(ReportState, u8)>,
    pub bytes: u64,
    pub messages: u64,
    pub repairs: u64,
    pub duplicates: u64,
    pub rejected: u64,
    /// Region from its JOIN (protocols with regions; `None`: it named none).
    pub region: Option<u16>,
    /// Admitted during the transfer (`--late-join`).
    pub late: bool,
    /// How it was admitted.
    pub admitted: Admission,
    /// It carried the session's traffic: a protocol packet, or a report that moved.
    pub traffic: bool,
    /// (bytes, messages, repairs) of its last REPORT; `None` before its first.
    pub reported: Option<(u64, u64, u64)>,
    /// When it was admitted.
    pub joined_at: Time,
    /// When its reports last showed progress (more delivered, or more repairs received), or
    /// it was admitted: `--final-wait` counts from here for a receiver still at work.
    pub progressed_at: Time,
    /// When its final report arrived.
    pub finished_at: Option<Time>,
    /// `--min-rate`: (when, bytes) at the start of the current measuring period.
    pub rate_mark: (Time, u64),
    /// Times it restarted mid-session and was taken back at a new address.
    pub restarts: u32,
    /// Times it moved to another address after a silence (its relay died and it followed
    /// the session to a standby relay).
    pub moves: u32,
    /// The partial copies of files it holds from an earlier session (its HAVE).
    pub held: Vec<session::Held>,
}

impl Member {
    pub fn new(
        node: u32,
        addr: SocketAddr,
        now: Time,
        region: Option<u16>,
        late: bool,
        admitted: Admission,
    ) -> Self {
        Member {
            node,
            addr,
            last_heard: now,
            evicted: None,
            final_state: None,
            bytes: 0,
            messages: 0,
            repairs: 0,
            duplicates: 0,
            rejected: 0,
            region,
            late,
            admitted,
            traffic: false,
            reported: None,
            joined_at: now,
            progressed_at: now,
            finished_at: None,
            rate_mark: (now, 0),
            restarts: 0,
            moves: 0,
            held: Vec::new(),
        }
    }

    /// Its REPORT at `now` of `bytes` and `messages` delivered and `repairs` received:
    /// progress that moved, if an earlier REPORT said less (a receiver's first REPORT, at its
    /// admission, says 0 and 0). A receiver behind a slow link that waits for repairs of an
    /// early gap delivers nothing new for a while, but its repairs still count up.
    pub fn report(&mut self, now: Time, bytes: u64, messages: u64, repairs: u64) {
        let moved = self
            .reported
            .is_some_and(|(b, m, r)| bytes > b || messages > m || repairs > r);
        if moved {
            self.traffic = true;
            self.progressed_at = now;
        }
        self.reported = Some((bytes, messages, repairs));
    }

    /// Still at work: neither evicted nor finished.
    pub fn live(&self) -> bool {
        self.evicted.is_none() && self.final_state.is_none()
    }

    /// Whether its completion counts: admitted by the key or by `--receiver-list`, or by a
    /// JOIN and seen carrying the session's traffic since.
    pub fn believed(&self) -> bool {
        self.admitted != Admission::Join || self.traffic
    }
}

/// Whether the receivers that joined are the ones expected.
fn enough(expect: &Expect, members: &[Member], waited: Duration) -> bool {
    match expect {
        Expect::Count(n) => members.len() >= *n,
        Expect::List(l) => l.iter().all(|x| members.iter().any(|m| m.node == *x)),
        Expect::Discover(d) => waited >= *d && !members.is_empty(),
    }
}

/// Most HAVEs kept from receivers not yet admitted while gathering (anyone on the LAN can
/// send one; beyond this they are counted as strangers' packets and dropped).
const EARLY_HAVES: usize = 256;

/// Gather the receivers: announce, admit JOINs, until the expected ones are in or
/// `--join-wait` runs out.
pub(super) fn gather(
    ep: &mut Endpoint,
    obs: &mut dyn SendObserver,
) -> Result<Vec<Member>, NetError> {
    let mut members: Vec<Member> = Vec::new();
    // HAVEs of receivers not admitted yet (a receiver sends its HAVE before its JOIN), by
    // node and address, at most EARLY_HAVES of them: a JOIN then finds what its sender holds
    // even when the two arrive in different reads.
    let mut early: Vec<(u32, SocketAddr, Vec<session::Held>)> = Vec::new();
    let gather_start = ep.clock.now();
    let mut next_announce = Time::ZERO;
    loop {
        let now = ep.clock.now();
        if ep.interrupt.raised() {
            return Err(NetError::Interrupted(
                "interrupted by a signal while receivers joined; nothing was sent".into(),
            ));
        }
        if enough(&ep.cfg.expect, &members, now.saturating_since(gather_start)) {
            return Ok(members);
        }
        if now.saturating_since(gather_start) >= ep.cfg.join_wait {
            let want = match &ep.cfg.expect {
                Expect::Count(n) => format!("{n}"),
                Expect::List(l) => format!("{}", l.len()),
                Expect::Discover(_) => "at least 1".into(),
            };
            return Err(NetError::Failed(format!(
                "only {} of {want} receivers joined within {:.0?}: start `rmcast recv --group {}` \
                 on each receiver first, check --interface/--ttl, or raise --join-wait",
                members.len(),
                ep.cfg.join_wait,
                ep.group
            )));
        }
        if now >= next_announce {
            let ids: Vec<u32> = members.iter().map(|m| m.node).collect();
            let pkt = ep.announce(Phase::Gathering, &ids, &ep.proto.gathering_params(&ep.cfg))?;
            if let Err(e) = ep.wire.send(&ep.sock, ep.group, &pkt, false) {
                return Err(crate::error::classify("send to", ep.group, e));
            }
            next_announce = now + Duration::from_millis(100);
        }
        let wait = ep
            .clock
            .until(next_announce)
            .min(Duration::from_millis(100));
        ep.wait(wait)?;
        while let Some((h, len, from)) = ep.next() {
            if h.family != Family::Session || h.session != ep.session {
                ep.wire.stranger();
                continue;
            }
            match Packet::decode(ep.plain(len)) {
                Ok(Packet {
                    message: Message::Session(session::Message::Join { region }),
                    ..
                }) => {
                    let newcomer = join(ep, &mut members, h.source, from, region, obs)?;
                    if newcomer {
                        next_announce = Time::ZERO;
                        if let Some(i) = early.iter().position(|e| e.0 == h.source && e.1 == from) {
                            if let Some(m) = members.last_mut() {
                                m.held = early.swap_remove(i).2;
                            }
                        }
                    }
                }
                Ok(Packet {
                    message: Message::Session(session::Message::Have { files }),
                    ..
                }) => {
                    match members
                        .iter_mut()
                        .find(|m| m.node == h.source && m.addr == from)
                    {
                        Some(m) => m.held = session::held(files).collect(),
                        None => {
                            let held = session::held(files).collect();
                            let n = early.len();
                            match early.iter_mut().find(|e| e.0 == h.source && e.1 == from) {
                                Some(e) => e.2 = held,
                                None if n < EARLY_HAVES => early.push((h.source, from, held)),
                                None => ep.wire.stranger(),
                            }
                        }
                    }
                }
                // A member the gathering ANNOUNCE already lists REPORTs instead of repeating
                // its JOIN: a sign of life too (else one admitted more than --evict-after
                // before the last JOIN is evicted by the transfer's first silence check).
                Ok(Packet {
                    message:
                        Message::Session(session::Message::Report {
                            bytes,
                            messages,
                            repairs,
                            ..
                        }),
                    ..
                }) => {
                    if let Some(m) = members
                        .iter_mut()
                        .find(|m| m.node == h.source && m.addr == from)
                    {
                        let now = ep.clock.now();
                        m.last_heard = now;
                        m.report(now, bytes, messages, repairs);
                    } else {
                        ep.wire.stranger();
                    }
                }
                _ => {}
            }
        }
    }
}

/// A JOIN from `id` at `from`: admit it (or refresh it, from the address it joined from);
/// `true` for a newcomer. Never fatal: anyone on the LAN can send a JOIN.
fn join(
    ep: &mut Endpoint,
    members: &mut Vec<Member>,
    id: u32,
    from: SocketAddr,
    region: Option<u16>,
    obs: &mut dyn SendObserver,
) -> Result<bool, NetError> {
    if let Some(m) = members.iter_mut().find(|m| m.node == id) {
        // A repeated JOIN counts only from the address the member joined from: a JOIN
        // under its node id from elsewhere is someone else's (it would redirect its data).
        if m.addr != from && !(ep.proto.resumes() && m.addr.ip() == from.ip()) {
            ep.wire.stranger();
            return Ok(false);
        }
        if m.addr != from {
            // Restarted on its host (see `Transfer::restarted`): taken back there.
            tracing::info!(node = id, old = %m.addr, new = %from, "member restarted while gathering");
            m.addr = from;
            m.restarts += 1;
        }
        m.region = region;
        m.last_heard = ep.clock.now();
        return Ok(false);
    }
    let wanted = match &ep.cfg.expect {
        Expect::List(l) => l.contains(&id),
        Expect::Count(n) => members.len() < *n,
        Expect::Discover(_) => members.len() < ep.cfg.max_receivers,
    };
    if id == ep.node || id == 0 {
        ep.wire.stranger();
        return Ok(false);
    }
    if !wanted {
        // Told so, by an answer bound to it: it stops waiting instead of JOINing until its
        // patience runs out.
        ep.wire.stranger();
        ep.refuse(id, from);
        return Ok(false);
    }
    if ep.cfg.unicast {
        if let Some(first) = members.first() {
            // Not fatal: anyone on the LAN can send a JOIN.
            tracing::warn!(
                "--unicast: a second receiver ({id:08x} from {from}) asked to join besides \
                 {:08x} from {}; a unicast session has exactly one receiver: ignored",
                first.node,
                first.addr
            );
            ep.wire.stranger();
            ep.refuse(id, from);
            return Ok(false);
        }
    }
    obs.joined(id, from);
    let admitted = ep.admission();
    members.push(Member::new(
        id,
        from,
        ep.clock.now(),
        region,
        false,
        admitted,
    ));
    Ok(true)
}
