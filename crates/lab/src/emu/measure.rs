//! Measuring a [`Chain`] of emulated links from its two hosts with UDP: round trips of small
//! datagrams echoed back ([`round_trips`]), and a paced stream counted at the far end
//! ([`stream`]), for the rate and the loss.

use super::chain::Chain;
use rmcast_net::NetError;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

fn io(what: &str) -> impl Fn(std::io::Error) -> NetError + '_ {
    move |e| NetError::io(what.to_string(), e)
}

/// The thread enters host B's namespace.
fn enter_b(c: &Chain) -> Result<(), NetError> {
    let s = c
        .segments
        .last()
        .ok_or_else(|| NetError::setup("a chain without links"))?;
    s.enter(s.hosts() - 1)
}

fn enter_a(c: &Chain) -> Result<(), NetError> {
    c.segments
        .first()
        .ok_or_else(|| NetError::setup("a chain without links"))?
        .enter(0)
}

/// Round-trip times (s) of `n` datagrams of `size` bytes from host A to an echo on host B,
/// `gap` apart (lost ones left out).
pub fn round_trips(c: &Chain, n: usize, size: usize, gap: Duration) -> Result<Vec<f64>, NetError> {
    let port = 47_000 + (std::process::id() % 1000) as u16;
    let b = SocketAddr::from((c.b_addr(), port));
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| -> Result<Vec<f64>, NetError> {
        let st = stop.clone();
        let echo = s.spawn(move || -> Result<(), NetError> {
            enter_b(c)?;
            let sock = UdpSocket::bind(b).map_err(io("bind the echo"))?;
            sock.set_read_timeout(Some(Duration::from_millis(50)))
                .map_err(io("echo timeout"))?;
            let _ = tx.send(());
            let mut buf = vec![0u8; 65_536];
            while !st.load(std::sync::atomic::Ordering::Relaxed) {
                if let Ok((len, from)) = sock.recv_from(&mut buf) {
                    let _ = sock.send_to(&buf[..len], from);
                }
            }
            Ok(())
        });
        let _ = rx.recv_timeout(Duration::from_secs(5));
        let r = (|| {
            enter_a(c)?;
            let sock = UdpSocket::bind((c.a_addr(), 0)).map_err(io("bind"))?;
            sock.set_read_timeout(Some(Duration::from_millis(500)))
                .map_err(io("timeout"))?;
            let mut out = Vec::new();
            let mut msg = vec![0u8; size.max(8)];
            let mut buf = vec![0u8; 65_536];
            for i in 0..n as u64 {
                msg[..8].copy_from_slice(&i.to_be_bytes());
                let t = Instant::now();
                sock.send_to(&msg, b).map_err(io("send"))?;
                while let Ok((len, _)) = sock.recv_from(&mut buf) {
                    if len >= 8 && buf[..8] == i.to_be_bytes() {
                        out.push(t.elapsed().as_secs_f64());
                        break;
                    }
                }
                std::thread::sleep(gap);
            }
            Ok(out)
        })();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        echo.join()
            .map_err(|_| NetError::setup("the echo thread panicked"))??;
        r
    })
}

/// What a [`stream`] saw.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stream {
    /// Datagrams sent.
    pub sent: u64,
    /// Datagrams received.
    pub received: u64,
    /// Seconds from the first arrival to the last.
    pub span_s: f64,
}

/// `count` datagrams of `size` bytes from host A to host B, one every `gap` (none: as fast as
/// the socket takes them), counted at B until 1 s after the last was sent.
pub fn stream(c: &Chain, count: u64, size: usize, gap: Duration) -> Result<Stream, NetError> {
    let port = 48_000 + (std::process::id() % 1000) as u16;
    let b = SocketAddr::from((c.b_addr(), port));
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::scope(|s| -> Result<Stream, NetError> {
        let counter = s.spawn(move || -> Result<(u64, f64), NetError> {
            enter_b(c)?;
            let sock = UdpSocket::bind(b).map_err(io("bind the counter"))?;
            sock.set_read_timeout(Some(Duration::from_secs(1)))
                .map_err(io("counter timeout"))?;
            let _ = tx.send(());
            let mut buf = vec![0u8; 65_536];
            let (mut n, mut first, mut last) = (0u64, None, Instant::now());
            while sock.recv_from(&mut buf).is_ok() {
                last = Instant::now();
                first.get_or_insert(last);
                n += 1;
            }
            let span = first.map_or(0.0, |f| last.duration_since(f).as_secs_f64());
            Ok((n, span))
        });
        let _ = rx.recv_timeout(Duration::from_secs(5));
        enter_a(c)?;
        let sock = UdpSocket::bind((c.a_addr(), 0)).map_err(io("bind"))?;
        let msg = vec![7u8; size];
        let t0 = Instant::now();
        let mut sent = 0;
        for i in 0..count {
            if !gap.is_zero() {
                let due = t0 + gap * i as u32;
                let now = Instant::now();
                if due > now {
                    std::thread::sleep(due - now);
                }
            }
            if sock.send_to(&msg, b).is_ok() {
                sent += 1;
            }
        }
        let (received, span_s) = counter
            .join()
            .map_err(|_| NetError::setup("the counter thread panicked"))??;
        Ok(Stream {
            sent,
            received,
            span_s,
        })
    })
}
