//! Which protocol agents a session runs, and everything the socket driver needs to know about
//! a protocol, in one place per protocol: [`NetProtocol`], implemented once per family
//! (`saw.rs`, `bap.rs`, `rra.rs`, `tree.rs` (dsp, csp, cp), `prmp.rs`, `srm.rs`, `pgm.rs`,
//! `lms.rs`, `ff.rs`, `xtp.rs`) and chosen by wire family for every row of
//! `rmcast_proto::protocols::PROTOCOLS` that runs on sockets ([`PROTOCOLS`], [`Protocol`]).
//! The sender builds its agent from its command line and the joined receivers
//! ([`NetProtocol::start`]); a receiver builds its agent from the sender's ANNOUNCE
//! ([`NetProtocol::receiver`]). The agents are `rmcast-proto`'s — the very state machines the
//! simulator runs; this module only maps settings onto their configurations and says what the
//! session layer carries for them. The event loops ([`crate::sender`], [`crate::receiver`])
//! call only these traits: a protocol that implements them runs on sockets without an edit
//! there.

mod bap;
mod ff;
mod helpers;
mod lms;
mod norm;
mod pgm;
mod prmp;
mod rra;
mod saw;
mod srm;
mod tree;
mod xtp;

pub(crate) use helpers::RegionHelpers;
pub use helpers::{helper_id, HELPER_WAIT};
pub(crate) use norm::cc_config as norm_cc_config;
pub use prmp::{prmp_config, PrmpOpts};
pub use tree::{check_dsp, dsp_params, elect, local_group, DspOpts, DspPlace};
pub use xtp::XtpParams;

use crate::frame::DATA_OVERHEAD;
use crate::NetError;
use rmcast_proto::protocols::{Deployer, ProtocolDef, PROTOCOLS as TABLE};
use rmcast_proto::rng::AgentRng;
use rmcast_proto::spec::{self, ProtocolSpec};
use rmcast_proto::tree::Variant;
use rmcast_proto::{Agent, IfaceId, NodeId, Time};
use rmcast_wire::session;
use rmcast_wire::{Family, HEADER_LEN};
use std::net::SocketAddr;
use std::time::Duration;

/// What the socket driver needs to know about one protocol. Defaults fit a protocol whose
/// receivers need nothing from the ANNOUNCE but its timers, that multicasts to a fixed
/// receiver set and whose DATA adds one byte to the header.
pub trait NetProtocol: Sync {
    /// Bytes the body of the protocol's largest packet carrying one application message
    /// holds besides it (DATA's sequence number and other fields, or a REPAIR's if it has
    /// more: a repair of a full-size message must fit the datagram too, or every repair
    /// travels as two IP fragments), for `receivers` receivers.
    fn data_fields(&self, _receivers: usize) -> usize {
        1
    }

    /// Bytes the protocol's DATA packet adds to an application message (the common header,
    /// [`NetProtocol::data_fields`] and the application framing), for `receivers` receivers.
    fn data_overhead(&self, receivers: usize) -> usize {
        HEADER_LEN + DATA_OVERHEAD + self.data_fields(receivers)
    }

    /// Check the sender's settings before any receiver joins.
    fn check(&self, _s: &SenderSettings) -> Result<(), NetError> {
        Ok(())
    }

    /// Whether the sender's agent learns from its receivers that they hold everything (and
    /// then reports [`rmcast_proto::Event::Completed`]). A protocol without positive
    /// acknowledgments (NAK-based) says `false`: its transfer ends when the source is
    /// exhausted and every receiver sent its final report, or `--final-wait` after the last
    /// data; its agent keeps answering until then.
    fn acknowledged(&self) -> bool {
        true
    }

    /// Whether a session cannot run without an `rmcast relay` in the network (`csp`, `cp`:
    /// each region's statuses are consolidated by its local exchange, a relay).
    fn needs_relay(&self) -> bool {
        false
    }

    /// Whether a receiver of a dense stream may let datagrams gather for a few milliseconds
    /// before it reads again (fewer wake-ups, less CPU per datagram). Only where the sender
    /// does not wait for its receivers' feedback: a receiver asleep holds back the
    /// acknowledgments that open the sender's window, and a window per sleep (4 ms at most)
    /// is all such a protocol then moves (xtp's 16 packets: under 50 Mbit/s).
    fn gathers_reads(&self) -> bool {
        !self.acknowledged()
    }

    /// Whether the sender's agent hears the group (its receivers multicast what the source
    /// must see, as SRM's requests and session messages): the sender then also reads a
    /// socket joined to the group.
    fn hears_group(&self) -> bool {
        false
    }

    /// Whether it can run by unicast to a single receiver (`--unicast`).
    fn unicast(&self) -> bool {
        false
    }

    /// Whether it admits receivers while a stream runs (`--late-join`).
    fn late_join(&self) -> bool {
        false
    }

    /// Whether a member restarted mid-session (a JOIN under its node id from its IP, another
    /// port) is taken back there: a fresh receiver recovers all by asking (`pgm` NAKs from 0).
    fn resumes(&self) -> bool {
        false
    }

    /// Whether its receivers ask again at once for a repair that one they asked for later
    /// overtook (`pgm`'s `nak_overtaken`): then a repair asked for again joins the back of
    /// its asker's queue, keeping the order they judge by, instead of going first.
    fn repairs_in_order(&self) -> bool {
        false
    }

    /// What its packets need translated at the wire to go as a standard's (pgm: RFC 3208,
    /// norm: RFC 5740, [`crate::framing`]); `None`: they go as the agent writes them.
    fn framing(&self, _s: &SenderSettings) -> Option<crate::framing::Framing> {
        None
    }

    /// A further group its receivers join as soon as they find a session on `group`
    /// (`keyed`: they hold a key), before the running ANNOUNCE says how it runs: pgm's data
    /// port, where RFC 3208 packets follow that ANNOUNCE at once.
    fn early_group(&self, _group: SocketAddr, _keyed: bool) -> Option<SocketAddr> {
        None
    }

    /// Whether it adapts its rate to the network (`--rate auto`: TFMCC congestion control).
    fn congestion_control(&self) -> bool {
        false
    }

    /// What `--window` is to the session layer.
    fn window_use(&self) -> WindowUse {
        WindowUse::Unannounced
    }

    /// The window the ANNOUNCE carries for `window` (0: its receivers take none).
    fn announced_window(&self, window: u16) -> u16 {
        match self.window_use() {
            WindowUse::Unannounced => 0,
            WindowUse::Announced | WindowUse::InFlight => window,
        }
    }

    /// Datagrams in flight that one retransmission timeout must let the pacer send.
    fn in_flight(&self, window: u16) -> u64 {
        match self.window_use() {
            WindowUse::InFlight => u64::from(window.max(1)),
            WindowUse::Unannounced | WindowUse::Announced => 1,
        }
    }

    /// Application bytes per agent message when the protocol chooses them (`None`: what a
    /// datagram holds beside [`NetProtocol::data_overhead`]).
    fn message_size(&self, _s: &SenderSettings) -> Result<Option<usize>, NetError> {
        Ok(None)
    }

    /// The sender's agent and its part of the session, once the receivers have joined.
    fn start(&self, s: &SenderSettings, start: &Start<'_>) -> Result<Started, NetError>;

    /// A receiver's agent and its side of the session, from the ANNOUNCE (`None`: not yet).
    fn receiver(&self, a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError>;

    /// The stream a running session's ANNOUNCE offers a receiver not admitted at the start.
    fn late_offer(&self, _params: &[u8]) -> Result<Option<String>, NetError> {
        Ok(None)
    }

    /// Whether an ANNOUNCE's parameter bytes are ones this protocol defines (checked before a
    /// receiver acts on it; `Err`: malformed, counted and ignored). By default a protocol
    /// defines none: any byte is malformed.
    fn check_params(&self, params: &[u8]) -> Result<(), NetError> {
        if params.is_empty() {
            Ok(())
        } else {
            Err(NetError::Failed(format!(
                "{} parameter byte(s) where the protocol defines none",
                params.len()
            )))
        }
    }

    /// The protocol's helper inside the network for `rmcast relay` (PGM's network element,
    /// LMS's router), built from the sender's ANNOUNCE; `Ok(None)`: none (the relay forwards
    /// every packet), or not yet (the announce does not say enough).
    fn relay(&self, _a: Announced<'_>, _at: &RelayAt<'_>) -> Result<Option<Relayed>, NetError> {
        Ok(None)
    }

    /// Why `rmcast relay` cannot carry the session `a` announces (gathering or running), if so.
    fn relay_refusal(&self, _a: Announced<'_>) -> Option<&'static str> {
        None
    }

    /// Whether the helper `rmcast relay --region` hosts for the session `a` announces (a
    /// running one) holds custody: it acknowledges to the sender what it holds before its
    /// region's receivers have it (none on sockets now: prmp's relay and dsp's designated
    /// relay give custody up there). A standby relay
    /// ([`crate::relay`]'s `--standby`) does not take such a helper over mid-session: a fresh
    /// one could not get back what the dead one held.
    fn relay_custody(&self, _a: Announced<'_>, _region: Option<u16>) -> bool {
        false
    }

    /// `rmcast relay`: a later running ANNOUNCE of the session its `agent` serves (the csp/cp
    /// local exchange, a prmp relay stop waiting for children the sender evicted).
    fn relay_announced(
        &self,
        _now: Time,
        _agent: &mut dyn rmcast_proto::RouterAgent,
        _a: Announced<'_>,
    ) {
    }

    /// The name of the protocol a session of this wire family runs, when the ANNOUNCE `a` says
    /// more than the family does (dsp, csp and cp share one); `None`: this protocol's name.
    fn variant_name(&self, _a: &Announced<'_>) -> Option<&'static str> {
        None
    }

    /// The protocol parameters of the gathering ANNOUNCE (before anyone joined): what a relay
    /// must know at once (the tree family: which of dsp, csp and cp runs).
    fn gathering_params(&self, _cfg: &crate::sender::SendConfig) -> Vec<u8> {
        Vec::new()
    }

    /// `rmcast relay`: the receivers on `live` links (of [`Links::Receivers`], by node id)
    /// are heard from, the others went silent; the agent may move a role off a silent one
    /// (LMS: its replier link). Returns the new role holder's link, if it changed.
    fn relay_links(
        &self,
        _agent: &mut dyn rmcast_proto::RouterAgent,
        _live: &[(IfaceId, u32)],
    ) -> Option<IfaceId> {
        None
    }
}

/// A protocol's router agent as `rmcast relay` hosts it, and what its interfaces are.
pub struct Relayed {
    /// The agent.
    pub agent: Box<dyn rmcast_proto::RouterAgent + Send>,
    /// What the agent's interface numbers 1, 2, … stand for (0 is always the upstream).
    pub links: Links,
    /// The node id the agent answers to, when the sender gave it one (a csp/cp local
    /// exchange); `None`: the relay's own.
    pub node: Option<u32>,
    /// A local group the relay carries between its downstream interfaces (cp's region:
    /// an endpoint's local re-multicast reaches its region's endpoints on every interface).
    pub local_group: Option<SocketAddr>,
}

/// What a relay's agent takes for its downstream interfaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// The relay's downstream interfaces, in the order given (PGM: repair state per
    /// interface; a repair goes down an interface by multicast).
    Interfaces,
    /// Each receiver (or relay) served, in the order they joined: a link to one host
    /// (LMS: a replier link leads to one replier, and a DREQ or subcast pinned to a link
    /// goes to that host by unicast).
    Receivers,
}

/// What a relay knows of the session it serves when it builds its router agent.
#[derive(Debug, Clone, Copy)]
pub struct RelayAt<'a> {
    /// The session id.
    pub session: u32,
    /// The sender's node id.
    pub sender: u32,
    /// The relay's own node id (an LMS turning point names itself in its DREQs).
    pub node: u32,
    /// Receivers (or relays below) served so far: their link with [`Links::Receivers`] and
    /// their node id.
    pub receivers: &'a [(IfaceId, u32)],
    /// The region whose local exchange this relay hosts (`rmcast relay --region`; csp, cp).
    pub region: Option<u16>,
    /// The session's group.
    pub group: SocketAddr,
}

/// What a protocol's `--window` is to the session layer ([`NetProtocol::window_use`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WindowUse {
    /// Nothing the receivers need (or no window): the ANNOUNCE carries 0.
    Unannounced,
    /// The receivers' buffer: the ANNOUNCE carries it.
    Announced,
    /// Announced, and a whole window of datagrams may be in flight, which a retransmission
    /// timeout must let the pacer send.
    InFlight,
}

/// A protocol the real-network driver runs: its row of the one protocol table
/// ([`rmcast_proto::protocols::PROTOCOLS`]: command-line name, wire family, parameters) and
/// its [`NetProtocol`], which it dereferences to.
#[derive(Clone, Copy)]
pub struct Protocol {
    /// The protocol's spec entry.
    pub spec: &'static ProtocolSpec,
    adapter: &'static dyn NetProtocol,
}

impl Protocol {
    /// The command-line name (`--protocol`), the protocol's key in the spec table.
    pub fn name(&self) -> &'static str {
        self.spec.name
    }

    /// The name of the protocol the ANNOUNCE `a` of this family runs (see
    /// [`NetProtocol::variant_name`]).
    pub fn name_of(&self, a: &Announced<'_>) -> &'static str {
        self.adapter.variant_name(a).unwrap_or(self.spec.name)
    }

    /// The wire family its packets carry.
    pub fn family(&self) -> Family {
        self.spec.family
    }
}

/// The socket adapter of a row of the protocol table, by its wire family (and, for the
/// family seed 001's three protocols share, its variant). Evaluated at compile time: a row
/// that runs on sockets without an adapter fails the build.
const fn adapter(def: &ProtocolDef) -> &'static dyn NetProtocol {
    match def.spec.family {
        Family::Saw => &saw::Saw,
        Family::Bap => &bap::Bap,
        Family::Rra => &rra::Rra,
        Family::Tree => match def.deploy {
            Deployer::Regions(Variant::Dsp) => &tree::DSP,
            Deployer::Regions(Variant::Csp) => &tree::CSP,
            Deployer::Regions(Variant::Cp) => &tree::CP,
            Deployer::Layout(_) => panic!("a tree protocol is laid out on regions"),
        },
        Family::Prmp => &prmp::Prmp,
        Family::Srm => &srm::Srm,
        Family::Pgm => &pgm::Pgm,
        Family::Lms => &lms::Lms,
        Family::Ff => &ff::Ff,
        Family::Xtp => &xtp::Xtp,
        Family::Norm => &norm::Norm,
        Family::Session => panic!("the session family is the driver's own, not a protocol"),
    }
}

/// How many rows of the protocol table run on sockets. (Indexing here and in [`on_sockets`]
/// runs at compile time only: an index out of range fails the build.)
#[allow(clippy::indexing_slicing)]
const ON_SOCKETS: usize = {
    let (mut i, mut n) = (0, 0);
    while i < TABLE.len() {
        if TABLE[i].spec.sockets {
            n += 1;
        }
        i += 1;
    }
    n
};

/// The rows of the protocol table that run on sockets, each with its adapter.
#[allow(clippy::indexing_slicing)]
const fn on_sockets() -> [Protocol; ON_SOCKETS] {
    let first = Protocol {
        spec: TABLE[0].spec,
        adapter: adapter(&TABLE[0]),
    };
    let mut out = [first; ON_SOCKETS];
    let (mut i, mut k) = (0, 0);
    while i < TABLE.len() {
        if TABLE[i].spec.sockets {
            out[k] = Protocol {
                spec: TABLE[i].spec,
                adapter: adapter(&TABLE[i]),
            };
            k += 1;
        }
        i += 1;
    }
    out
}

impl std::ops::Deref for Protocol {
    type Target = dyn NetProtocol;

    fn deref(&self) -> &Self::Target {
        self.adapter
    }
}

/// The protocols the real-network driver runs: the rows of the protocol table that run on
/// sockets, in its order.
pub static PROTOCOLS: [Protocol; ON_SOCKETS] = on_sockets();

/// What `rmcast send` runs without `--protocol`: `pgm`, chosen by measurement on a bridge with
/// loss per Ethernet frame (docs/performance.md, "Real network"): the best goodput of the
/// protocols on sockets with loss, and receivers that lose nothing send nothing, whatever the
/// group's size. `saw` and `bap` stay available by name.
pub const DEFAULT_PROTOCOL: &str = "pgm";

/// A protocol the driver runs, by command-line name (the protocols whose spec says they run
/// on sockets).
pub fn protocol(name: &str) -> Result<&'static Protocol, NetError> {
    if let Some(p) = PROTOCOLS.iter().find(|p| p.name() == name) {
        return Ok(p);
    }
    let on_sockets: Vec<&str> = rmcast_proto::protocols::socket_protocols()
        .map(|p| p.name)
        .collect();
    let known: Vec<&str> = rmcast_proto::PROTOCOLS.iter().map(|p| p.name).collect();
    Err(NetError::setup(format!(
        "protocol {name:?} cannot run on the network in this build (available: {}; \
         implemented in the engine: {}): pass --protocol {}",
        on_sockets.join(", "),
        known.join(", "),
        on_sockets.join(", ")
    )))
}

/// The wire family of a protocol the driver runs, by command-line name.
pub fn protocol_family(name: &str) -> Result<Family, NetError> {
    protocol(name).map(|p| p.family())
}

/// The window a protocol runs with on sockets when `--window` is not given (its spec's
/// socket default; 16 for a protocol without a window).
pub fn default_window(protocol: &str) -> u16 {
    socket_int(protocol, "window")
        .and_then(|w| u16::try_from(w).ok())
        .unwrap_or(rmcast_proto::bap::spec::BAP_WINDOW)
}

/// What the sender's agent needs besides the receivers.
#[derive(Debug, Clone)]
pub struct SenderSettings {
    /// The sender's node id.
    pub node: u32,
    /// The session id.
    pub session: u32,
    /// `--window` (its unit is the protocol's: messages, blocks, packets).
    pub window: u16,
    /// Retransmission timeout (saw, bap; prmp: the floor of its RTO).
    pub rto: Duration,
    /// xtp: the thesis's settings instead of the improved ones (`--thesis`).
    pub xtp_thesis: bool,
    /// xtp: data bytes per packet.
    pub xtp_maxdata: usize,
    /// xtp: bytes per user write (one agent message); `None` = one datagram's worth.
    pub xtp_write_size: Option<usize>,
    /// xtp: send everything by unicast to the one receiver instead of multicasting.
    pub xtp_unicast: bool,
    /// xtp: add receivers whose status arrives unannounced (late joiners the driver
    /// admitted during the transfer; they start at their join point, no back-fill).
    pub xtp_accept_joins: bool,
    /// Pacing rate in bit/s (0 = unlimited) and datagram size, for the prmp IPG.
    pub rate_bps: u64,
    /// Largest datagram on the wire, bytes.
    pub datagram_size: usize,
    /// prmp: its parameters.
    pub prmp: PrmpOpts,
    /// dsp: its parameters.
    pub dsp: DspOpts,
    /// pgm: transmit window, packets (at least 1).
    pub pgm_txw: u64,
    /// `--rate auto`: congestion control (TFMCC) sets the rate, `rate_bps` caps it.
    pub tfmcc: bool,
    /// pgm: FEC repair, source packets per block (0: off).
    pub pgm_fec_k: u16,
    /// pgm: FEC, parity packets sent unasked after each block (0: none).
    pub pgm_fec_proactive: u16,
    /// pgm: its packets on the wire as RFC 3208 (unkeyed sessions only).
    pub pgm_rfc3208: bool,
    /// norm: its packets on the wire as RFC 5740 (unkeyed sessions only).
    pub norm_rfc5740: bool,
    /// Bytes sealing adds to each datagram (0 without a key).
    pub sealing: usize,
}

/// The socket default of `protocol`'s duration parameter `key` (ms in the spec table); zero
/// for a key the table lacks or that is no duration (each adapter's tests walk its keys).
pub(crate) fn socket_ms(protocol: &str, key: &str) -> Duration {
    match socket_default(protocol, key) {
        Some(spec::Value::Real(ms)) => spec::ms(ms),
        _ => Duration::ZERO,
    }
}

/// The socket default of `protocol`'s integer parameter `key` (its spec row's); `None` for
/// a key the table lacks or that is no integer.
pub(crate) fn socket_int(protocol: &str, key: &str) -> Option<u64> {
    match socket_default(protocol, key)? {
        spec::Value::Int(v) => Some(v),
        _ => None,
    }
}

/// A switch row's value on sockets (false when the protocol has no such row).
pub(crate) fn socket_switch(protocol: &str, key: &str) -> bool {
    socket_default(protocol, key) == Some(spec::Value::Bool(true))
}

/// A row's value on sockets (`None` when the protocol has no such row).
fn socket_default(protocol: &str, key: &str) -> Option<spec::Value> {
    Some(
        rmcast_proto::protocols::lookup(protocol)?
            .param(key)?
            .socket_default(),
    )
}

/// Messages the sender agent queues (the producer thread keeps the rest).
const QUEUE_LIMIT: usize = 32;

fn nodes(ids: &[u32]) -> Vec<NodeId> {
    ids.iter().map(|&i| NodeId(i)).collect()
}

/// A receiver that joined: node id, region (from its JOIN; `None`: it named none) and unicast
/// address.
pub type Joiner = (u32, Option<u16>, SocketAddr);

/// What the sender's session knows when the transfer starts.
#[derive(Debug, Clone, Copy)]
pub struct Start<'a> {
    /// The receivers, in join order.
    pub joined: &'a [Joiner],
    /// The session's group.
    pub group: SocketAddr,
    /// The name of the stream sent (empty for files).
    pub stream: &'a str,
}

impl Start<'_> {
    /// The joined receivers' node ids.
    pub fn ids(&self) -> Vec<u32> {
        self.joined.iter().map(|j| j.0).collect()
    }
}

/// The sender's agent and its protocol's part of the session.
pub struct Started {
    /// The agent.
    pub agent: Box<dyn Agent>,
    /// What the protocol adds to the session.
    pub side: Box<dyn SenderSide>,
}

impl Started {
    /// A sender's agent whose protocol adds nothing to the session.
    fn plain(agent: impl Agent + 'static) -> Result<Self, NetError> {
        Ok(Started {
            agent: Box::new(agent),
            side: Box::new(Plain),
        })
    }
}

/// A protocol's part of a running sender session: what the running ANNOUNCE carries and how
/// the session's membership changes it. The defaults: nothing to announce, nobody admitted
/// late, no regions.
pub trait SenderSide {
    /// The protocol parameters of the running ANNOUNCE.
    fn params(&self) -> Result<Vec<u8>, NetError> {
        Ok(Vec::new())
    }

    /// The session layer evicted `node` (before the agent's
    /// [`SenderAgent::remove_receiver`](rmcast_proto::SenderAgent::remove_receiver); a protocol
    /// whose receivers stand for others may hand the role to another receiver through `agent`);
    /// `true` if the parameters changed.
    fn evicted(&mut self, _now: Time, _agent: &mut dyn Agent, _node: u32) -> bool {
        false
    }

    /// Whether a receiver joining now is admitted.
    fn admits_joiners(&self) -> bool {
        false
    }

    /// The source is exhausted or the agent completed: admit nobody more; `true` if the
    /// parameters changed.
    fn close_joins(&mut self) -> bool {
        false
    }

    /// A receiver's role in the summary (`designated`, `member`), for protocols with regions.
    fn role(&self, _node: u32) -> Option<&'static str> {
        None
    }

    /// The receiver whose status stands for `node`'s at the sender (`dsp`: a member's
    /// designated receiver), `None` when the sender hears `node`'s own state.
    fn reported_by(&self, _node: u32) -> Option<u32> {
        None
    }

    /// Roles handed from one receiver to another while running, for the summary.
    fn role_changes(&self) -> Vec<String> {
        Vec::new()
    }

    /// Whether a protocol packet from `node` at an address of no member goes to the agent:
    /// a helper inside the network the sender named (a csp/cp local exchange, whose status
    /// comes from a relay's address).
    fn helper(&mut self, _now: Time, _node: u32) -> bool {
        false
    }

    /// Why the session cannot go on (a helper it needs never spoke), if it cannot; asked on
    /// every turn of the transfer loop from its start.
    fn stalled(&mut self, _now: Time) -> Option<String> {
        None
    }
}

/// A sender side with nothing to add.
pub struct Plain;
impl SenderSide for Plain {}

/// Who a receiver is in the session it joined.
#[derive(Debug, Clone, Copy)]
pub struct Me {
    /// This receiver's node id.
    pub node: u32,
    /// The session id.
    pub session: u32,
    /// The sender's node id.
    pub sender: u32,
    /// The session's group.
    pub group: SocketAddr,
}

impl Me {
    /// The random source of this receiver's agent: seeded by the session and the node, so a
    /// run's random choices (ACK delays, NAK back-offs) differ between receivers.
    fn rng(&self) -> AgentRng {
        AgentRng::derive(u64::from(self.session), NodeId(self.node), 1)
    }
}

/// A receiver's agent and its protocol's part of the session.
pub struct Received {
    /// The agent.
    pub agent: Box<dyn Agent>,
    /// What the protocol adds to the session.
    pub side: Box<dyn ReceiverSide>,
}

impl Received {
    /// A receiver's agent whose protocol adds nothing to the session.
    fn plain(agent: impl Agent + 'static) -> Result<Option<Self>, NetError> {
        Ok(Some(Received {
            agent: Box::new(agent),
            side: Box::new(Plain),
        }))
    }
}

/// A protocol's part of a receiver's session: peers besides the sender, further groups,
/// what later ANNOUNCEs change. The defaults: the sender is its only peer, the session's
/// group its only group.
pub trait ReceiverSide {
    /// The receivers it exchanges protocol packets with besides the sender (node, address).
    fn peers(&self) -> &[(u32, SocketAddr)] {
        &[]
    }

    /// Where the agent's packets to a group other than the session's (group 0) go.
    fn local_group(&self) -> Option<SocketAddr> {
        None
    }

    /// A further group to receive on.
    fn join(&self) -> Option<SocketAddr> {
        None
    }

    /// What the packets read on [`ReceiverSide::join`]'s group need translated to (pgm:
    /// from RFC 3208, norm: from RFC 5740, [`crate::framing`]); `None`: they are the agents'
    /// own.
    fn framing(&self) -> Option<crate::framing::Framing> {
        None
    }

    /// A later ANNOUNCE's parameters arrived.
    fn announced(&mut self, _now: Time, _agent: &mut dyn Agent, _params: &[u8]) {}

    /// Region and role (`designated`, `member`) for the report, for protocols with regions.
    fn place(&self) -> Option<(u16, &'static str)> {
        None
    }
}

impl ReceiverSide for Plain {}

/// What a receiver needs to know from the sender's ANNOUNCE.
#[derive(Debug, Clone, Copy)]
pub struct Announced<'a> {
    /// The wire family number of the sender's protocol.
    pub protocol: u8,
    /// The window its receivers take (0: none).
    pub window: u16,
    /// Bound of the receivers' random ACK delay, µs.
    pub ack_delay_us: u32,
    /// The receivers' ACK timeout, µs.
    pub ack_timeout_us: u32,
    /// The protocol's own parameters.
    pub params: &'a [u8],
    /// Whether the transfer runs (the running ANNOUNCE carries the protocol's parameters;
    /// the gathering one, none).
    pub running: bool,
}

impl<'a> Announced<'a> {
    /// The fields of an ANNOUNCE (`None` for other session messages).
    pub fn of(m: &session::Message<'a>) -> Option<Self> {
        match *m {
            session::Message::Announce {
                protocol,
                window,
                ack_delay_us,
                ack_timeout_us,
                params,
                phase,
                ..
            } => Some(Announced {
                protocol,
                window,
                ack_delay_us,
                ack_timeout_us,
                params,
                running: phase == session::Phase::Running,
            }),
            _ => None,
        }
    }

    /// The refusal of an announce this build cannot receive.
    fn unsupported(&self) -> NetError {
        NetError::setup(format!(
            "the sender uses protocol family {} (window {}), which this build cannot receive: upgrade rmcast",
            self.protocol, self.window
        ))
    }

    /// The announced window, refused when 0 (a windowed protocol's receiver needs one).
    pub(crate) fn window(&self) -> Result<u16, NetError> {
        match self.window {
            0 => Err(self.unsupported()),
            w => Ok(w),
        }
    }

    /// The protocol's own parameters, parsed by `decode`; a malformed encoding is the
    /// sender's fault, reported as such.
    pub(crate) fn params_as<T, E: std::fmt::Display>(
        &self,
        decode: impl FnOnce(&[u8]) -> Result<T, E>,
    ) -> Result<T, NetError> {
        decode(self.params)
            .map_err(|e| NetError::Failed(format!("the sender's parameters are malformed: {e}")))
    }
}

/// The protocol a sender announces, by wire family number.
pub fn announced(protocol: u8) -> Option<&'static Protocol> {
    let family = Family::from_u8(protocol).ok()?;
    PROTOCOLS.iter().find(|p| p.family() == family)
}

/// A receiver's agent, built from the sender's announce. `Ok(None)`: not yet (a `dsp`
/// receiver waits for the running announce that names its role).
pub fn receiver_agent(a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
    match announced(a.protocol) {
        Some(p) => p.receiver(a, me),
        None => Err(a.unsupported()),
    }
}

/// The router agent `rmcast relay` hosts for the session `a` announces, if its protocol has
/// one (see [`NetProtocol::relay`]), and the protocol's name.
pub fn relay_agent(
    a: Announced<'_>,
    at: &RelayAt<'_>,
) -> Result<(&'static str, Option<Relayed>), NetError> {
    match announced(a.protocol) {
        Some(p) => Ok((p.name_of(&a), p.adapter.relay(a, at)?)),
        None => Err(a.unsupported()),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Sender settings for the tests: `rmcast send`'s defaults with a window of 64, for
    /// 60,000-byte datagrams.
    pub(crate) fn settings() -> SenderSettings {
        let cfg = crate::sender::SendConfig {
            window: 64,
            ..crate::sender::SendConfig::new("239.255.90.1:47300".parse().unwrap())
        };
        SenderSettings::new(&cfg, 60_000, 1, 1, Duration::from_millis(20))
    }

    /// Each protocol's DATA overhead is what its largest packet carrying a message (DATA, or
    /// a REPAIR with more fields) adds to 100 bytes of application data (a wrong count made
    /// `bap`'s 1,472-byte datagrams 3 bytes too long, fragmented into two frames each, until
    /// GSO refused them; srm's and lms's REPAIRs were 17 and 8 bytes too long, every repair
    /// two frames, until `netns_frames` counted the receivers' reassembled datagrams).
    #[test]
    fn every_data_overhead_is_what_the_data_packet_adds() {
        use rmcast_wire::{bap, ff, lms, pgm, rra, saw, srm, Message, Packet};
        let payload = &[0u8; 100];
        let data = [
            ("saw", Message::Saw(saw::Message::Data { seq: 1, payload })),
            (
                "bap",
                Message::Bap(bap::Message::Data {
                    seq: u16::MAX,
                    first: 0,
                    payload,
                }),
            ),
            (
                "rra",
                Message::Rra(rra::Message::Data {
                    seq: 7,
                    low: 3,
                    acker: 9,
                    payload,
                }),
            ),
            (
                "srm",
                Message::Srm(srm::Message::Data {
                    seq: u64::MAX,
                    payload,
                }),
            ),
            (
                "srm",
                Message::Srm(srm::Message::Repair {
                    sender: 1,
                    requester: 2,
                    round: 3,
                    seq: u64::MAX,
                    dist_ns: u64::MAX,
                    payload,
                }),
            ),
            (
                "pgm",
                Message::Pgm(pgm::Message::Odata {
                    seq: u64::MAX,
                    payload,
                }),
            ),
            (
                "lms",
                Message::Lms(lms::Message::Data {
                    seq: u64::MAX,
                    payload,
                }),
            ),
            (
                "lms",
                Message::Lms(lms::Message::Repair {
                    seq: u64::MAX,
                    tp: 1,
                    tp_iface: 2,
                    payload,
                }),
            ),
            (
                "ff",
                Message::Ff(ff::Message::Data {
                    seq: u64::MAX,
                    ts: u64::MAX,
                    payload,
                }),
            ),
        ];
        let mut largest: Vec<(&str, usize)> = Vec::new();
        for (name, m) in data {
            let adds = Packet::encoded_len(&m) - 100 + DATA_OVERHEAD;
            match largest.iter_mut().find(|(n, _)| *n == name) {
                Some((_, a)) => *a = (*a).max(adds),
                None => largest.push((name, adds)),
            }
        }
        for (name, adds) in largest {
            assert_eq!(adds, protocol(name).unwrap().data_overhead(3), "{name}");
        }
    }

    #[test]
    fn unknown_protocols_and_bad_prmp_values_are_setup_errors() {
        assert!(matches!(protocol_family("nope"), Err(NetError::Setup(_))));
        let mut s = settings();
        let c = prmp_config(&s, &[]).unwrap();
        assert_eq!(c.ipg, Duration::from_micros(480));
        assert_eq!(
            c.epoch,
            Duration::from_micros(480 * 21),
            "ε rounded up to k·IPG"
        );
        s.prmp.mtr = 1.5;
        assert!(matches!(prmp_config(&s, &[]), Err(NetError::Setup(_))));
        s.prmp.mtr = 0.2;
        s.prmp.response_rate = 10;
        assert!(
            matches!(prmp_config(&s, &[]), Err(NetError::Setup(_))),
            "RQ = 0"
        );
        let d = DspOpts {
            r_f: 0.5,
            ..DspOpts::default()
        };
        assert!(check_dsp(&d).is_err());
    }

    #[test]
    fn every_protocol_the_spec_runs_on_sockets_is_here() {
        let names: Vec<&str> = PROTOCOLS.iter().map(|p| p.name()).collect();
        let on_sockets: Vec<&str> = rmcast_proto::protocols::socket_protocols()
            .map(|p| p.name)
            .collect();
        assert_eq!(names, on_sockets);
        for p in &PROTOCOLS {
            assert_eq!(protocol_family(p.name()).unwrap(), p.family());
            // A receiver finds the protocol from the ANNOUNCE: its family, and where families
            // are shared (dsp, csp, cp) the gathering parameters the protocol announces.
            let params = p.gathering_params(&crate::sender::SendConfig::new(
                "239.255.90.1:47300".parse().unwrap(),
            ));
            let a = Announced {
                protocol: p.family() as u8,
                window: 1,
                ack_delay_us: 0,
                ack_timeout_us: 0,
                params: &params,
                running: false,
            };
            assert_eq!(announced(p.family() as u8).unwrap().name_of(&a), p.name());
        }
    }

    /// Receivers gather a dense stream between reads only where the sender waits for no
    /// acknowledgment: the NAK-based protocols.
    #[test]
    fn only_nak_based_receivers_gather_reads() {
        let gather: Vec<&str> = PROTOCOLS
            .iter()
            .filter(|p| p.gathers_reads())
            .map(|p| p.name())
            .collect();
        assert_eq!(gather, ["srm", "pgm", "lms"]);
    }
}
