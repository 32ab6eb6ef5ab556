//! Checking an ANNOUNCE before a receiver acts on it: the protocol is one this build runs,
//! the security mode matches ours, and every window, timing and size the sender announces
//! lies within the protocol spec's range (the spec table is the one home of those limits).

use crate::agents;
use rmcast_wire::session;
use std::time::Duration;

fn security_text(bits: u8) -> &'static str {
    match bits {
        0 => "no key",
        b if b & session::SECURITY_ENCRYPT != 0 => "--key-file with --encrypt",
        _ => "--key-file without --encrypt",
    }
}

/// Whether `v`, a value in `key`'s unit, lies in the range `protocol`'s spec row gives it.
fn in_spec(protocol: &str, key: &str, v: f64) -> Result<(), String> {
    match rmcast_proto::protocols::lookup(protocol).and_then(|p| p.param(key)) {
        Some(row) if !row.range.admits(v) => Err(format!(
            "{protocol} {key} = {v}{} is outside the protocol's range ({:?})",
            if row.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", row.unit)
            },
            row.range
        )),
        _ => Ok(()),
    }
}

fn us_to_ms(us: u32) -> f64 {
    f64::from(us) / 1000.0
}

/// Check an ANNOUNCE before this receiver acts on it: a protocol this build runs, the
/// security mode we run, every window, timing and size within the protocol spec's range,
/// protocol parameters that decode. `Err` says why (the ANNOUNCE is then counted in
/// `rejected_announce` and ignored).
pub(super) fn check_announce(m: &session::Message<'_>, ours: u8) -> Result<(), String> {
    let session::Message::Announce {
        protocol,
        security,
        ack_delay_us,
        window,
        ack_timeout_us,
        params,
        ..
    } = *m
    else {
        return Ok(());
    };
    let Some(p) = agents::announced(protocol) else {
        return Err(format!("unknown protocol family {protocol}"));
    };
    if security != ours {
        return Err(format!(
            "the sender announces {}, this receiver runs with {}: pass the sender's --key-file (and --encrypt if it uses it)",
            security_text(security),
            security_text(ours)
        ));
    }
    let name = p.name();
    if p.announced_window(1) != 0 {
        in_spec(name, "window", f64::from(window))?;
    }
    in_spec("saw", "ack_delay_max_ms", us_to_ms(ack_delay_us))?;
    // The receivers' ACK-delay timer is derived from the sender's retransmission timeout.
    let rto = rmcast_proto::bap::spec::bap_rto(Duration::from_micros(u64::from(ack_timeout_us)));
    in_spec("bap", "rto_ms", rto.as_secs_f64() * 1e3)?;
    p.check_params(params).map_err(|e| format!("{name}: {e}"))?;
    p.late_offer(params).map_err(|e| e.to_string())?;
    // The tree family's gathering ANNOUNCE names its variant in one byte; anything longer
    // is the regions' parameters.
    if p.family() == rmcast_wire::Family::Tree && params.len() > 1 {
        let d = session::DspParams::decode(params).map_err(|e| format!("dsp parameters: {e}"))?;
        in_spec(name, "status_min_ms", us_to_ms(d.status_min_us))?;
        in_spec(name, "status_max_ms", us_to_ms(d.status_max_us))?;
        // The socket driver's own bound on the mean interval (the simulator's allow less).
        let mean_us = (f64::from(d.status_min_us) + f64::from(d.status_max_us)) / 2.0;
        in_spec(name, "status_ms", mean_us / 1000.0)?;
        in_spec(name, "local_rtd_ms", us_to_ms(d.local_rtd_us))?;
        in_spec(name, "r_f", f64::from(d.r_f_milli) / 1000.0)?;
        if d.status_min_us > d.status_max_us {
            return Err("dsp status_min above status_max".into());
        }
    }
    Ok(())
}
