//! `rmcast relay`: a process in the network between a sender and its receivers, hosting the
//! session's protocol helper (its [`RouterAgent`]: PGM's network element) where a router
//! would, as the simulator's routers host it.
//!
//! A relay has one *upstream* interface (toward the sender) and one or more *downstream*
//! interfaces (toward receivers or further relays). It is an application-level hop, as UFTP's
//! proxies are, not a kernel router:
//!
//! * **Down.** It joins the group on the upstream interface and multicasts what the agent
//!   lets through (everything, for a protocol without one) on each downstream interface it
//!   chooses, from one socket per interface. Receivers there take the relay's address for
//!   the sender's: everything they get from the session comes from it.
//! * **Up.** A receiver's unicast (JOIN, REPORT, NAK, ACK) comes to the relay's socket on its
//!   interface; the relay shows it to the agent and forwards what the agent lets through to
//!   the sender from a socket of its own for that receiver (a *proxy*), so the sender sees
//!   each receiver at a distinct address and its unicast to one of them comes back through
//!   that proxy, to be forwarded down to the receiver. Relays stack: a relay's upstream may be
//!   another relay's downstream interface.
//! * **The agent** sees every packet of the session with the interface it came in on (0 the
//!   upstream, 1.. the downstream ones in the order given) and decides ([`RouteDecision`]);
//!   what it originates (PGM's NCFs) goes out from the same sockets.
//!
//! One session at a time: the first ANNOUNCE heard upstream (or the one `--session` names)
//! fixes the session, its sender and the sender's address; the relay forgets it after the
//! sender's END (or silence for [`RelayConfig::idle`]) and then serves the next one.
//!
//! * **Members' multicast** (a protocol whose sender hears the group: SRM's requests,
//!   repairs and session messages): a receiver's multicast goes up from its proxy (the
//!   sender and the members upstream know it by that address) and down every downstream
//!   interface from the relay's own socket there, the receiving one too (its siblings know
//!   the member only by its proxy's address); the members' multicast upstream goes down.
//!
//! * **A region's local exchange** (csp, cp: `--region R`): the agent is region R's
//!   [`rmcast_proto::tree::Exchange`] under the node id the sender named for it; the
//!   endpoints' statuses addressed to it stop here, its consolidated status goes up, its
//!   ASSIGNs down to the endpoint named; for cp the region's local group (group port + 1 + R)
//!   is carried between the downstream interfaces: an endpoint's local re-multicast goes
//!   down every downstream interface from the relay's socket there, the receiving one too.
//!   A relay without `--region` forwards csp and cp unexamined (an upper level).
//!
//! * **A region's prmp relay** (multi-level prmp: `--region R`): the agent is
//!   [`rmcast_proto::prmp::tree::RelayRouter`] under the node id the sender named for it, a
//!   child of the sender and the polling parent of region R's receivers: the sender's data
//!   and polls stop here, the relay's own go down, its responses up from its upstream unicast
//!   socket, where the sender's unicast repairs to it arrive.
//!
//! * **A dsp region's designated receiver on a separate host** (`rmcast send --designated
//!   relay`, `--region R`): the agent is [`rmcast_proto::tree::HostedDesignated`]; the
//!   sender's data passes (and is held), the members' statuses stop here, its status goes up
//!   and its local re-multicasts down to the region's local group.
//!
//! * **Keyed sessions** (`--key-file`): a relay holding the session's key opens every datagram
//!   (authenticates it, decrypts a copy for its agent and itself), refuses what does not open,
//!   forwards what passes as it came (sealed by its author, so receivers check the sender's
//!   seal, not the relay's) and seals what its agent originates under the agent's own node
//!   id. A relay without the key drops sealed datagrams and says so.
//!
//! Not yet: dsp whose designated receivers are receivers, whose members reach them at their
//! own addresses, is refused at its first ANNOUNCE
//! ([`crate::agents::NetProtocol::relay_refusal`]).

use crate::agents::{self, Announced, Links, RelayAt};
use crate::endpoint::RECV_BUF;
use crate::interrupt::Interrupt;
use crate::secure::Sealer;
use crate::socket::{group_socket, unicast_socket, SocketOpts};
use crate::NetError;
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use rmcast_proto::{
    Dest, GroupId, IfaceId, NodeId, RouteDecision, RouterAgent, RouterTransmit, Time,
};
use rmcast_wire::{session, Family, Header, Message, Packet};
use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::time::Duration;

mod config;
mod report;
mod standby;
pub use config::RelayConfig;
use standby::Standby;
mod rounds;
mod sealed;
pub use report::{RelayReport, SessionReport};
use sealed::Dgram;

const UP: Token = Token(0);
const UP_UNICAST: Token = Token(1 << 17);
const DOWN_BASE: usize = 1;
const LOCAL_BASE: usize = 1 << 18;
const DOWN_GROUP_BASE: usize = 1 << 19;
const PROXY_BASE: usize = 1 << 20;

/// Where a datagram from upstream came in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Upstream {
    /// On the group.
    Group,
    /// To the proxy of the receiver with this index.
    Proxy(usize),
    /// To the relay's own unicast socket: for its agent.
    Agent,
}

/// A receiver (or a relay below) seen downstream, and the socket it is forwarded upstream from.
struct Proxy {
    sock: UdpSocket,
    /// Where the receiver is, on which downstream interface (0-based).
    addr: SocketAddr,
    iface: usize,
    /// Its node id, from the first datagram it sent.
    node: u32,
    /// When it was last heard from.
    last_heard: Time,
}

/// The session being served.
struct Served {
    report: SessionReport,
    upstream: SocketAddr,
    agent: Option<Box<dyn RouterAgent + Send>>,
    /// What the agent's interfaces 1.. are.
    links: Links,
    /// The protocol (once its running ANNOUNCE was heard).
    protocol: Option<&'static agents::Protocol>,
    proxies: Vec<Proxy>,
    by_addr: HashMap<SocketAddr, usize>,
    last_heard: Time,
    ended_at: Option<Time>,
    /// The node id the agent answers to (the relay's, or the one the sender named for it).
    agent_node: u32,
    /// A local group to carry, once its sockets are open ([`Relay::open_local`]).
    local_pending: Option<SocketAddr>,
    /// Joined to the local group on each downstream interface.
    local: Vec<UdpSocket>,
}

/// How long a session is kept after the sender's END: the receivers' last words (their
/// final reports answered by END again) still pass.
const AFTER_END: Duration = Duration::from_secs(2);

struct Relay {
    cfg: RelayConfig,
    node: u32,
    poll: Poll,
    up: UdpSocket,
    up_unicast: UdpSocket,
    down: Vec<UdpSocket>,
    /// Joined to the group on each downstream interface: the receivers' own multicast
    /// (`srm`'s requests, repairs and session messages).
    down_group: Vec<UdpSocket>,
    clock: crate::clock::Clock,
    served: Option<Served>,
    report: RelayReport,
    buf: Vec<u8>,
    /// With a key: the sealer, and where a datagram is opened (the one received stays as it
    /// came, to be forwarded).
    sealer: Option<Sealer>,
    plain: Vec<u8>,
    warned_sealed: bool,
    /// `--standby`: its watch over the active relay downstream.
    standby: Option<Standby>,
}

/// Run a relay until `--once`'s session ends, `wait` passes without a session, or a signal.
pub fn relay(cfg: RelayConfig) -> Result<RelayReport, NetError> {
    if cfg.downstream.is_empty() {
        return Err(NetError::setup(
            "a relay needs at least one --downstream interface",
        ));
    }
    if cfg.downstream.contains(&cfg.upstream) {
        return Err(NetError::setup(format!(
            "interface {} is both upstream and downstream: a relay forwards between different \
             interfaces",
            cfg.upstream
        )));
    }
    let interrupt = Interrupt::install();
    let mut r = Relay::open(cfg)?;
    let started = r.clock.now();
    let mut events = Events::with_capacity(256);
    // Sockets that may still hold datagrams after their last round (see `rounds`).
    let mut carried: Vec<Token> = Vec::new();
    loop {
        if interrupt.raised() {
            r.report.interrupted = true;
            r.finish("interrupted");
            return Ok(r.report);
        }
        let now = r.clock.now();
        let refused = r
            .report
            .sessions
            .last()
            .is_some_and(|s| s.ended == "refused");
        if (r.expire(now) || refused) && r.cfg.once {
            return Ok(r.report);
        }
        if r.served.is_none() && r.report.sessions.is_empty() {
            if let Some(w) = r.cfg.wait {
                if now.saturating_since(started) >= w {
                    let sealed = r.keying_hint();
                    return Err(NetError::Failed(format!(
                        "no session announced on {} within {:.1}s{sealed}",
                        r.cfg.group,
                        w.as_secs_f64()
                    )));
                }
            }
        }
        let timeout = if carried.is_empty() {
            r.timeout(now)
        } else {
            Duration::ZERO
        };
        match r.poll.poll(&mut events, Some(timeout)) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(NetError::io("poll", e)),
        }
        let round = rounds::next_round(
            std::mem::take(&mut carried),
            events.iter().map(|e| e.token()),
        );
        carried = rounds::serve_round(&mut r, round, rounds::BUDGET, Relay::drain)?;
        r.agent_timers();
    }
}

impl Relay {
    fn open(cfg: RelayConfig) -> Result<Relay, NetError> {
        let poll = Poll::new().map_err(|e| NetError::io("create poll", e))?;
        let opts = |iface: &str| {
            let mut o = SocketOpts::new(cfg.group);
            o.interface = Some(iface.to_string());
            o.ttl = cfg.ttl;
            o.loopback = false;
            o
        };
        let mut up = UdpSocket::from_std(group_socket(&opts(&cfg.upstream))?);
        // What the agent originates upstream goes from it; what comes back to it is the
        // agent's (a sender's unicast repair to a prmp relay).
        let mut up_unicast = UdpSocket::from_std(unicast_socket(&opts(&cfg.upstream))?);
        let reg = |s: &mut UdpSocket, t: Token| {
            poll.registry()
                .register(s, t, Interest::READABLE)
                .map_err(|e| NetError::io("register a socket", e))
        };
        reg(&mut up, UP)?;
        reg(&mut up_unicast, UP_UNICAST)?;
        let mut down = Vec::new();
        let mut down_group = Vec::new();
        for (i, d) in cfg.downstream.iter().enumerate() {
            let mut s = UdpSocket::from_std(unicast_socket(&opts(d))?);
            reg(&mut s, Token(DOWN_BASE + i))?;
            down.push(s);
            let mut g = UdpSocket::from_std(group_socket(&opts(d))?);
            reg(&mut g, Token(DOWN_GROUP_BASE + i))?;
            down_group.push(g);
        }
        let cfg_standby = cfg.standby;
        let sealer = cfg
            .keys
            .clone()
            .map(|k| Sealer::new(k, crate::secure::unix_micros()));
        Ok(Relay {
            node: cfg.node.unwrap_or_else(crate::endpoint::nonzero_random),
            cfg,
            poll,
            up,
            up_unicast,
            down,
            down_group,
            clock: crate::clock::Clock::new(),
            served: None,
            report: RelayReport::default(),
            buf: vec![0; RECV_BUF],
            sealer,
            plain: Vec::new(),
            warned_sealed: false,
            standby: cfg_standby.map(Standby::new),
        })
    }

    /// How long the loop may sleep: until the agent's next deadline, at most 100 ms (the
    /// session's expiry is checked between).
    fn timeout(&self, now: Time) -> Duration {
        let mut t = Duration::from_millis(100);
        if let Some(d) = self
            .served
            .as_ref()
            .and_then(|s| s.agent.as_ref())
            .and_then(|a| a.poll_timeout())
        {
            t = t.min(d.saturating_since(now));
        }
        t
    }

    /// Forget a session after its END (and [`AFTER_END`]) or its sender's silence; whether
    /// one ended.
    fn expire(&mut self, now: Time) -> bool {
        let Some(s) = &self.served else { return false };
        let how = match s.ended_at {
            Some(t) if now.saturating_since(t) >= AFTER_END => "end",
            _ if now.saturating_since(s.last_heard) >= self.cfg.idle => "silent",
            _ => return false,
        };
        if how == "silent" {
            tracing::warn!(
                session = format_args!("{:08x}", s.report.session),
                "the sender was silent for {:.1}s: session forgotten",
                self.cfg.idle.as_secs_f64()
            );
        }
        self.finish(how);
        true
    }

    /// Close the served session's report.
    fn finish(&mut self, how: &'static str) {
        if let Some(mut s) = self.served.take() {
            for mut p in s.proxies.drain(..) {
                let _ = self.poll.registry().deregister(&mut p.sock);
            }
            for mut l in s.local.drain(..) {
                let _ = self.poll.registry().deregister(&mut l);
            }
            s.report.ended = how;
            s.report.receivers = s.by_addr.len();
            if let Some(sb) = self.standby.as_mut() {
                s.report.took_over_after_s = sb.took_over_after();
                sb.reset();
            }
            if let Some(a) = &s.agent {
                s.report.peak_state = a.peak_state_entries();
                s.report.repairs_originated = a.stats().repairs_sent;
            }
            self.report.sessions.push(s.report);
        }
    }

    /// Read at most `budget` datagrams waiting on the socket of `t`; whether it may hold more
    /// (`false`: it would block).
    fn drain(&mut self, t: Token, budget: usize) -> Result<bool, NetError> {
        for _ in 0..budget {
            let got = match t {
                UP => self.up.recv_from(&mut self.buf),
                UP_UNICAST => self.up_unicast.recv_from(&mut self.buf),
                Token(k) if k >= PROXY_BASE => {
                    match self
                        .served
                        .as_ref()
                        .and_then(|s| s.proxies.get(k - PROXY_BASE))
                    {
                        Some(p) => p.sock.recv_from(&mut self.buf),
                        None => return Ok(false),
                    }
                }
                Token(k) if k >= DOWN_GROUP_BASE => {
                    match self.down_group.get(k - DOWN_GROUP_BASE) {
                        Some(s) => s.recv_from(&mut self.buf),
                        None => return Ok(false),
                    }
                }
                Token(k) if k >= LOCAL_BASE => {
                    match self
                        .served
                        .as_ref()
                        .and_then(|s| s.local.get(k - LOCAL_BASE))
                    {
                        Some(s) => s.recv_from(&mut self.buf),
                        None => return Ok(false),
                    }
                }
                Token(k) => match self.down.get(k - DOWN_BASE) {
                    Some(s) => s.recv_from(&mut self.buf),
                    None => return Ok(false),
                },
            };
            let (n, from) = match got {
                Ok(x) => x,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                // An ICMP error of an earlier send (a receiver gone): not this socket's end.
                Err(e) if e.kind() == io::ErrorKind::ConnectionRefused => continue,
                Err(e) => return Err(NetError::io("receive", e)),
            };
            let now = self.clock.now();
            if self.standby_hears(t, n, from, now) {
                continue;
            }
            // The buffers are lent out while the datagram is handled (no copy per datagram
            // without a key).
            let buf = std::mem::take(&mut self.buf);
            let mut plain = std::mem::take(&mut self.plain);
            let Some(dgram) = self.unseal(buf.get(..n).unwrap_or_default(), &mut plain) else {
                self.buf = buf;
                self.plain = plain;
                continue;
            };
            let handled = match t {
                UP => {
                    self.on_upstream(now, Upstream::Group, from, dgram);
                    Ok(())
                }
                UP_UNICAST => {
                    self.on_upstream(now, Upstream::Agent, from, dgram);
                    Ok(())
                }
                Token(k) if k >= PROXY_BASE => {
                    self.on_upstream(now, Upstream::Proxy(k - PROXY_BASE), from, dgram);
                    Ok(())
                }
                Token(k) if k >= DOWN_GROUP_BASE => {
                    self.on_downstream(now, k - DOWN_GROUP_BASE, from, dgram, true)
                }
                Token(k) if k >= LOCAL_BASE => {
                    self.on_local(now, k - LOCAL_BASE, from, dgram);
                    Ok(())
                }
                Token(k) => self.on_downstream(now, k - DOWN_BASE, from, dgram, false),
            };
            self.buf = buf;
            self.plain = plain;
            handled?;
            self.open_local()?;
            self.agent_output();
        }
        Ok(true)
    }

    /// A datagram from upstream: multicast to the group, unicast to the receiver behind a
    /// proxy, or unicast to the relay's agent.
    fn on_upstream(&mut self, now: Time, upstream: Upstream, from: SocketAddr, d: Dgram<'_>) {
        let Some(h) = self.header(d.plain) else {
            return;
        };
        let proxy = match upstream {
            Upstream::Proxy(k) => Some(k),
            Upstream::Group | Upstream::Agent => None,
        };
        if self.served.is_none()
            && upstream == Upstream::Group
            && !self.adopt(now, &h, from, d.plain)
        {
            return; // a stale ANNOUNCE, counted
        }
        let Some(s) = self.served.as_mut() else {
            self.refuse();
            return;
        };
        // Everything of the session from the sender's address (a relay above speaks there
        // under its own node id too); and, for a protocol whose members multicast to each
        // other (srm), the group's traffic of the session from other members upstream.
        let member = upstream == Upstream::Group && s.protocol.is_some_and(|p| p.hears_group());
        if h.session != s.report.session || (from != s.upstream && !member) {
            self.refuse();
            return;
        }
        s.last_heard = now;
        if self.standby.as_mut().is_some_and(|sb| sb.holds(now)) {
            // Standing by: the session is followed (its END too), nothing goes down.
            s.report.standby_held += 1;
            if h.family != Family::Session {
                return;
            }
            if standby::is_end(d.plain) {
                s.ended_at.get_or_insert(now);
            }
            let custody = standby::custody(d.plain, self.cfg.region);
            if let (Some(p), Some(sb)) = (custody, self.standby.as_mut()) {
                sb.custody(p);
            }
            return;
        }
        if h.family == Family::Session {
            session_news(s, self.node, &self.cfg, now, d.plain);
        }
        let to = proxy
            .and_then(|k| s.proxies.get(k))
            .map(|p| (p.node, p.iface, p.addr));
        if let (Some((_, iface, addr)), Links::Receivers) = (to, s.links) {
            // Sent to one receiver (a DREQ, a subcast from a turning point above): it
            // goes there; links are receivers, so there is nothing to choose.
            s.report.down_forwarded += 1;
            self.send_down(iface, addr, d.wire);
            return;
        }
        let dest = match (to, upstream) {
            (Some((node, _, _)), _) => Dest::Node(NodeId(node)),
            (None, Upstream::Agent) => Dest::Node(NodeId(s.agent_node)),
            (None, _) => Dest::Group(GroupId(0)),
        };
        let decision = match s.agent.as_mut() {
            Some(a) => a.on_packet(now, IfaceId(0), NodeId(h.source), dest, d.plain),
            // Addressed to an agent this relay does not have: nobody's.
            None if upstream == Upstream::Agent => RouteDecision::Consume,
            None => RouteDecision::Forward,
        };
        // Addressed to the agent, or only for an agent on the router's own node (a relay
        // hosts none besides its own): it goes nowhere else.
        let decision = match (upstream, decision) {
            (Upstream::Agent, _) => RouteDecision::Consume,
            (_, d) if d.only_local() => RouteDecision::Consume,
            (_, d) => d,
        };
        let on = match decision {
            RouteDecision::Consume => {
                s.report.down_consumed += 1;
                return;
            }
            RouteDecision::Forward => None,
            RouteDecision::ForwardOn(on) => {
                s.report.down_subcast += 1;
                Some(on)
            }
        };
        s.report.down_forwarded += 1;
        match to {
            Some((_, iface, addr)) => {
                if on.is_none_or(|on| on.contains(&IfaceId(iface as u32 + 1))) {
                    self.send_down(iface, addr, d.wire);
                }
            }
            None => self.multicast_down(on.as_deref(), self.cfg.group, d.wire),
        }
    }

    /// Multicast `d` to `group` down every downstream interface (`on` `None`), or down the
    /// links `on` names: interfaces, or single receivers by unicast ([`Links`]).
    fn multicast_down(&mut self, on: Option<&[IfaceId]>, group: SocketAddr, d: &[u8]) {
        let Some(on) = on else {
            for i in 0..self.down.len() {
                self.send_down(i, group, d);
            }
            return;
        };
        let links = self.served.as_ref().map_or(Links::Interfaces, |s| s.links);
        for link in on.iter().filter_map(|i| (i.0 as usize).checked_sub(1)) {
            match links {
                Links::Interfaces => self.send_down(link, group, d),
                Links::Receivers => {
                    let p = self.served.as_ref().and_then(|s| s.proxies.get(link));
                    if let Some((iface, addr)) = p.map(|p| (p.iface, p.addr)) {
                        self.send_down(iface, addr, d);
                    }
                }
            }
        }
    }

    /// The first ANNOUNCE of a session heard upstream (of `--session`, if given) makes it
    /// the one served; false for a stale sealed one (counted, not to be forwarded).
    fn adopt(&mut self, now: Time, h: &Header, from: SocketAddr, d: &[u8]) -> bool {
        if h.family != Family::Session || self.cfg.session.is_some_and(|s| s != h.session) {
            return true;
        }
        let Ok(Packet {
            message: Message::Session(m @ session::Message::Announce { .. }),
            ..
        }) = Packet::decode(d)
        else {
            return true;
        };
        let Some(a) = Announced::of(&m) else {
            return true;
        };
        if self.stale_announce(h.session) {
            return false;
        }
        if let Some(p) = agents::announced(a.protocol) {
            if let Some(why) = p.relay_refusal(a) {
                let known = self.report.sessions.iter().any(|r| r.session == h.session);
                if !known {
                    tracing::error!(
                        session = format_args!("{:08x}", h.session),
                        "{} cannot pass a relay: {why}; the session is not served",
                        p.name_of(&a)
                    );
                    self.report.sessions.push(SessionReport {
                        session: h.session,
                        sender: h.source,
                        upstream: Some(from),
                        protocol: Some(p.name_of(&a)),
                        ended: "refused",
                        ..SessionReport::default()
                    });
                }
                return true;
            }
        }
        tracing::info!(
            session = format_args!("{:08x}", h.session),
            sender = format_args!("{:08x}", h.source),
            %from,
            "serving a session"
        );
        self.served = Some(Served {
            report: SessionReport {
                session: h.session,
                sender: h.source,
                upstream: Some(from),
                ended: "running",
                ..SessionReport::default()
            },
            upstream: from,
            agent: None,
            links: Links::Interfaces,
            protocol: None,
            proxies: Vec::new(),
            by_addr: HashMap::new(),
            last_heard: now,
            ended_at: None,
            agent_node: self.node,
            local_pending: None,
            local: Vec::new(),
        });
        true
    }

    /// A datagram from a receiver on downstream interface `iface` (0-based): unicast to the
    /// relay, or multicast to the `group`.
    fn on_downstream(
        &mut self,
        now: Time,
        iface: usize,
        from: SocketAddr,
        d: Dgram<'_>,
        group: bool,
    ) -> Result<(), NetError> {
        let Some(h) = self.header(d.plain) else {
            return Ok(());
        };
        let Some(s) = self.served.as_mut() else {
            self.refuse();
            return Ok(());
        };
        if h.session != s.report.session {
            self.refuse();
            return Ok(());
        }
        let k = match s.by_addr.get(&from) {
            Some(&k) => k,
            // The group's traffic counts only from receivers the relay serves.
            None if group => {
                self.refuse();
                return Ok(());
            }
            None => {
                if s.proxies.len() >= self.cfg.max_receivers {
                    self.report.rejected_receivers += 1;
                    return Ok(());
                }
                let mut o = SocketOpts::new(self.cfg.group);
                o.interface = Some(self.cfg.upstream.clone());
                o.ttl = self.cfg.ttl;
                o.loopback = false;
                let mut sock = UdpSocket::from_std(unicast_socket(&o)?);
                let k = s.proxies.len();
                self.poll
                    .registry()
                    .register(&mut sock, Token(PROXY_BASE + k), Interest::READABLE)
                    .map_err(|e| NetError::io("register a socket", e))?;
                s.proxies.push(Proxy {
                    sock,
                    addr: from,
                    iface,
                    node: h.source,
                    last_heard: now,
                });
                s.by_addr.insert(from, k);
                k
            }
        };
        let Some(p) = s.proxies.get_mut(k) else {
            return Ok(());
        };
        if p.node != h.source || p.iface != iface {
            self.refuse();
            return Ok(());
        }
        p.last_heard = now;
        let p = &*p;
        // Its IP destination is this relay: the agent sees it addressed to the relay's node
        // (an LMS REPAIR for another turning point then goes on up, as it would).
        let link = match s.links {
            Links::Interfaces => iface,
            Links::Receivers => k,
        };
        let dest = if group {
            Dest::Group(GroupId(0))
        } else {
            Dest::Node(NodeId(s.agent_node))
        };
        // The session's own packets (JOIN, REPORT) are the sender's business, not the agent's.
        let decision = match s.agent.as_mut() {
            Some(a) if h.family != Family::Session => a.on_packet(
                now,
                IfaceId(link as u32 + 1),
                NodeId(h.source),
                dest,
                d.plain,
            ),
            _ => RouteDecision::Forward,
        };
        // Only for an agent on the router's own node: a relay hosts none besides its own.
        if decision == RouteDecision::Consume || decision.only_local() {
            s.report.up_consumed += 1;
            return Ok(());
        }
        s.report.up_forwarded += 1;
        if !group {
            let sent = p.sock.send_to(d.wire, s.upstream);
            self.count_send(sent);
            return Ok(());
        }
        // A member's multicast: up from its own proxy (the sender and the members upstream
        // know it by that address), and down every interface from the relay's socket there,
        // the receiving one too: its siblings know the member only by its proxy's address
        // and take from the relay what the relay's address sends.
        let sent = p.sock.send_to(d.wire, self.cfg.group);
        self.count_send(sent);
        for i in 0..self.down.len() {
            self.send_down(i, self.cfg.group, d.wire);
        }
        Ok(())
    }

    /// Open the local group's sockets the agent asked for (cp), one per downstream interface.
    fn open_local(&mut self) -> Result<(), NetError> {
        let Some(g) = self.served.as_mut().and_then(|s| s.local_pending.take()) else {
            return Ok(());
        };
        let mut socks = Vec::new();
        for (i, d) in self.cfg.downstream.iter().enumerate() {
            let mut o = SocketOpts::new(g);
            o.interface = Some(d.clone());
            o.ttl = self.cfg.ttl;
            o.loopback = false;
            let mut sock = UdpSocket::from_std(group_socket(&o)?);
            self.poll
                .registry()
                .register(&mut sock, Token(LOCAL_BASE + i), Interest::READABLE)
                .map_err(|e| NetError::io("register a socket", e))?;
            socks.push(sock);
        }
        tracing::info!(local_group = %g, "carrying the region's local group between the downstream interfaces");
        if let Some(s) = self.served.as_mut() {
            s.local = socks;
            s.report.local_group = Some(g);
        }
        Ok(())
    }

    /// A datagram on the local group from a receiver served on downstream interface `iface`:
    /// down every downstream interface from the relay's socket there, the receiving one too
    /// (the receivers there know the sender of their session only by the relay's address).
    fn on_local(&mut self, now: Time, iface: usize, from: SocketAddr, d: Dgram<'_>) {
        let Some(h) = self.header(d.plain) else {
            return;
        };
        let Some(s) = self.served.as_mut() else {
            self.refuse();
            return;
        };
        let known = s
            .by_addr
            .get(&from)
            .and_then(|&k| s.proxies.get_mut(k))
            .filter(|p| p.node == h.source && p.iface == iface);
        let (Some(p), Some(g)) = (known, s.report.local_group) else {
            self.refuse();
            return;
        };
        if h.session != s.report.session {
            self.refuse();
            return;
        }
        p.last_heard = now;
        s.report.local_carried += 1;
        for i in 0..self.down.len() {
            self.send_down(i, g, d.wire);
        }
    }

    fn send_down(&mut self, iface: usize, to: SocketAddr, d: &[u8]) {
        let sent = match self.down.get(iface) {
            Some(s) => s.send_to(d, to),
            None => return,
        };
        self.count_send(sent);
    }

    fn count_send(&mut self, sent: io::Result<usize>) {
        if let Err(e) = sent {
            self.report.send_dropped += 1;
            if e.kind() != io::ErrorKind::WouldBlock {
                tracing::debug!("send: {e}");
            }
        }
    }

    fn agent_timers(&mut self) {
        let now = self.clock.now();
        if let Some(a) = self.served.as_mut().and_then(|s| s.agent.as_mut()) {
            if a.poll_timeout().is_some_and(|t| t <= now) {
                a.handle_timeout(now);
            }
        }
        if let Some(s) = self.served.as_mut() {
            follow_links(s, now);
        }
        self.agent_output();
    }

    /// Send what the agent originated.
    fn agent_output(&mut self) {
        let mut out: Vec<RouterTransmit> = Vec::new();
        if let Some(s) = self.served.as_mut() {
            if let Some(a) = s.agent.as_mut() {
                while let Some(t) = a.poll_transmit() {
                    out.push(t);
                }
            }
            s.report.originated += out.len() as u64;
        }
        for t in out {
            self.originate(t);
        }
    }

    fn originate(&mut self, t: RouterTransmit) {
        let mut sealed = Vec::new();
        let d = self.seal(&t.transmit.payload, &mut sealed);
        let Some(s) = self.served.as_ref() else {
            return;
        };
        match t.transmit.dest {
            // The session's group; another group is the region's local group the agent
            // serves (a dsp designated relay's local re-multicast), down only.
            Dest::Group(g) if g != GroupId(0) => {
                if let Some(local) = s.report.local_group.or(s.local_pending) {
                    self.multicast_down(t.via.as_deref(), local, d);
                }
            }
            Dest::Group(_) => {
                let up = t.via.as_ref().is_some_and(|v| v.contains(&IfaceId(0)));
                if up {
                    let sent = self.up_unicast.send_to(d, self.cfg.group);
                    self.count_send(sent);
                }
                self.multicast_down(t.via.as_deref(), self.cfg.group, d);
            }
            Dest::Node(n) if n.0 == s.report.sender || n.0 == self.node || n.0 == s.agent_node => {
                // In a member's name (a PGM network element's shorter NAK list): from that
                // member's proxy, as its own would go, since upstream knows it by that address.
                let member = Header::parse(&t.transmit.payload)
                    .ok()
                    .and_then(|h| s.proxies.iter().find(|p| p.node == h.source));
                let sent = match member {
                    Some(p) => p.sock.send_to(d, s.upstream),
                    None => self.up_unicast.send_to(d, s.upstream),
                };
                self.count_send(sent);
            }
            Dest::Node(n) => {
                if let Some((iface, addr)) = s
                    .proxies
                    .iter()
                    .find(|p| p.node == n.0)
                    .map(|p| (p.iface, p.addr))
                {
                    self.send_down(iface, addr, d);
                }
            }
        }
    }
}

/// What a session datagram from the sender tells the relay: the running ANNOUNCE builds the
/// protocol's agent (once; later ones it is told of), END ends the session.
fn session_news(s: &mut Served, node: u32, cfg: &RelayConfig, now: Time, d: &[u8]) {
    let Ok(Packet {
        message: Message::Session(m),
        ..
    }) = Packet::decode(d)
    else {
        return;
    };
    if matches!(m, session::Message::End { .. }) {
        s.ended_at.get_or_insert(now);
        return;
    }
    let Some(a) = Announced::of(&m) else { return };
    if !a.running {
        return;
    }
    if s.report.protocol.is_some() {
        if let (Some(p), Some(agent)) = (s.protocol, s.agent.as_mut()) {
            p.relay_announced(now, &mut **agent, a);
        }
        return;
    }
    let receivers: Vec<(IfaceId, u32)> = s
        .proxies
        .iter()
        .enumerate()
        .map(|(k, p)| (IfaceId(k as u32 + 1), p.node))
        .collect();
    let at = RelayAt {
        session: s.report.session,
        sender: s.report.sender,
        node,
        receivers: &receivers,
        region: cfg.region,
        group: cfg.group,
    };
    s.protocol = agents::announced(a.protocol);
    match agents::relay_agent(a, &at) {
        Ok((name, relayed)) => {
            s.report.protocol = Some(name);
            s.report.agent = relayed.is_some();
            if let Some(r) = relayed {
                s.agent = Some(r.agent);
                s.links = r.links;
                s.agent_node = r.node.unwrap_or(node);
                s.local_pending = r.local_group;
            }
            tracing::info!(protocol = name, agent = s.report.agent, "session running");
        }
        Err(e) => {
            // Forwarded as it is: the receivers say what they make of it.
            tracing::warn!("the session's ANNOUNCE: {e}; its packets are forwarded unexamined");
            s.report.protocol = Some("unknown");
        }
    }
}

/// A receiver silent this long (it REPORTs every 250 ms) no longer holds a role for others
/// here ([`agents::NetProtocol::relay_links`]).
const LINK_SILENCE: Duration = Duration::from_secs(1);

/// With links that are receivers: tell the protocol which are heard from, so it may move a
/// role (LMS's replier link) off one that went silent.
fn follow_links(s: &mut Served, now: Time) {
    let (Links::Receivers, Some(p), Some(a)) = (s.links, s.protocol, s.agent.as_mut()) else {
        return;
    };
    let live: Vec<(IfaceId, u32)> = s
        .proxies
        .iter()
        .enumerate()
        .filter(|(_, p)| now.saturating_since(p.last_heard) < LINK_SILENCE)
        .map(|(k, p)| (IfaceId(k as u32 + 1), p.node))
        .collect();
    if let Some(link) = p.relay_links(&mut **a, &live) {
        s.report.role_moves += 1;
        tracing::warn!(
            link = link.0,
            "a receiver holding a role here went silent: moved to link {}",
            link.0
        );
    }
}
