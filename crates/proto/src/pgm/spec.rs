//! `pgm` (seed 003, after RFC 3208): parameters and their defaults.

use crate::deploy::laid_out;
use crate::protocols::{Deployer, ProtocolDef};
use crate::spec::{Param, ProtocolSpec, Value};
use rmcast_wire::Family;

/// `pgm`'s row of [`crate::PROTOCOLS`]: its spec and how its roles are laid out.
pub const PGM: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "pgm",
        seed: "003 (Papadopoulos, Ch. 5; after RFC 3208)",
        summary: "PGM essentials: NAKs confirmed by NCFs, network elements keep per-packet \
                  repair state and forward RDATA only where asked; the source repairs every NAK",
        family: Family::Pgm,
        sockets: true,
        params: PARAMS,
    },
    deploy: Deployer::Layout(laid_out::<super::Pgm>),
    module: module_path!(),
};

/// Receiver's random NAK back-off upper bound, ms (0: NAK at once).
pub const NAK_BACKOFF_MS: f64 = 0.0;
/// NAK repeated when no NCF arrives within this, ms. Also on sockets: a LAN's round trip is
/// under a millisecond, but a receiver that falls behind reads the NCF only after what is
/// queued before it; with 50 ms, 10 receivers on 2 cores at 1 % frame loss repeated each NAK
/// about four times and the repairs fed the backlog (4.6 repairs per loss, 17 Mbit/s).
pub const NAK_REPEAT_MS: f64 = 500.0;
/// NAK repeated when no RDATA follows the NCF within this, ms.
pub const NAK_RDATA_MS: f64 = 1000.0;
/// The source's delay before answering NAKs (batching), ms.
pub const REPAIR_DELAY_MS: f64 = 0.0;
/// After answering a NAK (NCF, then RDATA), the source ignores NAKs for the same packet for
/// this long, ms (0: every NAK answered).
pub const RDATA_HOLDOFF_MS: f64 = 0.0;
/// Interval of the source's SPMs, ms (0: none).
pub const SPM_INTERVAL_MS: f64 = 500.0;
/// A network element's repair state lifetime, ms.
pub const STATE_LIFETIME_MS: f64 = 2000.0;
/// A network element discards a NAK for a packet it holds repair state for only within this
/// of forwarding the last one upstream, ms (RFC 3208's NAK_ELIM_IVL); a later NAK goes up
/// again. 0: discarded while the state lives, the seed's model.
pub const NAK_ELIM_MS: f64 = 0.0;
/// On sockets (`rmcast relay`): the source's NAK hold-off, so the element forwards at most
/// the NAKs the source would answer. With the state lifetime, a receiver whose RDATA was
/// lost downstream re-NAKs every 30 ms (`nak_rto_min_ms`) into an element that discards
/// them for 2 s: 4 receivers behind one relay at 10 % frame loss held 0.66–2.0 MB of 3 MB
/// when the sender gave up on them.
pub const SOCKET_NAK_ELIM_MS: f64 = SOCKET_RDATA_HOLDOFF_MS;
/// How long the source keeps answering after the last data, ms.
pub const LINGER_MS: f64 = 5000.0;

/// On sockets: the transmit window, packets the source keeps for repair and sends beyond
/// what every receiver reported delivered (RFC 3208's TXW; 65,536 × 1,400-byte packets is
/// about 92 MB, and at 1 Gbit/s about 0.7 s, enough for the 250-ms reports to keep it open).
pub const SOCKET_TXW: u64 = 65_536;

/// On sockets: NAK back-off bound, ms. Without network elements only the source's multicast
/// NCF suppresses duplicate NAKs (a loss every receiver shares), and it arrives within a LAN's
/// round trip, well under this.
pub const SOCKET_NAK_BACKOFF_MS: f64 = 2.0;
/// On sockets: NAK hold-off, ms. Receivers that share a loss NAK within the 2-ms back-off
/// (plus a backlog's delay), and a receiver repeats its NAK only after `nak_repeat_ms` (500) or
/// `nak_rdata_ms` (1000): 20 ms answers a shared loss once and cannot delay a real repeat,
/// and a NAK flood (a member's, or a spoofed one without a key) yields at most 50 repairs per
/// second per packet instead of one per NAK.
pub const SOCKET_RDATA_HOLDOFF_MS: f64 = 20.0;
/// Floor of a receiver's adaptive NAK timers, ms (0: the seed's fixed `nak_repeat_ms` and
/// `nak_rdata_ms`, as the simulator runs them).
pub const NAK_RTO_MIN_MS: f64 = 0.0;
/// On sockets: the floor of a receiver's adaptive NAK timers, ms
/// ([`crate::pgm::ReceiverConfig::nak_rto_min`]). Above the source's 20-ms NAK hold-off, so a
/// NAK repeated for a lost RDATA is answered, not held off; the measured repair round trip on
/// a LAN is a few ms (2.7 ms median, 5.7 ms at the 90th percentile, on a 3-receiver bridge
/// with the machine loaded), so the floor is what a lost NCF or RDATA costs there, instead
/// of the 500 / 1,000 ms of the fixed timers.
pub const SOCKET_NAK_RTO_MIN_MS: f64 = 30.0;
/// Sequence numbers a receiver names in one NAK (1: a NAK per loss, seed 003's PGM).
pub const NAK_LIST: u32 = 1;
/// On sockets: sequence numbers per NAK, RFC 3208's OPT_NAK_LIST at its fullest (the NAK's
/// own and 62 more). A receiver behind a slow port loses repairs in bursts; NAKed one by
/// one, each loss cost a NAK and the source's multicast NCF, 51,000-69,000 control packets
/// that took 0.7-0.9 s of its 50 Mbit/s link in a 50 MB transfer (docs/performance.md, "An
/// uneven LAN").
pub const SOCKET_NAK_LIST: u32 = 63;
/// Ask again at once for a loss whose repair a later-confirmed one overtook (off: the seed's
/// PGM asks again only when the NCF's wait runs out).
pub const NAK_OVERTAKEN: bool = false;

/// On sockets: SPM interval, ms (a lost tail is found at the next SPM).
pub const SOCKET_SPM_INTERVAL_MS: f64 = 50.0;

/// FEC: source packets per block (transmission group), 0: off. Off by default, so every
/// scenario and study without the key runs as before.
pub const FEC_K: u32 = 0;
/// FEC: parity symbols the source sends unasked after each whole block (proactive parity,
/// RFC 3208's OPT_PARITY_PRM with the P bit), 0: none, on demand only. Off by default.
pub const FEC_PROACTIVE: u32 = 0;
/// Congestion control (TFMCC, RFC 4654), off by default: every scenario and study without
/// the key runs as before.
pub const TFMCC: bool = false;
/// TFMCC: the round-trip time assumed before one is measured, ms (RFC 4654's 500 ms).
pub const TFMCC_INITIAL_RTT_MS: f64 = 500.0;
/// On sockets: TFMCC's initial round-trip time, ms. A round lasts four of them until an RTT is
/// measured, and the first feedback comes late in the first round: 500 ms would hold a LAN
/// transfer at its initial rate for about two seconds; 20 ms is still far above a LAN's RTT.
pub const SOCKET_TFMCC_INITIAL_RTT_MS: f64 = 20.0;

/// Largest FEC block: with up to 256 symbols per block (GF(2^8)), at least as many parity
/// indices as source packets remain.
pub const FEC_K_MAX: u64 = 128;

/// `pgm`'s parameters.
pub const PARAMS: &[Param] = &[
    Param::int(
        "txw",
        "packets",
        1,
        1 << 24,
        SOCKET_TXW,
        "transmit window: packets kept for repair and sent beyond what every receiver \
         reported delivered (the simulator keeps every packet)",
    )
    .flag("txw")
    .sockets_only(),
    Param::switch(
        "rmcast_header",
        false,
        "on sockets: the packets in rmcast's own header on the group's port instead of RFC 3208 \
         on the port after it (what `rmcast relay`'s network element reads; keyed sessions \
         are sealed whole either way)",
    )
    .flag("rmcast-header")
    .sockets_only(),
    Param::ms(
        "nak_backoff_ms",
        NAK_BACKOFF_MS,
        "upper bound of a receiver's random NAK back-off",
    )
    .on_sockets(
        Value::Real(SOCKET_NAK_BACKOFF_MS),
        "without network elements the source's NCF is what suppresses a shared loss's NAKs",
    ),
    Param::ms(
        "nak_repeat_ms",
        NAK_REPEAT_MS,
        "a NAK is repeated when no NCF arrives within this",
    )
    .within(0.001, 1e9),
    Param::ms(
        "nak_rdata_ms",
        NAK_RDATA_MS,
        "a NAK is repeated when no RDATA follows its NCF within this",
    )
    .within(0.001, 1e9),
    Param::ms(
        "nak_rto_min_ms",
        NAK_RTO_MIN_MS,
        "0: fixed NAK timers; otherwise receivers repeat NAKs after the measured repair \
         round trip's timeout, at least this and at most nak_repeat_ms / nak_rdata_ms",
    )
    .on_sockets(
        Value::Real(SOCKET_NAK_RTO_MIN_MS),
        "a lost NCF or RDATA costs a few LAN round trips, not 500 / 1,000 ms",
    ),
    Param::int(
        "nak_list",
        "packets",
        1,
        63,
        NAK_LIST as u64,
        "most sequence numbers a receiver names in one NAK (losses found or timed out together \
         go in one NAK list, RFC 3208's OPT_NAK_LIST, confirmed by one NCF list; 1: a NAK per \
         loss)",
    )
    .on_sockets(
        Value::Int(SOCKET_NAK_LIST as u64),
        "a burst of losses behind a slow port costs one NAK and one NCF, not one per loss",
    ),
    Param::switch(
        "nak_overtaken",
        NAK_OVERTAKEN,
        "a receiver asks again at once for a confirmed loss whose repair was overtaken by the \
         repair of a loss confirmed after it (as TCP's RACK), instead of when the NCF's wait \
         (nak_rdata_ms) runs out",
    )
    .on_sockets(
        Value::Bool(true),
        "behind a slow port each round of repairs lost in front of it would wait out a \
         timer while the link idles",
    ),
    Param::ms(
        "repair_delay_ms",
        REPAIR_DELAY_MS,
        "the source's delay before answering NAKs (batches them)",
    ),
    Param::ms(
        "rdata_holdoff_ms",
        RDATA_HOLDOFF_MS,
        "after answering a NAK the source ignores NAKs for the same packet this long",
    )
    .on_sockets(
        Value::Real(SOCKET_RDATA_HOLDOFF_MS),
        "one repair per shared loss; a NAK flood cannot become a repair flood",
    ),
    Param::ms(
        "spm_interval_ms",
        SPM_INTERVAL_MS,
        "interval of the source's SPMs (0: none)",
    )
    .on_sockets(
        Value::Real(SOCKET_SPM_INTERVAL_MS),
        "receivers find a lost tail at the next SPM",
    ),
    Param::ms(
        "state_lifetime_ms",
        STATE_LIFETIME_MS,
        "how long a network element keeps repair state",
    )
    .within(0.001, 1e9),
    Param::ms(
        "nak_elim_ms",
        NAK_ELIM_MS,
        "a network element discards a repeat NAK only this long after forwarding one \
         (0: while its repair state lives)",
    )
    .on_sockets(
        Value::Real(SOCKET_NAK_ELIM_MS),
        "the source's NAK hold-off: a NAK repeated for a lost repair goes up again",
    ),
    Param::ms(
        "linger_ms",
        LINGER_MS,
        "how long the source keeps answering after the last data",
    )
    .on_sockets(
        Value::Derived("until every receiver reported or --final-wait ran out"),
        "the session's reports tell the sender when receivers finish",
    ),
    Param::int(
        "fec_k",
        "packets",
        0,
        FEC_K_MAX,
        FEC_K as u64,
        "FEC repair: source packets per block; receivers NAK a block for the parity they \
         need and the source answers with new parity symbols (0: off, every repair an RDATA)",
    )
    .flag("fec-k"),
    Param::int(
        "fec_proactive",
        "packets",
        0,
        FEC_K_MAX,
        FEC_PROACTIVE as u64,
        "FEC repair: parity symbols the source sends after each whole block without being \
         asked, so receivers that lost at most that many of its packets need no NAK (0: on \
         demand only; needs fec_k, and at most 256 − fec_k)",
    )
    .flag("fec-proactive"),
    Param::switch(
        "tfmcc",
        TFMCC,
        "congestion control (TFMCC, RFC 4654): receivers report a TCP-friendly rate from their \
         loss event rate and RTT, feedback suppressed towards the slowest; the source paces new \
         data at the slowest receiver's rate, with slow start",
    )
    .on_sockets(
        Value::Derived("on with `rmcast send --rate auto`"),
        "the rate follows the path instead of a fixed --rate",
    ),
    Param::ms(
        "tfmcc_initial_rtt_ms",
        TFMCC_INITIAL_RTT_MS,
        "TFMCC: the round-trip time assumed until one is measured",
    )
    .within(0.001, 60_000.0)
    .on_sockets(
        Value::Real(SOCKET_TFMCC_INITIAL_RTT_MS),
        "a LAN transfer leaves its initial rate within a fraction of a second",
    ),
];
