//! The quantized fields of RFC 5740: `grtt` and the CC `rtt` (§4.2.1, 8 bits), `gsize`
//! (§4.2.1, 4 bits), the NORM-CC rate (§4.2.3.4 / EXT_RATE, 16 bits) and loss (EXT_CC).
//! The formulas are the RFC's; libnorm's `NormQuantizeRtt`, `NORM_RTT[]`,
//! `NormQuantizeGroupSize`, `NORM_GSIZE[]` and `NormQuantizeRate` compute the same values
//! (the tests check them against libnorm's tables).
//!
//! * RTT, in seconds, 1 µs to 1000 s: below 33 µs, `q = rtt / 1 µs − 1` (1 µs steps);
//!   otherwise `q = ⌈255 − 13 · ln(1000 / rtt)⌉` (rounded up, so the estimate is never
//!   smaller). Back: `(q + 1) µs` for `q < 31`, else `1000 / e^((255 − q) / 13)` s.
//! * Group size: 3 bits of exponent `e` and a mantissa bit: `q & 7 = e − 1`, `q & 8` picks
//!   5 · 10^e instead of 10^e; quantizing rounds up.
//! * Rate, in bytes per second: a 12-bit mantissa `m` and 4-bit exponent `x`,
//!   `rate = (m · 10 / 4096) · 10^x`; 0 is sent as 1 (`m = 0, x = 1`).
//! * Loss fraction: `loss · 65535`, rounded (libnorm: 32 bits, of which EXT_CC's `cc_loss`
//!   holds the high half).

/// The smallest RTT the 8-bit form holds, in seconds.
pub const RTT_MIN: f64 = 1.0e-6;
/// The largest RTT the 8-bit form holds, in seconds.
pub const RTT_MAX: f64 = 1000.0;

/// An RTT (seconds) as the 8-bit `grtt` / `cc_rtt` field, clamped to 1 µs..1000 s.
pub fn quantize_rtt(rtt: f64) -> u8 {
    let rtt = if rtt.is_nan() {
        RTT_MAX
    } else {
        rtt.clamp(RTT_MIN, RTT_MAX)
    };
    if rtt < 3.3e-5 {
        ((rtt / RTT_MIN) as u8).saturating_sub(1)
    } else {
        (255.0 - 13.0 * (RTT_MAX / rtt).ln())
            .ceil()
            .clamp(0.0, 255.0) as u8
    }
}

/// The RTT (seconds) an 8-bit `grtt` / `cc_rtt` field stands for.
pub fn unquantize_rtt(q: u8) -> f64 {
    if q < 31 {
        f64::from(q + 1) * RTT_MIN
    } else {
        RTT_MAX / (f64::from(255 - q) / 13.0).exp()
    }
}

/// A group size as the 4-bit `gsize` field, rounded up (10 at least, 5·10^8 at most).
pub fn quantize_gsize(n: f64) -> u8 {
    if n.is_nan() || n < 10.0 {
        return 0;
    }
    let e = n.log10().floor();
    if e > 8.0 {
        return 0x0f;
    }
    let m = (n / 10f64.powf(e)).ceil();
    let e = e as u8;
    if m > 5.0 {
        if e > 7 {
            0x0f
        } else {
            e
        }
    } else if m > 1.0 {
        e + 0x07
    } else {
        e - 1
    }
}

/// The group size a 4-bit `gsize` field stands for (only its low 4 bits count).
pub fn unquantize_gsize(q: u8) -> f64 {
    let e = f64::from((q & 0x07) + 1);
    let m = if q & 0x08 != 0 { 5.0 } else { 1.0 };
    m * 10f64.powf(e)
}

/// A rate in bytes per second as the 16-bit NORM-CC rate field.
pub fn quantize_rate(rate: f64) -> u16 {
    if rate.is_nan() || rate <= 0.0 {
        return 0x01;
    }
    let x = rate.log10().floor().clamp(0.0, 15.0);
    let m = ((4096.0 / 10.0) * (rate / 10f64.powf(x)) + 0.5).min(4095.0);
    ((m as u16) << 4) | x as u16
}

/// The rate in bytes per second a 16-bit NORM-CC rate field stands for.
pub fn unquantize_rate(q: u16) -> f64 {
    f64::from(q >> 4) * (10.0 / 4096.0) * 10f64.powi(i32::from(q & 0x0f))
}

/// A loss fraction as the 16-bit `cc_loss` field.
pub fn quantize_loss(loss: f64) -> u16 {
    let l = if loss.is_nan() { 0.0 } else { loss.max(0.0) };
    (l * 65535.0 + 0.5).min(65535.0) as u16
}

/// The loss fraction a 16-bit `cc_loss` field stands for.
pub fn unquantize_loss(q: u16) -> f64 {
    f64::from(q) / 65535.0
}

/// A loss fraction as libnorm's 32-bit form (`cc_loss` high half, `loss_ex` low half).
pub fn quantize_loss32(loss: f64) -> u32 {
    let l = if loss.is_nan() { 0.0 } else { loss.max(0.0) };
    (l * f64::from(u32::MAX) + 0.5).min(f64::from(u32::MAX)) as u32
}

/// The loss fraction of libnorm's 32-bit form.
pub fn unquantize_loss32(q: u32) -> f64 {
    f64::from(q) / f64::from(u32::MAX)
}
