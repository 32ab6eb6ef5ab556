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

use rmcast_net::NetError;
use std::collections::BTreeMap;
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
    /// The host behind a queue bottleneck ([`Segment::queue_bottleneck`]), if any.
    queued: std::sync::Mutex<Option<usize>>,
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
    /// Build the bridge and `hosts` namespaces (at most 250; none: a bridge for
    /// [`Router`]s only).
    pub fn create(hosts: usize) -> Result<Segment, NetError> {
        if hosts > 250 {
            return Err(NetError::setup(format!(
                "a segment holds 0 to 250 hosts, not {hosts}"
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
            queued: std::sync::Mutex::new(None),
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
        // `numgen random mod 10^6` yields 0..=999,999, and nft refuses a bound of 10^6: a
        // probability that rounds to 1 drops every frame with no `numgen` at all.
        let all = n >= 1_000_000;
        let n = n.to_string();
        if !all {
            rule.extend(["numgen", "random", "mod", "1000000", "<", n.as_str()]);
        }
        rule.extend(["counter", "drop"]);
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

    /// Take host `host`'s link down (`down`) or up again: while down, the bridge drops every
    /// frame it forwards *to* that host (an nftables rule in the switch's namespace, `bridge`
    /// family, `forward` hook, before [`Segment::frame_loss`]'s rule), as an unplugged cable
    /// or a switch port flapping would; what the host sends still passes.
    pub fn link_down(&self, host: usize, down: bool) -> Result<(), NetError> {
        let _ = self.nft(&["delete", "table", "bridge", "rmcast_down"]);
        if !down {
            return Ok(());
        }
        self.nft(&["add", "table", "bridge", "rmcast_down"])?;
        self.nft(&[
            "add chain bridge rmcast_down frames { type filter hook forward priority -10; }",
        ])?;
        let port = self.port(host);
        self.nft(&[
            "add",
            "rule",
            "bridge",
            "rmcast_down",
            "frames",
            "oifname",
            &port,
            "drop",
        ])
    }

    /// Make the bridge port of host `host` a bottleneck of `bits_per_s`: a policer in the
    /// switch's namespace (`bridge` family, `forward` hook, priority 10, after
    /// [`Segment::frame_loss`]'s rule) drops every frame forwarded *to* that host beyond the
    /// rate, allowing bursts of `burst` at the rate. Each of `flows` — a name (letters,
    /// digits, `_`) and an nftables match expression, e.g. `("tcp", "ip protocol tcp")` —
    /// gets two named counters, `<name>_offered` before the policer and `<name>_passed` after
    /// it; `dropped` counts the frames the policer dropped and `all_passed` every frame that
    /// passed. [`Segment::bottleneck_counts`] reads them. Replaces an earlier bottleneck.
    ///
    /// The policer counts *frames*: `limit rate over N/second burst K packets`, N = the rate
    /// over [`FRAME_BYTES`]-byte IP packets (a full frame on the segment's 1,500-byte MTU).
    /// nftables' byte-counting limit (`bytes/second`) is not used: its token bucket holds
    /// one second of the rate on top of the burst (the kernel's `tokens_max = unit × (rate +
    /// burst) / rate`), so a flow that paused for a second then passes a second's worth of
    /// bytes at once, which a bottleneck must not. A flow of smaller datagrams gets fewer
    /// bytes through than the rate.
    pub fn bottleneck(
        &self,
        host: usize,
        bits_per_s: u64,
        burst: std::time::Duration,
        flows: &[(&str, &str)],
    ) -> Result<Policer, NetError> {
        self.bottleneck_rules(host, bits_per_s, burst, flows, true)
    }

    /// The bridge's rules of a bottleneck at host `host`'s port: counters of what is offered,
    /// and with `police` the policer and the counters behind it.
    fn bottleneck_rules(
        &self,
        host: usize,
        bits_per_s: u64,
        burst: std::time::Duration,
        flows: &[(&str, &str)],
        police: bool,
    ) -> Result<Policer, NetError> {
        if host >= self.hosts {
            return Err(NetError::setup(format!(
                "host {host} is not on this segment of {} hosts",
                self.hosts
            )));
        }
        let policer = Policer::new(bits_per_s, burst)?;
        for (name, _) in flows {
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(NetError::setup(format!(
                    "bottleneck flow name {name:?}: use letters, digits and _"
                )));
            }
        }
        let _ = self.nft(&["delete", "table", "bridge", BOTTLENECK_TABLE]);
        let queued = self.queued.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(h) = queued {
            let _ = Command::new("ip")
                .args(["netns", "exec", &self.switch(), "tc", "qdisc", "del", "dev"])
                .args([self.port(h).as_str(), "root"])
                .stderr(Stdio::null())
                .status();
        }
        self.nft(&["add", "table", "bridge", BOTTLENECK_TABLE])?;
        self.nft(&[&format!(
            "add chain bridge {BOTTLENECK_TABLE} shaper {{ type filter hook forward priority 10; }}"
        )])?;
        let mut counters = Vec::new();
        for (name, _) in flows {
            counters.push(format!("{name}_offered"));
            if police {
                counters.push(format!("{name}_passed"));
            }
        }
        if police {
            counters.extend(["dropped".to_string(), "all_passed".to_string()]);
        }
        for c in &counters {
            self.nft(&["add", "counter", "bridge", BOTTLENECK_TABLE, c])?;
        }
        let port = self.port(host);
        let rule = |body: String| {
            self.nft(&[&format!(
                "add rule bridge {BOTTLENECK_TABLE} shaper oifname \"{port}\" {body}"
            )])
        };
        for (name, m) in flows {
            rule(format!("{m} counter name \"{name}_offered\""))?;
        }
        if !police {
            return Ok(policer);
        }
        rule(format!(
            "limit rate over {}/second burst {} packets counter name \"dropped\" drop",
            policer.frames_per_s, policer.burst_frames
        ))?;
        for (name, m) in flows {
            rule(format!("{m} counter name \"{name}_passed\""))?;
        }
        rule("counter name \"all_passed\"".into())?;
        Ok(policer)
    }

    /// What the queue of the [`Segment::queue_bottleneck`] in place counted so far (None
    /// without one, or if `tc` cannot say).
    pub fn queue_stats(&self) -> Option<QueueStats> {
        let host = (*self.queued.lock().unwrap_or_else(|e| e.into_inner()))?;
        parse_tc_stats(&self.qdisc_stats(host).ok()?)
    }

    /// What `tc -s qdisc show` says of host `host`'s bridge port, in the switch's namespace.
    fn qdisc_stats(&self, host: usize) -> Result<String, NetError> {
        let out = Command::new("ip")
            .args(["netns", "exec", &self.switch(), "tc", "-s", "qdisc", "show"])
            .args(["dev", self.port(host).as_str()])
            .stderr(Stdio::null())
            .output()
            .map_err(|e| NetError::io("run `tc -s qdisc show`", e))?;
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Make the bridge port of host `host` a link of `bits_per_s` with a drop-tail queue of
    /// `queue` at that rate in front of it, as a switch's output port is: a token-bucket
    /// qdisc (`tc ... tbf`, bucket 1 ms of the rate and at least two full frames) on the port
    /// in the switch's namespace. Frames wait in the queue, and only those arriving when it
    /// is full are dropped, so a flow's round trip grows with the queue as behind any
    /// bottleneck. The counters are [`Segment::bottleneck`]'s: `<name>_offered` on the bridge
    /// before the queue, `<name>_passed` and `all_passed` at the host's interface (netdev
    /// ingress, in its namespace), `dropped` the qdisc's drops. Replaces an earlier bottleneck.
    pub fn queue_bottleneck(
        &self,
        host: usize,
        bits_per_s: u64,
        queue: std::time::Duration,
        flows: &[(&str, &str)],
    ) -> Result<Policer, NetError> {
        let mut shape =
            self.bottleneck_rules(host, bits_per_s, std::time::Duration::ZERO, flows, false)?;
        let bytes_per_s = bits_per_s / 8;
        let limit = ((bytes_per_s as f64 * queue.as_secs_f64()) as u64).max(2 * FRAME_BYTES);
        let bucket = (bytes_per_s / 1_000).max(2 * (FRAME_BYTES + 14));
        let port = self.port(host);
        let (rate, bucket_s, limit_s) = (
            format!("{bits_per_s}bit"),
            bucket.to_string(),
            limit.to_string(),
        );
        run(
            Command::new("ip")
                .args(["netns", "exec", &self.switch(), "tc", "qdisc", "replace"])
                .args([
                    "dev", &port, "root", "tbf", "rate", &rate, "burst", &bucket_s, "limit",
                    &limit_s,
                ]),
            "tc",
            &format!("`tc qdisc replace dev {port} root tbf` in the switch's namespace failed"),
            "a queue bottleneck needs tc (iproute2) and the tbf qdisc",
        )?;
        let ns = self.host(host);
        let nft = |args: &[&str]| {
            run(
                Command::new("ip")
                    .args(["netns", "exec", &ns, "nft"])
                    .args(args),
                "nft",
                &format!("`nft {}` in host {host}'s namespace failed", args.join(" ")),
                "a bottleneck needs nftables",
            )
        };
        let _ = Command::new("ip")
            .args([
                "netns",
                "exec",
                &ns,
                "nft",
                "delete",
                "table",
                "netdev",
                BOTTLENECK_TABLE,
            ])
            .stderr(Stdio::null())
            .status();
        nft(&["add", "table", "netdev", BOTTLENECK_TABLE])?;
        nft(&[&format!(
            "add chain netdev {BOTTLENECK_TABLE} arrived {{ type filter hook ingress device {IFACE} priority 0; }}"
        )])?;
        let mut passed = vec!["all_passed".to_string()];
        passed.extend(flows.iter().map(|(name, _)| format!("{name}_passed")));
        for c in &passed {
            nft(&["add", "counter", "netdev", BOTTLENECK_TABLE, c])?;
        }
        for (name, m) in flows {
            nft(&[&format!(
                "add rule netdev {BOTTLENECK_TABLE} arrived {m} counter name \"{name}_passed\""
            )])?;
        }
        nft(&[&format!(
            "add rule netdev {BOTTLENECK_TABLE} arrived counter name \"all_passed\""
        )])?;
        shape.queue_bytes = Some(limit);
        *self.queued.lock().unwrap_or_else(|e| e.into_inner()) = Some(host);
        Ok(shape)
    }

    /// The named counters of [`Segment::bottleneck`] or [`Segment::queue_bottleneck`], by
    /// name (empty without a bottleneck).
    pub fn bottleneck_counts(&self) -> Result<BTreeMap<String, Count>, NetError> {
        let list = |ns: &str, family: &str| -> Result<BTreeMap<String, Count>, NetError> {
            let out = Command::new("ip")
                .args(["netns", "exec", ns, "nft", "list", "counters"])
                .args(["table", family, BOTTLENECK_TABLE])
                .stderr(Stdio::null())
                .output()
                .map_err(|e| NetError::io("run `nft list counters`", e))?;
            if !out.status.success() {
                return Ok(BTreeMap::new());
            }
            parse_nft_counters(&String::from_utf8_lossy(&out.stdout))
        };
        let mut counts = list(&self.switch(), "bridge")?;
        let queued = *self.queued.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(h) = queued {
            counts.extend(list(&self.host(h), "netdev")?);
            let dropped = parse_tc_dropped(&self.qdisc_stats(h)?);
            counts.insert(
                "dropped".into(),
                Count {
                    packets: dropped,
                    bytes: 0,
                },
            );
        }
        Ok(counts)
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

static ROUTERS: AtomicU32 = AtomicU32::new(0);

/// A namespace attached to several [`Segment`]s, as a router between them (where `rmcast
/// relay` runs): on the `k`-th segment given, interface `eth<k>` at `10.93.<subnet>.<octet>`.
/// Deleted when dropped.
#[derive(Debug)]
pub struct Router {
    name: String,
    /// Its port on each segment: (the segment's switch namespace, the port's name there).
    ports: Vec<(String, String)>,
}

impl Router {
    /// A router on `segments` at host octet `octet` (keep it clear of the segments' hosts,
    /// which count up from 1).
    pub fn create(segments: &[&Segment], octet: u8) -> Result<Router, NetError> {
        available().map_err(NetError::setup)?;
        let n = ROUTERS.fetch_add(1, Ordering::Relaxed);
        let mut r = Router {
            name: format!("x{}r{}", std::process::id() % 100_000, n % 100),
            ports: Vec::new(),
        };
        ip(&["netns", "add", &r.name])?;
        ip(&["-n", &r.name, "link", "set", "lo", "up"])?;
        for (k, seg) in segments.iter().enumerate() {
            let (sw, port, eth) = (
                seg.switch(),
                format!("r{}e{k}", n % 1000),
                format!("eth{k}"),
            );
            ip(&[
                "-n", &sw, "link", "add", &port, "type", "veth", "peer", "name", &eth, "netns",
                &r.name,
            ])?;
            ip(&[
                "-n",
                &sw,
                "link",
                "set",
                &port,
                "master",
                &seg.bridge(),
                "up",
            ])?;
            let a = format!("{}/24", Ipv4Addr::new(10, 93, seg.subnet, octet));
            ip(&["-n", &r.name, "addr", "add", &a, "dev", &eth])?;
            ip(&["-n", &r.name, "link", "set", &eth, "gso_max_segs", "1"])?;
            ip(&["-n", &r.name, "link", "set", &eth, "up"])?;
            r.ports.push((sw, port));
        }
        Ok(r)
    }

    /// Its namespace's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The name of its port on `seg` (in the segment's switch namespace), if it has one.
    pub fn port_on(&self, seg: &Segment) -> Option<&str> {
        let sw = seg.switch();
        self.ports
            .iter()
            .find(|(s, _)| *s == sw)
            .map(|(_, p)| p.as_str())
    }
}

impl Drop for Router {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .stderr(Stdio::null())
            .status();
    }
}

/// The nftables table (bridge family, switch namespace) of [`Segment::bottleneck`].
pub const BOTTLENECK_TABLE: &str = "rmcast_cc";

/// IP bytes of a full frame on a segment's 1,500-byte MTU: what [`Segment::bottleneck`]'s
/// policer takes each frame to be.
pub const FRAME_BYTES: u64 = 1500;

/// A bottleneck's policer: the rate it was asked for, in frames per second and the burst it
/// lets through at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policer {
    /// The rate asked for, bits per second of IP packets.
    pub bits_per_s: u64,
    /// Frames per second the rule passes: the rate over [`FRAME_BYTES`]-byte packets.
    pub frames_per_s: u64,
    /// Frames it passes at once after an idle spell (at least 2).
    pub burst_frames: u64,
    /// `Some`: not a policer but a queue of this many bytes in front of a link of the rate
    /// ([`Segment::queue_bottleneck`]).
    pub queue_bytes: Option<u64>,
}

impl Policer {
    /// The policer for `bits_per_s` with a burst of `burst` at that rate.
    pub fn new(bits_per_s: u64, burst: std::time::Duration) -> Result<Policer, NetError> {
        let frames_per_s = bits_per_s / (8 * FRAME_BYTES);
        if frames_per_s == 0 {
            return Err(NetError::setup(format!(
                "a bottleneck of {bits_per_s} bit/s passes less than one {FRAME_BYTES}-byte frame a second"
            )));
        }
        let burst_frames = ((frames_per_s as f64 * burst.as_secs_f64()).round() as u64).max(2);
        Ok(Policer {
            bits_per_s,
            frames_per_s,
            burst_frames,
            queue_bytes: None,
        })
    }
}

/// What a [`Segment::queue_bottleneck`]'s qdisc counted since it was made.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Frames it sent on to the host.
    pub sent_frames: u64,
    /// Bytes of those frames.
    pub sent_bytes: u64,
    /// Frames it dropped (its queue was full).
    pub dropped: u64,
}

impl QueueStats {
    /// What was counted between `earlier` and `self`.
    pub fn since(&self, earlier: &QueueStats) -> QueueStats {
        QueueStats {
            sent_frames: self.sent_frames.saturating_sub(earlier.sent_frames),
            sent_bytes: self.sent_bytes.saturating_sub(earlier.sent_bytes),
            dropped: self.dropped.saturating_sub(earlier.dropped),
        }
    }
}

/// The counts `tc -s qdisc show` reports for the (first) qdisc: `Sent B bytes P pkt
/// (dropped D, ...` (None when there is no such line).
pub fn parse_tc_stats(text: &str) -> Option<QueueStats> {
    let rest = text.split("Sent ").nth(1)?;
    let mut words = rest.split_whitespace();
    let sent_bytes = words.next()?.parse().ok()?;
    (words.next()? == "bytes").then_some(())?;
    let sent_frames = words.next()?.parse().ok()?;
    Some(QueueStats {
        sent_frames,
        sent_bytes,
        dropped: parse_tc_dropped(text),
    })
}

/// The drops `tc -s qdisc show` reports for the (first) qdisc: `dropped N` (0 if absent).
pub fn parse_tc_dropped(text: &str) -> u64 {
    text.split("dropped ")
        .nth(1)
        .and_then(|s| s.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// What an nftables counter counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Count {
    /// Frames.
    pub packets: u64,
    /// Bytes (of IP packets: the bridge family counts from the network header).
    pub bytes: u64,
}

/// The named counters in the output of `nft list counters ...` (`counter NAME {` followed
/// by `packets N bytes M`), by name.
pub fn parse_nft_counters(text: &str) -> Result<BTreeMap<String, Count>, NetError> {
    let mut out = BTreeMap::new();
    let mut lines = text.lines().map(str::trim);
    while let Some(line) = lines.next() {
        let Some(name) = line
            .strip_prefix("counter ")
            .and_then(|r| r.strip_suffix('{'))
            .map(str::trim)
        else {
            continue;
        };
        let bad = || {
            NetError::setup(format!(
                "`nft list counters`: counter {name}: no `packets N bytes M`"
            ))
        };
        let w: Vec<&str> = lines.next().ok_or_else(bad)?.split_whitespace().collect();
        let (packets, bytes) = match w.as_slice() {
            ["packets", p, "bytes", b] => {
                (p.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?)
            }
            _ => return Err(bad()),
        };
        out.insert(name.trim_matches('"').to_string(), Count { packets, bytes });
    }
    Ok(out)
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
mod tests;
