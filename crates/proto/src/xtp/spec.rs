//! `xtp` (seed 002): parameters and their defaults. Most come from a preset
//! ([`crate::xtp::SenderConfig::thesis`] or `improved`); a key overrides one field of it.

use crate::deploy::laid_out;
use crate::protocols::{Deployer, ProtocolDef};
use crate::spec::{Param, ProtocolSpec, Range, Value};
use rmcast_wire::Family;

/// `xtp`'s row of [`crate::PROTOCOLS`]: its spec and how its roles are laid out.
pub const XTP: ProtocolDef = ProtocolDef {
    spec: &ProtocolSpec {
        name: "xtp",
        seed: "002 (Johnstone & Williams 1997, SandiaXTP / XTP 4.0)",
        summary: "transmitter-driven multicast: FIRST+SREQ group set-up, CNTL status from every \
                  receiver on SREQ, FASTNAK, go-back-N or selective repeat, WTIMER back-off with \
                  synchronizing handshake, CTIMEOUT abort, block on acknowledgment per write",
        family: Family::Xtp,
        sockets: true,
        params: PARAMS,
    },
    deploy: Deployer::Layout(laid_out::<super::Xtp>),
    module: module_path!(),
};

/// Window on sockets, packets (selective repeat; the presets' 64 is the thesis's setting).
pub const SOCKET_WINDOW: u16 = 16;
/// CTIMEOUT: the sender aborts after this long without progress, s.
pub const CTIMEOUT_S: f64 = crate::xtp::CTIMEOUT_SANDIA.as_secs() as f64;
/// A receiver's buffer, packets.
pub const BUFFER: u64 = 256;

const PRESET: Value = Value::Derived("from the preset");

const fn flag(key: &'static str, help: &'static str) -> Param {
    Param::new(key, "", Range::Bool, PRESET, help)
}

/// `xtp`'s parameters.
pub const PARAMS: &[Param] = &[
    Param::choice(
        "preset",
        &["thesis", "improved"],
        "thesis",
        "thesis: go-back-N, uncapped WTIMER back-off, block on ack; improved: selective repeat, \
         back-off capped at 1 s, an SREQ every 8 packets",
    ),
    Param::new(
        "retx",
        "",
        Range::Choice(&["gbn", "go-back-n", "selective"]),
        PRESET,
        "retransmission: go-back-N or selective repeat",
    ),
    Param::switch(
        "multicast",
        true,
        "multicast, or unicast to a single receiver",
    ),
    flag("error_control", "error control (retransmission) on"),
    flag("flow_control", "flow control (window) on"),
    Param::new(
        "rate_bps",
        "bit/s",
        Range::Int {
            min: 0,
            max: u64::MAX / 2,
        },
        PRESET,
        "rate control (0: off)",
    ),
    Param::new(
        "maxdata",
        "bytes",
        Range::Int {
            min: 1,
            max: 65_000,
        },
        PRESET,
        "data bytes per packet",
    ),
    Param::new(
        "window",
        "packets",
        Range::Int {
            min: 1,
            max: 1 << 20,
        },
        PRESET,
        "packets not yet held by every receiver",
    )
    .flag("window")
    .on_sockets(
        Value::Int(SOCKET_WINDOW as u64),
        "the socket driver runs selective repeat without block on ack",
    ),
    flag(
        "block_on_ack",
        "each write waits until every receiver holds it",
    ),
    flag(
        "first_sreq",
        "the first packet asks for status (FIRST+SREQ group set-up)",
    ),
    flag("fastnak", "receivers report a gap at once (FASTNAK)"),
    Param::new(
        "sreq_every",
        "packets",
        Range::Int {
            min: 0,
            max: u64::MAX,
        },
        PRESET,
        "ask for status every this many packets (0: only at window ends)",
    ),
    Param::new(
        "wtimer_ms",
        "ms",
        Range::Real {
            min: 0.001,
            max: 1e9,
        },
        PRESET,
        "WTIMER's initial and smallest value",
    ),
    Param::new(
        "wtimer_cap_ms",
        "ms",
        Range::Real {
            min: 0.0,
            max: 1e12,
        },
        PRESET,
        "WTIMER back-off cap (0: uncapped)",
    ),
    Param::real(
        "ctimeout_s",
        "s",
        0.001,
        1e9,
        CTIMEOUT_S,
        "CTIMEOUT: the sender aborts after this long without progress",
    ),
    flag("coalesce", "coalesce small writes into full packets"),
    Param::int(
        "buffer",
        "packets",
        1,
        1 << 20,
        BUFFER,
        "a receiver's buffer",
    ),
    Param::new(
        "write_size",
        "bytes",
        Range::Int {
            min: 1,
            max: u32::MAX as u64,
        },
        Value::Derived("one datagram's worth"),
        "on sockets: bytes per application write (xtp splits each write into packets)",
    )
    .flag("write-size")
    .sockets_only(),
    Param::switch(
        "thesis",
        false,
        "on sockets: the 1997 thesis's settings (block on acknowledgment per write, go-back-N, \
         uncapped WTIMER back-off, CTIMEOUT 60 s) instead of selective repeat",
    )
    .flag("xtp-thesis")
    .sockets_only(),
    Param::switch(
        "unicast",
        false,
        "on sockets: send the data by unicast to the one receiver (it still finds the session \
         on --group); refused with more than one receiver",
    )
    .flag("unicast")
    .sockets_only(),
    Param::switch(
        "late_join",
        false,
        "on sockets, standard input only: admit receivers that join while the stream runs; they \
         get the stream from their join point on (no back-fill) and keep it as a `.partial` file",
    )
    .flag("late-join")
    .sockets_only(),
];
