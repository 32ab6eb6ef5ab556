//! The raw ceiling: an unreliable blast of datagrams to the group, as fast as the socket
//! takes them, and receivers that count what arrives. Each role runs in a child process: the
//! `rmcast` binary started with [`child_args`] calls [`recv`] or [`send`] and prints what
//! they report as one line of JSON.

use crate::{BenchError, Result};
use rmcast_net::socket::{group_socket, unicast_socket, SocketOpts};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

/// A raw-blast role of a child process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Blast datagrams at the group.
    Send,
    /// Count what arrives.
    Recv,
}

impl Role {
    fn name(self) -> &'static str {
        match self {
            Role::Send => "send",
            Role::Recv => "recv",
        }
    }
}

/// The `rmcast` arguments that run `role` in a child: `rmcast bench net --raw-role ...`.
pub fn child_args(
    role: Role,
    group: SocketAddr,
    iface: &str,
    bytes: u64,
    datagram_size: usize,
) -> Vec<String> {
    let mut v: Vec<String> = ["bench", "net", "--raw-role", role.name(), "--raw-group"]
        .map(String::from)
        .to_vec();
    v.push(group.to_string());
    v.extend(["--raw-iface".into(), iface.into(), "--raw-bytes".into()]);
    v.push(bytes.to_string());
    if role == Role::Send {
        v.extend(["--datagram-size".into(), datagram_size.to_string()]);
    }
    v
}

/// Wall-clock time shared by every process on the host (and its network namespaces).
pub(crate) fn epoch_ns() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_nanos() as f64)
}

/// Receive the raw blast until `expect` bytes arrived (or it stops); reports bytes,
/// datagrams and the wall-clock time of the last one.
pub fn recv(group: SocketAddr, iface: &str, expect: u64) -> Result<Value> {
    let mut o = SocketOpts::new(group);
    o.interface = Some(iface.into());
    o.recv_buffer = Some(32 << 20);
    let s = group_socket(&o)?;
    s.set_nonblocking(false)
        .map_err(BenchError::io("set the socket blocking"))?;
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .map_err(BenchError::io("set the read timeout"))?;
    let mut buf = vec![0u8; 65_536];
    let (mut bytes, mut n) = (0u64, 0u64);
    let (mut first, mut last) = (None::<Instant>, Instant::now());
    let start = Instant::now();
    loop {
        match s.recv_from(&mut buf) {
            Ok((k, _)) => {
                let now = Instant::now();
                first.get_or_insert(now);
                last = now;
                bytes += k as u64;
                n += 1;
                if bytes >= expect {
                    break;
                }
            }
            Err(_) => {
                if first.is_some() || start.elapsed() > Duration::from_secs(30) {
                    break;
                }
            }
        }
    }
    let last_ns = epoch_ns() - last.elapsed().as_nanos() as f64;
    Ok(json!({"bytes": bytes, "datagrams": n, "last_epoch_ns": last_ns}))
}

/// Blast `bytes` in datagrams of `size` as fast as the socket takes them; `started` gets the
/// wall-clock start before the first datagram leaves.
pub fn send(
    group: SocketAddr,
    iface: &str,
    bytes: u64,
    size: usize,
    started: impl FnOnce(&Value),
) -> Result<()> {
    let mut o = SocketOpts::new(group);
    o.interface = Some(iface.into());
    let s = unicast_socket(&o)?;
    s.set_nonblocking(false)
        .map_err(BenchError::io("set the socket blocking"))?;
    let d = vec![0xA5u8; size];
    let mut sent = 0u64;
    started(&json!({"start_epoch_ns": epoch_ns()}));
    while sent < bytes {
        // The last datagram carries only what is left, so the receivers' count is the file's
        // (a full last datagram made "delivered" read above 100 %).
        let k = usize::try_from(bytes - sent).map_or(size, |left| left.min(size));
        if s.send_to(&d[..k], group).is_ok() {
            sent += k as u64;
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    /// The blast's last datagram carries only the rest of the file, so a receiver counts
    /// exactly the file's bytes (loopback, datagrams larger than the remainder).
    #[test]
    fn the_blast_sends_exactly_the_file() {
        let group: SocketAddr = "239.255.91.7:28891".parse().unwrap();
        let bytes = 100_000;
        let rx = std::thread::spawn(move || recv(group, "lo", bytes).unwrap());
        std::thread::sleep(Duration::from_millis(200));
        // Repeated until the receiver has it: a blast on loopback is not reliable either.
        let mut got = None;
        for _ in 0..20 {
            send(group, "lo", bytes, 60_000, |_| {}).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            if rx.is_finished() {
                got = Some(rx.join().unwrap());
                break;
            }
        }
        let v = got.expect("the receiver counted the blast");
        assert_eq!(v["bytes"], json!(bytes), "{v}");
        assert_eq!(v["datagrams"], json!(2), "{v}");
    }
}
