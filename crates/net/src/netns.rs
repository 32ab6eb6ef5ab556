//! Hosts on one Ethernet segment on a single Linux machine: network namespaces joined by veth
//! pairs to a Linux bridge, IP multicast crossing the bridge (IGMP snooping off, a
//! `224.0.0.0/4` route on each host's `eth0`). The same layout as `scripts/netns/run.sh` and
//! `rmcast bench net --bridge`, for code that runs endpoints as *threads*: [`Segment::enter`]
//! moves the calling thread (only it) into a host's namespace, so every socket the thread opens
//! afterwards lives on that host.
//!
//! The bridge lives in a namespace of its own (the *switch*), so [`Segment::frame_loss`] can
//! drop Ethernet frames where a switch or NIC drops them: an nftables rule in the switch's
//! `bridge` family, at its `forward` hook, sees every frame before IP reassembly, so a
//! datagram larger than the MTU is lost when any one of its fragments is.
//!
//! Needs root and iproute2 (`ip`); frame loss needs `nft` (nftables). [`available`] says why
//! not when they are missing. Dropping the [`Segment`] deletes its namespaces and bridge.

use crate::NetError;
use std::net::Ipv4Addr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

/// The interface name of every host's end of its veth pair.
pub const IFACE: &str = "eth0";

/// `Ok` if this process can build a [`Segment`] (Linux, root, `ip` present), else why not.
pub fn available() -> Result<(), String> {
    if !cfg!(target_os = "linux") {
        return Err("network namespaces are Linux only".into());
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false);
    if !root {
        return Err("network namespaces need root".into());
    }
    let ip = Command::new("ip")
        .arg("-V")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ip {
        return Err("`ip` (iproute2) is not installed".into());
    }
    Ok(())
}

static NEXT: AtomicU32 = AtomicU32::new(0);

/// A bridge and `hosts` network namespaces, host `h` at `10.93.<k>.(h+1)/24` on its `eth0`.
#[derive(Debug)]
pub struct Segment {
    prefix: String,
    subnet: u8,
    hosts: usize,
}

fn ip(args: &[&str]) -> Result<(), NetError> {
    run(
        Command::new("ip").args(args),
        "ip",
        &format!("`ip {}` failed", args.join(" ")),
        "network namespaces need root and iproute2",
    )
}

/// Run `cmd` quietly; when it cannot start or exits non-zero, a setup error with `failed`,
/// its standard error and `hint`.
fn run(cmd: &mut Command, program: &str, failed: &str, hint: &str) -> Result<(), NetError> {
    let out = cmd
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| NetError::io(format!("run `{program}`"), e))?;
    if !out.status.success() {
        return Err(NetError::setup(format!(
            "{failed}: {} ({hint})",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(())
}

impl Segment {
    /// Build the bridge and `hosts` namespaces (at most 250).
    pub fn create(hosts: usize) -> Result<Segment, NetError> {
        if hosts == 0 || hosts > 250 {
            return Err(NetError::setup(format!(
                "a segment holds 1 to 250 hosts, not {hosts}"
            )));
        }
        available().map_err(NetError::setup)?;
        let k = NEXT.fetch_add(1, Ordering::Relaxed);
        // Short names: interface names are at most 15 bytes ("vx" + 5 + "s" + 2 + "h" + 3).
        let prefix = format!("x{}s{}", std::process::id() % 100_000, k % 100);
        let seg = Segment {
            prefix,
            subnet: (k % 250) as u8,
            hosts: 0,
        };
        let mut seg = seg;
        let (sw, br) = (seg.switch(), seg.bridge());
        ip(&["netns", "add", &sw])?;
        ip(&["-n", &sw, "link", "add", &br, "type", "bridge"])?;
        // Without snooping the bridge floods multicast to every port, as a hub would.
        let _ = Command::new("ip")
            .args([
                "-n",
                &sw,
                "link",
                "set",
                &br,
                "type",
                "bridge",
                "mcast_snooping",
                "0",
            ])
            .stderr(Stdio::null())
            .status();
        ip(&["-n", &sw, "link", "set", &br, "up"])?;
        for h in 0..hosts {
            let ns = seg.host(h);
            let v = seg.port(h);
            ip(&["netns", "add", &ns])?;
            seg.hosts = h + 1;
            ip(&[
                "-n", &sw, "link", "add", &v, "type", "veth", "peer", "name", IFACE, "netns", &ns,
            ])?;
            ip(&["-n", &sw, "link", "set", &v, "master", &br, "up"])?;
            ip(&["-n", &ns, "link", "set", "lo", "up"])?;
            let a = format!("{}/24", seg.addr(h));
            ip(&["-n", &ns, "addr", "add", &a, "dev", IFACE])?;
            // A veth takes UDP GSO sends whole and the bridge would forward 44 frames as one
            // (one drop of the loss rule would lose them all); one segment at most makes the
            // kernel cut them into frames at the host's interface, as a NIC does on a wire.
            ip(&["-n", &ns, "link", "set", IFACE, "gso_max_segs", "1"])?;
            ip(&["-n", &ns, "link", "set", IFACE, "up"])?;
            ip(&["-n", &ns, "route", "add", "224.0.0.0/4", "dev", IFACE])?;
        }
        Ok(seg)
    }

    fn bridge(&self) -> String {
        format!("b{}", self.prefix)
    }

    /// Namespace name of the switch (the bridge and every host's port).
    pub fn switch(&self) -> String {
        format!("{}sw", self.prefix)
    }

    /// Name of host `h`'s port on the bridge (in the switch's namespace).
    pub fn port(&self, h: usize) -> String {
        format!("p{}h{h}", self.prefix)
    }

    /// Drop each Ethernet frame the bridge forwards *to* a host other than `except` (the
    /// sender's port: frames to it pass) with probability `p`, independently, as a lossy
    /// switch or NIC would: an nftables rule in the switch's namespace (`bridge` family,
    /// `forward` hook, `numgen random`, resolution 10^-6). `p = 0` removes the rule.
    /// Replaces an earlier rule.
    pub fn frame_loss(&self, p: f64, except: Option<usize>) -> Result<(), NetError> {
        if !(0.0..=1.0).contains(&p) {
            return Err(NetError::setup(format!(
                "frame loss {p} is not a probability in [0, 1]"
            )));
        }
        let _ = self.nft(&["delete", "table", "bridge", "rmcast_loss"]);
        if p == 0.0 {
            return Ok(());
        }
        self.nft(&["add", "table", "bridge", "rmcast_loss"])?;
        // `fwd` is an nft keyword: the chain is called `frames`.
        self.nft(&[
            "add chain bridge rmcast_loss frames { type filter hook forward priority 0; }",
        ])?;
        let n = (p * 1e6).round() as u64;
        let mut rule = vec!["add", "rule", "bridge", "rmcast_loss", "frames"];
        let port = except.map(|h| self.port(h));
        if let Some(port) = &port {
            rule.extend(["oifname", "!=", port.as_str()]);
        }
        let n = n.to_string();
        rule.extend([
            "numgen",
            "random",
            "mod",
            "1000000",
            "<",
            n.as_str(),
            "counter",
            "drop",
        ]);
        self.nft(&rule)
    }

    /// Frames the [`Segment::frame_loss`] rule has dropped so far (0 without a rule).
    pub fn frames_dropped(&self) -> u64 {
        let out = Command::new("ip")
            .args([
                "netns",
                "exec",
                &self.switch(),
                "nft",
                "list",
                "table",
                "bridge",
            ])
            .arg("rmcast_loss")
            .output();
        let Ok(out) = out else { return 0 };
        let text = String::from_utf8_lossy(&out.stdout);
        text.split("packets ")
            .nth(1)
            .and_then(|s| s.split_whitespace().next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0)
    }

    fn nft(&self, args: &[&str]) -> Result<(), NetError> {
        run(
            Command::new("ip")
                .args(["netns", "exec", &self.switch(), "nft"])
                .args(args),
            "nft",
            &format!("`nft {}` in the switch's namespace failed", args.join(" ")),
            "frame loss needs nftables",
        )
    }

    /// Namespace name of host `h`.
    pub fn host(&self, h: usize) -> String {
        format!("{}h{h}", self.prefix)
    }

    /// Number of hosts.
    pub fn hosts(&self) -> usize {
        self.hosts
    }

    /// IPv4 address of host `h`.
    pub fn addr(&self, h: usize) -> Ipv4Addr {
        Ipv4Addr::new(10, 93, self.subnet, (h + 1).min(254) as u8)
    }

    /// Move the calling thread into host `h`'s network namespace (for the rest of its life;
    /// threads it spawns afterwards start there too). Other threads are unaffected.
    pub fn enter(&self, h: usize) -> Result<(), NetError> {
        if h >= self.hosts {
            return Err(NetError::setup(format!(
                "host {h} is not on this segment of {} hosts",
                self.hosts
            )));
        }
        let path = Path::new("/run/netns").join(self.host(h));
        let f = std::fs::File::open(&path)
            .map_err(|e| NetError::io(format!("open {}", path.display()), e))?;
        setns_net(&f).map_err(|e| NetError::io(format!("enter {}", self.host(h)), e))
    }
}

#[cfg(target_os = "linux")]
fn setns_net(f: &std::fs::File) -> std::io::Result<()> {
    // setns(2) with CLONE_NEWNET switches only the calling thread's network namespace.
    nix::sched::setns(f, nix::sched::CloneFlags::CLONE_NEWNET).map_err(std::io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn setns_net(_: &std::fs::File) -> std::io::Result<()> {
    Err(std::io::Error::other("network namespaces are Linux only"))
}

impl Drop for Segment {
    fn drop(&mut self) {
        for h in 0..self.hosts {
            let _ = Command::new("ip")
                .args(["netns", "del", &self.host(h)])
                .stderr(Stdio::null())
                .status();
        }
        // Deleting the switch's namespace deletes the bridge and the hosts' ports.
        let _ = Command::new("ip")
            .args(["netns", "del", &self.switch()])
            .stderr(Stdio::null())
            .status();
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::net::{SocketAddr, UdpSocket};
    use std::time::Duration;

    /// On `host` (the calling thread enters it): a blocking socket joined to `group` on the
    /// bridge's interface, whose reads time out after `timeout`.
    fn joined(seg: &Segment, host: usize, group: SocketAddr, timeout: Duration) -> UdpSocket {
        seg.enter(host).unwrap();
        let mut o = crate::socket::SocketOpts::new(group);
        o.interface = Some(IFACE.into());
        let s = crate::socket::group_socket(&o).unwrap();
        s.set_nonblocking(false).unwrap();
        s.set_read_timeout(Some(timeout)).unwrap();
        s
    }

    /// `data` multicast to `group` from host 0 (on a thread of its own, which enters it)
    /// `times` times, `gap` apart; returns when the last is sent.
    fn multicast_from_host_0(
        seg: &std::sync::Arc<Segment>,
        group: SocketAddr,
        data: Vec<u8>,
        times: usize,
        gap: Duration,
    ) {
        let s0 = seg.clone();
        let addr0 = seg.addr(0);
        std::thread::spawn(move || {
            s0.enter(0).unwrap();
            let s = UdpSocket::bind((addr0, 0)).unwrap();
            s.set_multicast_ttl_v4(1).unwrap();
            for _ in 0..times {
                s.send_to(&data, group).unwrap();
                std::thread::sleep(gap);
            }
        })
        .join()
        .unwrap();
    }

    /// A datagram multicast on host 0 reaches a socket joined on host 2 across the bridge.
    #[test]
    fn multicast_crosses_the_bridge() {
        if let Err(why) = available() {
            eprintln!("skipped: {why}");
            return;
        }
        let seg = std::sync::Arc::new(Segment::create(3).unwrap());
        let group: SocketAddr = "239.255.93.7:47931".parse().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        let s2 = seg.clone();
        let recv = std::thread::spawn(move || {
            let s = joined(&s2, 2, group, Duration::from_secs(5));
            tx.send(()).unwrap();
            let mut buf = [0u8; 64];
            let (n, from) = s.recv_from(&mut buf).unwrap();
            (buf[..n].to_vec(), from)
        });
        rx.recv().unwrap();
        multicast_from_host_0(
            &seg,
            group,
            b"across".to_vec(),
            5,
            Duration::from_millis(50),
        );
        let (got, from) = recv.join().unwrap();
        assert_eq!(got, b"across");
        assert_eq!(from.ip(), std::net::IpAddr::V4(seg.addr(0)));
    }

    /// Frames, not datagrams, are dropped: with 20 % frame loss a 1,000-byte datagram (one
    /// frame) mostly arrives, an 8,000-byte one (six fragments) mostly does not (0.8^6 = 26 %).
    #[test]
    fn frame_loss_drops_fragments_on_the_bridge() {
        if let Err(why) = available() {
            eprintln!("skipped: {why}");
            return;
        }
        if Command::new("nft").arg("--version").output().is_err() {
            eprintln!("skipped: nft (nftables) is not installed");
            return;
        }
        let seg = std::sync::Arc::new(Segment::create(2).unwrap());
        seg.frame_loss(0.2, Some(0)).unwrap();
        let mut got = Vec::new();
        for (size, port) in [(1000usize, 47941u16), (8000, 47942)] {
            let group: SocketAddr = format!("239.255.93.8:{port}").parse().unwrap();
            let (tx, rx) = std::sync::mpsc::channel();
            let s1 = seg.clone();
            let recv = std::thread::spawn(move || {
                let s = joined(&s1, 1, group, Duration::from_millis(700));
                tx.send(()).unwrap();
                let mut buf = vec![0u8; 9000];
                let mut n = 0;
                while let Ok((len, _)) = s.recv_from(&mut buf) {
                    n += usize::from(len == size);
                }
                n
            });
            rx.recv().unwrap();
            multicast_from_host_0(&seg, group, vec![7u8; size], 400, Duration::from_millis(1));
            got.push(recv.join().unwrap());
        }
        let (small, large) = (got[0], got[1]);
        assert!(seg.frames_dropped() > 0);
        assert!(
            (200..=380).contains(&small),
            "1,000-byte datagrams received: {small} of 400"
        );
        assert!(
            large < small / 2,
            "8,000-byte: {large}, 1,000-byte: {small} of 400"
        );
        seg.frame_loss(0.0, None).unwrap();
        assert_eq!(seg.frames_dropped(), 0);
    }

    #[test]
    fn host_out_of_range_is_an_error() {
        let seg = Segment {
            prefix: "none".into(),
            subnet: 0,
            hosts: 0,
        };
        assert!(seg.enter(0).is_err());
        assert!(Segment::create(0).is_err());
    }
}
