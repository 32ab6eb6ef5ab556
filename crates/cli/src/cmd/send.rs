//! `rmcast send`: push files or a stream to every receiver in a multicast group.

use super::send_flags::ProtocolFlags;
use anyhow::Result;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use rmcast_net::loss::{Direction, LossConfig};
use rmcast_net::secure::Keys;
use rmcast_net::sender::{self, Expect, SendConfig, SendObserver, SendReport, Source};
use rmcast_net::socket::SocketOpts;
use rmcast_net::NetError;
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Socket, security and loss-injection options shared by `send` and `recv`.
#[derive(clap::Args, Debug, Clone)]
pub struct NetOpts {
    /// Multicast group and port, e.g. 239.1.2.3:5000 or [ff15::1234]:5000
    #[arg(long, short = 'g', value_name = "ADDR:PORT")]
    pub group: SocketAddr,
    /// Interface to use, by name (eth0) or address (default: the routing table's choice)
    #[arg(long, short = 'i', value_name = "NAME|ADDR")]
    pub interface: Option<String>,
    /// Multicast TTL (IPv4) or hop limit (IPv6); 1 stays on the local network
    #[arg(long, default_value_t = 1)]
    pub ttl: u32,
    /// Do not loop multicast back to listeners on this host
    #[arg(long)]
    pub no_loopback: bool,
    /// Socket receive buffer in bytes (capped by net.core.rmem_max unless run as root); what
    /// arrives while the process is not reading waits there
    #[arg(long, default_value_t = rmcast_net::socket::RECV_BUFFER, value_name = "BYTES")]
    pub rcvbuf: usize,
    /// Socket send buffer in bytes (capped by net.core.wmem_max)
    #[arg(long, default_value_t = rmcast_net::socket::SEND_BUFFER, value_name = "BYTES")]
    pub sndbuf: usize,
    /// Authenticate every packet with a key derived from this file (keyed BLAKE3, replay window)
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<PathBuf>,
    /// Also encrypt packet bodies (ChaCha20-Poly1305); needs --key-file
    #[arg(long, requires = "key_file")]
    pub encrypt: bool,
    /// Inject loss: drop each protocol packet with probability P (0..1)
    #[arg(long, default_value_t = 0.0, value_name = "P")]
    pub drop_rate: f64,
    /// Inject loss: drop every N-th protocol packet
    #[arg(long, value_name = "N")]
    pub drop_one_in: Option<u64>,
    /// Where injected loss applies: on receive (rx) or transmit (tx)
    #[arg(long, default_value = "rx", value_parser = ["rx", "tx"])]
    pub drop_on: String,
    /// Seed of the injected loss
    #[arg(long, default_value_t = 1)]
    pub drop_seed: u64,
    /// This endpoint's node id (default: random)
    #[arg(long)]
    pub node_id: Option<u32>,
    /// Print the summary as JSON
    #[arg(long)]
    pub json: bool,
    /// No progress bars, no text summary (errors still go to stderr)
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

impl NetOpts {
    pub fn socket_opts(&self) -> SocketOpts {
        let mut o = SocketOpts::new(self.group);
        o.interface = self.interface.clone();
        o.ttl = self.ttl;
        o.loopback = !self.no_loopback;
        o.recv_buffer = Some(self.rcvbuf);
        o.send_buffer = Some(self.sndbuf);
        o
    }

    pub fn keys(&self) -> Result<Option<Keys>, NetError> {
        self.key_file
            .as_ref()
            .map(|p| Keys::from_file(p, self.encrypt))
            .transpose()
    }

    pub fn loss(&self) -> Result<LossConfig, NetError> {
        if !(0.0..=1.0).contains(&self.drop_rate) {
            return Err(NetError::setup(format!(
                "--drop-rate {} is not a probability: give a value from 0 to 1",
                self.drop_rate
            )));
        }
        if self.drop_one_in == Some(0) {
            return Err(NetError::setup(
                "--drop-one-in 0 is meaningless: give N ≥ 1",
            ));
        }
        Ok(LossConfig {
            rate: self.drop_rate,
            one_in: self.drop_one_in,
            direction: if self.drop_on == "tx" {
                Direction::Tx
            } else {
                Direction::Rx
            },
            seed: self.drop_seed,
        })
    }
}

/// `--rate`: a fixed pacing rate, or congestion control.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rate {
    /// TFMCC sets the rate (`auto`).
    Auto,
    /// Bits per second (0: unlimited).
    Fixed(u64),
}

/// Parse `--rate`: `auto`, or a rate as [`parse_rate`] reads it.
pub fn parse_send_rate(s: &str) -> Result<Rate, String> {
    if s.trim().eq_ignore_ascii_case("auto") {
        Ok(Rate::Auto)
    } else {
        parse_rate(s)
            .map(Rate::Fixed)
            .map_err(|e| format!("{e}, or auto"))
    }
}

/// Parse a rate in bits per second with an optional k/M/G suffix; 0 means unlimited.
pub fn parse_rate(s: &str) -> Result<u64, String> {
    let t = s.trim().trim_end_matches("bit/s").trim_end_matches("bps");
    let (num, mult) = match t.char_indices().last() {
        Some((i, 'k' | 'K')) => (&t[..i], 1e3),
        Some((i, 'm' | 'M')) => (&t[..i], 1e6),
        Some((i, 'g' | 'G')) => (&t[..i], 1e9),
        _ => (t, 1.0),
    };
    let v: f64 = num
        .parse()
        .map_err(|_| format!("{s:?} is not a rate like 500M, 1G or 0 (unlimited)"))?;
    if !v.is_finite() || v < 0.0 {
        return Err(format!(
            "{s:?} is not a rate like 500M, 1G or 0 (unlimited)"
        ));
    }
    Ok((v * mult) as u64)
}

#[derive(clap::Args, Debug)]
#[command(
    about = "Send files (or standard input) reliably to every receiver in a multicast group",
    after_help = "Examples:\n  \
    # terminal 1 (and on every receiving host):\n  \
    rmcast recv --group 239.1.2.3:5000 --dir ./incoming\n  \
    # terminal 2: wait for 1 receiver, send two files\n  \
    rmcast send --group 239.1.2.3:5000 --receivers 1 report.pdf data.tar\n  \
    # XTP-style (seed 002): selective repeat, 8-packet window of MTU-sized datagrams:\n  \
    rmcast send -g 239.1.2.3:5000 -n 3 --protocol xtp --window 8 big.iso\n  \
    # xtp by unicast to the one receiver (found on the group), and a stream late joiners may\n  \
    # join (from their join point on, no back-fill):\n  \
    rmcast send -g 239.1.2.3:5000 -n 1 --protocol xtp --unicast big.iso\n  \
    tail -f app.log | rmcast send - -g 239.1.2.3:5000 -n 1 --protocol xtp --late-join\n  \
    # polling (PRMP, seed 004): receivers answer only when polled, at most 1500 answers/s:\n  \
    rmcast send -g 239.1.2.3:5000 -n 20 --protocol prmp --response-rate 1500 --epoch-ms 10 big.iso\n  \
    # DSP (seed 001): receivers started with --region R; each region's designated receiver\n  \
    # (lowest node id) repairs its region on group port + 1 + R:\n  \
    rmcast send -g 239.1.2.3:5000 -n 6 --protocol dsp --window 64 big.iso\n  \
    # CSP/CP (seed 001): each region's statuses consolidated by its local exchange, an\n  \
    # `rmcast relay --region R` between the sender and region R's receivers:\n  \
    rmcast send -g 239.1.2.3:5000 -n 6 --protocol cp big.iso\n  \
    # a stream, authenticated and encrypted, on a chosen interface:\n  \
    tar c dir | rmcast send - --name dir.tar -g 239.1.2.3:5000 -i eth0 --receivers 3 \\\n      \
    --key-file ./rmcast.key --encrypt\n  \
    # standard hosts, without rmcast's session layer (no receiver count, no per-receiver\n  \
    # summary): plain PGM to OpenPGM or ZeroMQ epgm:// receivers, plain NORM to NRL's\n  \
    # libnorm (here one that acknowledges as node 4097):\n  \
    rmcast send -g 239.1.2.3:7500 --open --rate 100M big.iso\n  \
    rmcast send -g 239.1.2.3:6003 --open --protocol norm --norm-acking-nodes 4097 big.iso\n\n\
    Pacing: --rate defaults to 1G (1 Gbit/s), right for a gigabit LAN; raise it on faster\n\
    links, use 0 for unlimited (loopback, benchmarks). --rate auto (pgm, norm) adapts to the\n\
    path: receivers report the TCP-friendly rate their loss and round-trip time allow, and\n\
    the sender follows the slowest (pgm: TFMCC; norm: NORM-CC, also with --open towards\n\
    libnorm), sharing a bottleneck with TCP:\n  \
    rmcast send -g 239.1.2.3:5000 -n 10 --rate auto --max-rate 1G big.iso\n\
    The session id is printed at the start; --session ID sets it in advance, for\n\
    `rmcast recv --session ID` (a receiver that joins only this transfer).\n\
    Exit status: 0 every expected receiver completed and verified (without --key-file or\n\
    --receiver-list, a receiver counts only if it showed progress, not a JOIN and a\n\
    \"complete\" alone); 1 the transfer ran but some receiver did not complete or is\n\
    unverified (see the summary); 2 bad usage or setup error; 130\n\
    interrupted (SIGINT/SIGTERM: the receivers are told the session ended; a second signal\n\
    ends the process at once)."
)]
pub struct Args {
    /// Files to send; `-` sends standard input as a stream. Names (the last path component)
    /// are at most 225 bytes of UTF-8: a receiver writes under a temporary name 30 bytes
    /// longer, which must fit in the 255 a file system allows
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub net: NetOpts,
    /// Protocol: pgm (NAK-based, RFC 3208 as hosts run it: receivers that lose nothing send
    /// nothing, repairs by multicast; the fastest with loss), saw (stop-and-wait), bap (block
    /// acknowledgment, window --window; go-back-N: a loss resends the rest of the window
    /// after a timeout, so slow on lossy links), rra (round-robin acknowledgment: each
    /// packet names the one receiver that reports), xtp (transmitter-driven, selective
    /// repeat, window --window packets), prmp (polling: receivers answer only when polled),
    /// srm (requests and repairs multicast by any member after distance-scaled random
    /// waits), ff (full feedback: every receiver acknowledges every packet), dsp (designated
    /// status: one designated receiver per --region reports and repairs its region
    /// locally), csp (consolidated status: each region's local exchange, an `rmcast relay
    /// --region R`, merges its receivers' statuses; the sender repairs) or cp (combined: the
    /// exchange merges optimistically and orders a receiver holding a block to repair its
    /// region)
    #[arg(long, default_value = rmcast_net::agents::DEFAULT_PROTOCOL)]
    pub protocol: String,
    /// The protocols' parameters: one flag per spec row with `.flag("...")`
    /// (`rmcast_proto::spec`), built by [`super::send_flags`].
    #[command(flatten)]
    pub proto: ProtocolFlags,
    /// The session id (8 hex digits; default: a random one, printed at the start). Set it in
    /// advance to start `rmcast recv --session ID` first: such a receiver joins only this
    /// session, so a replay of an earlier session's packets cannot capture it. Give every
    /// transfer a new one
    #[arg(long, value_name = "ID", value_parser = super::recv::parse_session)]
    pub session: Option<u32>,
    /// Start once this many receivers have joined
    #[arg(long, short = 'n', conflicts_with_all = ["receiver_list", "discover"])]
    pub receivers: Option<usize>,
    /// Start once exactly these receivers (node ids, comma-separated) have joined
    #[arg(long, value_delimiter = ',', conflicts_with = "discover")]
    pub receiver_list: Option<Vec<u32>>,
    /// Without --receivers/--receiver-list: take whoever joins within SECS
    #[arg(long, default_value_t = 3.0, value_name = "SECS")]
    pub discover: f64,
    /// Give up if the expected receivers have not joined within SECS
    #[arg(long, default_value_t = 60.0, value_name = "SECS")]
    pub join_wait: f64,
    /// Admit at most N receivers: --discover and --late-join stop admitting there, so JOINs
    /// from a flood of made-up node ids cannot grow the session without bound
    #[arg(long, default_value_t = rmcast_net::sender::MAX_RECEIVERS, value_name = "N")]
    pub max_receivers: usize,
    /// Evict a receiver that has been silent for SECS
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    pub evict_after: f64,
    /// Evict a receiver still at work that delivered less than RATE (bits per second, k/M/G
    /// suffixes) over the last --evict-after period. Off by default: a receiver that is alive
    /// and making progress is served however slow it is, and everyone waits for it
    #[arg(long, value_parser = parse_rate, value_name = "RATE")]
    pub min_rate: Option<u64>,
    /// After the data is out (and acknowledged, for protocols that acknowledge), wait up to
    /// SECS for the receivers' final reports, counted from the last progress any receiver
    /// still at work reported: a receiver that keeps moving is waited for
    #[arg(long, default_value_t = 5.0, value_name = "SECS")]
    pub final_wait: f64,
    /// Send repairs at --rate like new data. By default (pgm, srm, lms; not with --rate auto,
    /// which paces everything by the slowest receiver) repairs to the group leave at a pace
    /// set by the slowest receiver that loses them, so a receiver behind a slow link gets
    /// them at its link's rate instead of in bursts it cannot take
    #[arg(long)]
    pub no_repair_pacing: bool,
    /// Largest datagram on the wire in bytes (rmcast header included). Default: what one frame
    /// of the interface carries, its MTU less the IP and UDP headers (1472 on 1500-byte
    /// Ethernet with IPv4, 1452 with IPv6, more on jumbo-frame Ethernet); links that are not
    /// Ethernet (loopback, tunnels) count as 1500-byte Ethernet. A larger size is refused
    /// without --allow-fragmentation
    #[arg(long, value_name = "BYTES")]
    pub datagram_size: Option<usize>,
    /// Allow a --datagram-size above what one frame carries. The IP layer then splits every
    /// datagram into fragments, and losing any one frame loses the whole datagram: a
    /// 60,000-byte datagram is 41 frames, so 1 % frame loss becomes 34 % datagram loss and
    /// every repair is 41 frames again
    #[arg(long)]
    pub allow_fragmentation: bool,
    /// Pacing rate in bit/s (k/M/G suffixes); default 1G suits a gigabit LAN; 0 = unlimited;
    /// `auto`: congestion control (pgm: TFMCC, RFC 4654; norm: NORM-CC, RFC 5740) follows
    /// the slowest receiver's TCP-friendly rate, up to --max-rate
    #[arg(long, default_value = "1G", value_parser = parse_send_rate)]
    pub rate: Rate,
    /// Hand the protocol one new message per US microseconds, on a fixed schedule from the
    /// first (a late one does not move the ones after it), as a simulated scenario's
    /// `[traffic] interval_ms` does. Repairs and control packets are not charged to it: they
    /// leave at --rate. Default: new data is paced by --rate alone, with everything else
    #[arg(long, value_name = "US")]
    pub data_interval_us: Option<u64>,
    /// With --rate auto: the most congestion control may reach, bit/s (k/M/G; 0 = no cap)
    #[arg(long, default_value = "1G", value_parser = parse_rate)]
    pub max_rate: u64,
    /// Name announced for a stream read from standard input (at most 225 bytes)
    #[arg(long, default_value = "stream")]
    pub name: String,
    /// Open mode (pgm, norm): plain RFC 3208 PGM over UDP as OpenPGM encapsulates it (one
    /// UDP port, the group's, both ways), to any PGM receiver (OpenPGM, ZeroMQ epgm://):
    /// no ANNOUNCE/JOIN/REPORT/END, so no receiver count and no per-receiver completion.
    /// One FILE (or -), one APDU per ODATA, new data at the fixed --rate; NAKs answered
    /// until --final-wait after the last data, then SPMs with OPT_FIN. With --protocol norm:
    /// plain RFC 5740 NORM as NRL's libnorm speaks it, one regular FILE as a FILE object, RS8
    /// parity repairs; it ends on the --norm-acking-nodes' watermark ACKs (or FLUSH rounds)
    #[arg(long)]
    pub open: bool,
    /// With --open: the PGM data-destination port (OpenPGM's default 7500)
    #[arg(long, default_value_t = rmcast_net::open::DEFAULT_DATA_DESTINATION_PORT, requires = "open")]
    pub pgm_dport: u16,
    /// With --open --protocol norm: this sender's NORM node id
    #[arg(long, default_value_t = 1, requires = "open", value_name = "ID")]
    pub norm_node_id: u32,
    /// With --open --protocol norm: the receivers' node ids whose watermark ACK ends the
    /// transfer (libnorm's acking nodes; without: FLUSH rounds, then the end, unacknowledged)
    #[arg(long, value_delimiter = ',', requires = "open", value_name = "ID,...")]
    pub norm_acking_nodes: Vec<u32>,
}

fn secs(v: f64, what: &str) -> Result<Duration, NetError> {
    rmcast_proto::duration_from_secs(v)
        .ok_or_else(|| NetError::setup(format!("{what} {v} must be a non-negative number")))
}

pub fn config(a: &Args) -> Result<(SendConfig, Source), NetError> {
    let mut c = SendConfig::new(a.net.group);
    c.sock = a.net.socket_opts();
    c.protocol = a.protocol.clone();
    c.expect = match (&a.receivers, &a.receiver_list) {
        (Some(0), _) => return Err(NetError::setup("--receivers 0: give at least 1")),
        (Some(n), _) => Expect::Count(*n),
        (None, Some(l)) if !l.is_empty() => Expect::List(l.clone()),
        _ => Expect::Discover(secs(a.discover, "--discover")?),
    };
    c.join_wait = secs(a.join_wait, "--join-wait")?;
    c.max_receivers = a.max_receivers;
    c.evict_after = secs(a.evict_after, "--evict-after")?;
    c.min_rate_bps = a.min_rate.unwrap_or(0);
    c.final_wait = secs(a.final_wait, "--final-wait")?;
    c.repair_pacing = !a.no_repair_pacing;
    let (p, f) = (a.protocol.as_str(), &a.proto);
    c.rto = secs(f.real(p, "rto-ms")? / 1e3, "--rto-ms")?;
    c.ack_delay = secs(f.real(p, "ack-delay-ms")? / 1e3, "--ack-delay-ms")?;
    c.datagram_size = a.datagram_size;
    c.allow_fragmentation = a.allow_fragmentation;
    c.window = if f.given("window") {
        f.int(p, "window")?
    } else {
        rmcast_net::agents::default_window(p)
    };
    if c.window == 0 {
        return Err(NetError::setup("--window 0: give at least 1"));
    }
    c.prmp.epoch = secs(f.real(p, "epoch-ms")? / 1e3, "--epoch-ms")?;
    c.prmp.response_rate = f.int(p, "response-rate")?;
    c.prmp.ipg = f.opt_int(p, "ipg-us")?.map(Duration::from_micros);
    c.prmp.mtr = f.real(p, "mtr")?;
    c.prmp.silent_polls = f.int(p, "silent-polls")?;
    c.pgm_txw = f.int(p, "txw")?;
    c.pgm_fec_k = f.int(p, "fec-k")?;
    c.pgm_fec_proactive = f.int(p, "fec-proactive")?;
    c.pgm_rfc3208 = !f.switch("rmcast-header");
    c.dsp.rtd = secs(f.real(p, "rtd-ms")? / 1e3, "--rtd-ms")?;
    c.dsp.r_f = f.real(p, "rf")?;
    c.dsp.status_interval = secs(f.real(p, "status-ms")? / 1e3, "--status-ms")?;
    c.dsp.local_rtd = secs(f.real(p, "local-rtd-ms")? / 1e3, "--local-rtd-ms")?;
    c.dsp.designated_relays = f.word(p, "designated")? == "relay";
    c.write_size = f
        .opt_int(p, "write-size")?
        .map(|v| usize::try_from(v).unwrap_or(usize::MAX));
    c.xtp_thesis = f.switch("xtp-thesis");
    c.unicast = f.switch("unicast");
    c.late_join = f.switch("late-join");
    (c.rate_bps, c.tfmcc) = match a.rate {
        Rate::Fixed(r) => (r, false),
        Rate::Auto => (a.max_rate, true),
    };
    c.data_interval = a.data_interval_us.map(Duration::from_micros);
    c.keys = a.net.keys()?;
    c.loss = a.net.loss()?;
    c.node_id = a.net.node_id;
    c.session = a.session;
    let stdin = a.files.iter().any(|f| f.as_os_str() == "-");
    let source = if stdin {
        if a.files.len() != 1 {
            return Err(NetError::setup(
                "`-` (standard input) cannot be combined with files: send them separately",
            ));
        }
        Source::Stdin(a.name.clone())
    } else {
        Source::Files(a.files.clone())
    };
    Ok((c, source))
}

struct Bars {
    quiet: bool,
    start: Instant,
    total: Option<u64>,
    multi: Option<MultiProgress>,
    all: Option<ProgressBar>,
    per: HashMap<u32, ProgressBar>,
    members: Vec<u32>,
    pending: Vec<(u32, u64)>,
}

impl Bars {
    fn ensure(&mut self) {
        if self.quiet || self.multi.is_some() || self.start.elapsed() < Duration::from_secs(1) {
            return;
        }
        let multi = MultiProgress::with_draw_target(ProgressDrawTarget::stderr());
        let style = ProgressStyle::with_template(
            "{prefix:>12} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} {msg}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar())
        .progress_chars("=> ");
        let mk = |prefix: String| {
            let b = multi.add(ProgressBar::new(self.total.unwrap_or(0)));
            b.set_style(style.clone());
            b.set_prefix(prefix);
            b
        };
        self.all = Some(mk("all acked".into()));
        for &m in &self.members {
            self.per.insert(m, mk(format!("{m:08x}")));
        }
        for (n, b) in self.pending.drain(..) {
            if let Some(bar) = self.per.get(&n) {
                bar.set_position(b);
            }
        }
        self.multi = Some(multi);
    }
}

impl SendObserver for Bars {
    fn announcing(&mut self, session: u32, group: SocketAddr) {
        if !self.quiet {
            eprintln!(
                "session {session:08x} on {group}: waiting for receivers (`rmcast recv \
                 --session {session:08x}` joins only this session)"
            );
        }
    }
    fn joined(&mut self, node: u32, addr: SocketAddr) {
        if !self.quiet {
            eprintln!("receiver {node:08x} joined from {addr}");
        }
    }
    fn started(&mut self, members: &[u32], total: Option<u64>) {
        self.members = members.to_vec();
        self.total = total;
        self.start = Instant::now();
        if !self.quiet {
            eprintln!("sending to {} receivers", members.len());
        }
    }
    fn progress(&mut self, node: u32, bytes: u64) {
        self.ensure();
        match self.per.get(&node) {
            Some(b) => b.set_position(bytes),
            // Before the bars exist; a late joiner (--late-join) has no bar of its own.
            None if self.multi.is_none() => self.pending.push((node, bytes)),
            None => {}
        }
    }
    fn acked(&mut self, bytes: u64) {
        self.ensure();
        if let Some(b) = &self.all {
            if self.total.is_none() {
                b.set_length(bytes);
            }
            b.set_position(bytes);
        }
    }
    fn evicted(&mut self, node: u32, why: &str) {
        if let Some(b) = self.per.get(&node) {
            b.abandon_with_message(format!("evicted: {why}"));
        } else if !self.quiet {
            eprintln!("receiver {node:08x} evicted: {why}");
        }
    }
    fn finished(&mut self) {
        for b in self.per.values().chain(self.all.iter()) {
            if !b.is_finished() {
                b.finish();
            }
        }
    }
}

fn print_summary(r: &SendReport) {
    println!(
        "session {:08x}: {} bytes in {:.2}s ({:.1} Mbit/s), {} data + {} retransmitted datagrams",
        r.session, r.bytes, r.seconds, r.goodput_mbit_s, r.agent.data_sent, r.agent.repairs_sent
    );
    println!(
        "{:>8}  {:<22} {:<11} {:<13} {:>12} {:>8} {:>9} {:>8} {:>8}  reason",
        "receiver",
        "address",
        "outcome",
        "admitted",
        "bytes",
        "done (s)",
        "Mbit/s",
        "repairs",
        "rejected"
    );
    for s in &r.receivers {
        let admitted = match (s.admitted, s.traffic) {
            ("join", true) => "join+traffic",
            (a, _) => a,
        };
        let or_dash = |v: Option<f64>, prec: usize| match v {
            Some(v) => format!("{v:.prec$}"),
            None => "-".to_string(),
        };
        println!(
            "{:08x}  {:<22} {:<11} {:<13} {:>12} {:>8} {:>9} {:>8} {:>8}  {}",
            s.node,
            s.addr,
            s.outcome,
            admitted,
            s.bytes,
            or_dash(s.seconds, 2),
            or_dash(s.mbit_s, 1),
            s.repairs_received,
            s.rejected,
            s.reason.as_deref().unwrap_or("")
        );
    }
    let ok = r
        .receivers
        .iter()
        .filter(|s| s.outcome == "completed")
        .count();
    println!("{ok} of {} receivers completed", r.receivers.len());
    let unverified = r
        .receivers
        .iter()
        .filter(|s| s.outcome == "unverified")
        .count();
    if unverified > 0 {
        println!(
            "{unverified} receiver(s) unverified: admitted by an unauthenticated JOIN, they \
             reported completion without showing any progress first; not counted (use \
             --key-file or --receiver-list to count such receivers)"
        );
    }
    for c in &r.role_changes {
        println!("re-election: {c}");
    }
    if r.interrupted {
        println!("interrupted by a signal: the session was ended early");
    }
}

/// The exit status after SIGINT/SIGTERM (128 + SIGINT, as a shell reports it).
pub const INTERRUPTED: u8 = rmcast_net::sender::EXIT_INTERRUPTED;

/// Map a driver error to the one-line message and exit status.
pub fn fail(e: NetError) -> ExitCode {
    eprintln!("error: {e}");
    match e {
        NetError::Setup(_) => ExitCode::from(2),
        NetError::Failed(_) | NetError::Io { .. } => ExitCode::from(1),
        NetError::Interrupted(_) => ExitCode::from(INTERRUPTED),
    }
}

pub fn run(a: Args) -> Result<ExitCode> {
    if let Err(e) = a.proto.check(&a.protocol) {
        return Ok(fail(e));
    }
    if a.open {
        return super::open::run_send(&a);
    }
    let (cfg, source) = match config(&a) {
        Ok(x) => x,
        Err(e) => return Ok(fail(e)),
    };
    let mut bars = Bars {
        quiet: a.net.quiet,
        start: Instant::now(),
        total: None,
        multi: None,
        all: None,
        per: HashMap::new(),
        members: Vec::new(),
        pending: Vec::new(),
    };
    let report = match sender::send(cfg, source, &mut bars) {
        Ok(r) => r,
        Err(e) => return Ok(fail(e)),
    };
    drop(bars);
    if a.net.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else if !a.net.quiet {
        print_summary(&report);
    }
    Ok(ExitCode::from(report.exit_code()))
}

#[cfg(test)]
mod tests {
    use super::parse_rate;

    #[test]
    fn rates() {
        use super::{parse_send_rate, Rate};
        assert_eq!(parse_send_rate("auto"), Ok(Rate::Auto));
        assert_eq!(parse_send_rate(" AUTO "), Ok(Rate::Auto));
        assert_eq!(parse_send_rate("100M"), Ok(Rate::Fixed(100_000_000)));
        assert!(parse_send_rate("automatic")
            .unwrap_err()
            .contains("or auto"));
        assert_eq!(parse_rate("1G"), Ok(1_000_000_000));
        assert_eq!(parse_rate("500M"), Ok(500_000_000));
        assert_eq!(parse_rate("64k"), Ok(64_000));
        assert_eq!(parse_rate("0"), Ok(0));
        assert!(parse_rate("fast").is_err());
        assert!(parse_rate("-1M").is_err());
    }
}
