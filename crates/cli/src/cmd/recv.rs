//! `rmcast recv`: join a group and receive what `rmcast send` sends.

use super::send::{fail, NetOpts};
use anyhow::Result;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rmcast_net::receiver::{self, Output, RecvConfig, RecvObserver, RecvReport};
use rmcast_net::NetError;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
#[command(
    about = "Receive files or a stream from `rmcast send` on a multicast group",
    after_help = "Examples:\n  \
    rmcast recv --group 239.1.2.3:5000 --dir ./incoming\n  \
    rmcast recv -g 239.1.2.3:5000 --stdout | tar x\n  \
    rmcast recv -g 232.1.1.1:5000 --source 10.0.0.5 --dir out   # source-specific join\n  \
    rmcast recv -g 239.1.2.3:5000 --session 1a2b3c4d --dir out  # only this session\n  \
    rmcast recv -g [ff15::1234]:5000 -i eth0 --dir out --key-file rmcast.key --encrypt\n  \
    rmcast recv -g 239.1.2.3:5000 --dir out --region 2   # dsp, csp, cp, prmp: region 2\n  \
    rmcast recv -g 239.1.2.3:5000 --dir /srv/incoming --keep --json   # stay, as uftpd does\n  \
    rmcast recv -g 239.1.2.3:7500 --open --dir out   # plain PGM: OpenPGM, ZeroMQ epgm://\n  \
    rmcast recv -g 239.1.2.3:6003 --open --protocol norm --norm-node-id 4097 --dir out   # libnorm\n\n\
    A receiver started after the sender began asks to join and ends not-admitted when that\n\
    sender refuses it, except for an xtp stream sent with `rmcast send - --late-join`: it\n\
    receives from its join point on, without back-fill, keeps that as NAME.partial and ends\n\
    with outcome `partial` (exit status 0). A session that does not admit it within 3 s (a\n\
    dead sender, a replay of an old session) is given up: it listens for the next one.\n\
    Files are written to a temporary name inside --dir and renamed only when their BLAKE3\n\
    digest matches the sender's; names that would land outside --dir are refused; existing\n\
    files are kept unless --force.\n\
    Restart mode: a file not finished (the session ended, the receiver was killed or\n\
    interrupted) stays hidden as .NAME.rmcast-<digest>.part beside a .meta sidecar (size,\n\
    BLAKE3, name); a later session of the same file (same name, size and digest) is told\n\
    what this receiver holds and sends it only from where every receiver's copy ends. A\n\
    digest mismatch removes the copy; a sidecar that does not parse is ignored with a\n\
    warning. A pgm receiver restarted mid-session with the same --node-id rejoins it.\n\
    Exit status: 0 everything received and verified; 1 the session ran but this receiver did\n\
    not complete (evicted, digest mismatch, sender vanished); 2 bad usage or setup error; 130\n\
    interrupted (SIGINT/SIGTERM: an unfinished file is kept for restart mode, a stream's is\n\
    removed; a second signal ends the process at once)."
)]
pub struct Args {
    #[command(flatten)]
    pub net: NetOpts,
    /// Directory to write received files into (created if missing)
    #[arg(
        long,
        short = 'd',
        value_name = "OUT",
        required_unless_present = "stdout"
    )]
    pub dir: Option<PathBuf>,
    /// Write the received data to standard output instead (summary goes to stderr)
    #[arg(long, conflicts_with = "dir")]
    pub stdout: bool,
    /// Overwrite existing files in OUT
    #[arg(long)]
    pub force: bool,
    /// Source-specific join: accept the group's traffic only from this sender address (the
    /// kernel filters with SSM where it can, and the receiver drops every other address's
    /// packets itself)
    #[arg(long, value_name = "ADDR")]
    pub source: Option<IpAddr>,
    /// Join only the session with this id (8 hex digits, as `rmcast send` prints it at the
    /// start, or as given to `rmcast send --session ID`): ANNOUNCEs of other sessions on the
    /// group are ignored, so a replay of an earlier session cannot capture this receiver
    #[arg(long, value_name = "ID", value_parser = parse_session)]
    pub session: Option<u32>,
    /// Give up if no session is announced within SECS (default: wait forever)
    #[arg(long, value_name = "SECS")]
    pub wait: Option<f64>,
    /// Stay: receive session after session into --dir, a summary (with --json, one JSON
    /// line) after each, until SIGINT/SIGTERM (exit status 130) or a setup error. Files keep
    /// the single-session rules (existing names kept unless --force). --wait then bounds the
    /// wait for each session's announcement
    #[arg(long, conflicts_with_all = ["stdout", "session"])]
    pub keep: bool,
    /// Give up if the sender is silent for SECS during a session
    #[arg(long, default_value_t = 15.0, value_name = "SECS")]
    pub sender_timeout: f64,
    /// dsp, csp, cp, prmp: this receiver's local region (dsp, csp, cp: default 0). dsp: in each
    /// region the sender designates the receiver with the lowest node id; it re-multicasts what the
    /// region's members lack on the region's local group: the --group address, port + 1 + REGION.
    /// csp, cp: the receiver reports to the region's local exchange, an
    /// `rmcast relay --region REGION` between it and the sender (cp: repairs on the same local
    /// group). prmp: the receiver is a child of region REGION's relay, an
    /// `rmcast relay --region REGION` between it and the sender, which polls and repairs it
    /// (without --region the sender polls it)
    #[arg(long, value_name = "REGION")]
    pub region: Option<u16>,
    /// Open mode: receive plain RFC 3208 PGM from any PGM source (OpenPGM, ZeroMQ epgm://)
    /// on the group's port, without rmcast's session layer. The first SPM or ODATA names
    /// the session (TSI); its data, in order and byte-exact, goes to OUT/pgm-<TSI> or
    /// --stdout. It ends when an SPM with OPT_FIN came and everything before it is
    /// delivered, or after --sender-timeout of silence (a PGM stream marks no file end)
    #[arg(long, requires = "protocol", conflicts_with_all = ["keep", "session", "region", "source"])]
    pub open: bool,
    /// With --open: the protocol spoken (pgm, or norm: RFC 5740 as NRL's libnorm speaks it;
    /// one object received from the first NORM sender heard, written to
    /// OUT/norm-<SENDER>-<INSTANCE>; the end is the sender's silence for --sender-timeout)
    #[arg(long, requires = "open")]
    pub protocol: Option<String>,
    /// With --open --protocol norm: this receiver's NORM node id (give one of the acking nodes
    /// the sender waits for, e.g. normfile's RECEIVER_IDS; default: a random one)
    #[arg(long, requires = "open", value_name = "ID")]
    pub norm_node_id: Option<u32>,
    /// With --open: the PGM data-destination port to listen for (OpenPGM's default 7500)
    #[arg(long, default_value_t = rmcast_net::open::DEFAULT_DATA_DESTINATION_PORT, requires = "open")]
    pub pgm_dport: u16,
}

/// A session id as `rmcast send` prints it: hexadecimal, `0x` optional, not 0.
pub fn parse_session(s: &str) -> Result<u32, String> {
    let hex = s.strip_prefix("0x").unwrap_or(s);
    match u32::from_str_radix(hex, 16) {
        Ok(0) | Err(_) => Err(format!(
            "{s:?} is no session id: give the 8 hex digits `rmcast send` prints (`session 1a2b3c4d`)"
        )),
        Ok(v) => Ok(v),
    }
}

struct Bar {
    quiet: bool,
    start: Instant,
    bar: Option<ProgressBar>,
    size: Option<u64>,
    name: String,
    pos: u64,
}

impl Bar {
    /// Ready for the next session (`--keep`).
    fn reset(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        self.start = Instant::now();
        self.size = None;
        self.name.clear();
        self.pos = 0;
    }

    fn ensure(&mut self) {
        if self.quiet || self.bar.is_some() || self.start.elapsed() < Duration::from_secs(1) {
            return;
        }
        let b = ProgressBar::with_draw_target(self.size, ProgressDrawTarget::stderr());
        b.set_style(
            ProgressStyle::with_template(
                "{prefix:>16} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
        );
        b.set_prefix(self.name.clone());
        b.set_position(self.pos);
        self.bar = Some(b);
    }
}

impl RecvObserver for Bar {
    fn session(&mut self, session: u32, sender: SocketAddr) {
        if !self.quiet {
            eprintln!("joined session {session:08x} from {sender}");
        }
    }
    fn file(&mut self, name: &str, size: Option<u64>) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        self.name = name.to_string();
        self.size = size;
        self.pos = 0;
        self.start = Instant::now();
    }
    fn progress(&mut self, bytes: u64) {
        self.pos = bytes;
        self.ensure();
        if let Some(b) = &self.bar {
            b.set_position(bytes);
        }
    }
    fn file_done(&mut self, name: &str, ok: bool, why: Option<&str>) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
        if !self.quiet {
            match why {
                Some(w) if ok => eprintln!("{name}: {w}"),
                _ if ok => eprintln!("{name}: verified"),
                Some(w) => eprintln!("{name}: FAILED: {w}"),
                None => eprintln!("{name}: FAILED"),
            }
        }
    }
}

fn print_summary(r: &RecvReport, to_stderr: bool) {
    let mut lines = vec![format!(
        "node {:08x}: {} ({} bytes in {:.2}s, {:.1} Mbit/s, {} retransmissions received, {} rejected packets){}",
        r.node,
        r.outcome,
        r.bytes,
        r.seconds,
        r.goodput_mbit_s,
        r.repairs_received,
        r.driver.rejected(),
        r.reason.as_deref().map(|w| format!(": {w}")).unwrap_or_default()
    )];
    if let (Some(region), Some(role)) = (r.region, r.role) {
        lines.push(format!(
            "  {role} of region {region} (local group {}); {} local repairs received, {} re-multicast locally",
            r.local_group.as_deref().unwrap_or("?"),
            r.local_repairs_received,
            r.local_repairs_sent
        ));
    }
    for f in &r.files {
        lines.push(format!(
            "  {} {} ({} bytes){}",
            match (f.ok, f.partial) {
                (true, false) => "ok     ",
                (true, true) => "partial",
                _ => "FAILED ",
            },
            f.path.as_deref().unwrap_or(&f.name),
            f.bytes,
            f.reason
                .as_deref()
                .map(|w| format!(": {w}"))
                .unwrap_or_default()
        ));
    }
    for l in lines {
        if to_stderr {
            eprintln!("{l}");
        } else {
            println!("{l}");
        }
    }
}

pub fn run(a: Args) -> Result<ExitCode> {
    if a.open {
        return super::open::run_recv(&a);
    }
    let output = match (&a.dir, a.stdout) {
        (_, true) => Output::Stdout,
        (Some(d), false) => Output::Dir {
            path: d.clone(),
            force: a.force,
        },
        (None, false) => return Ok(fail(NetError::setup("give --dir OUT or --stdout"))),
    };
    let mut cfg = RecvConfig::new(a.net.group, output);
    cfg.sock = a.net.socket_opts();
    cfg.sock.source = a.source;
    cfg.session = a.session;
    cfg.node_id = a.net.node_id;
    cfg.region = a.region;
    let keys = a.net.keys();
    let loss = a.net.loss();
    match (keys, loss) {
        (Ok(k), Ok(l)) => {
            cfg.keys = k;
            cfg.loss = l;
        }
        (Err(e), _) | (_, Err(e)) => return Ok(fail(e)),
    }
    if let Some(w) = a.wait {
        match rmcast_proto::duration_from_secs(w) {
            Some(d) => cfg.wait = Some(d),
            None => {
                return Ok(fail(NetError::setup(
                    "--wait must be a non-negative number",
                )))
            }
        }
    }
    match rmcast_proto::duration_from_secs(a.sender_timeout) {
        Some(d) if !d.is_zero() => cfg.sender_timeout = d,
        _ => {
            return Ok(fail(NetError::setup(
                "--sender-timeout must be a positive number",
            )))
        }
    }
    let mut bar = Bar {
        quiet: a.net.quiet,
        start: Instant::now(),
        bar: None,
        size: None,
        name: String::new(),
        pos: 0,
    };
    if a.keep {
        return keep(&a, cfg, &mut bar);
    }
    let report = match receiver::receive(cfg, &mut bar) {
        Ok(r) => r,
        Err(e) => return Ok(fail(e)),
    };
    let to_stderr = a.stdout;
    if a.net.json {
        let j = serde_json::to_string_pretty(&report)?;
        if to_stderr {
            eprintln!("{j}");
        } else {
            println!("{j}");
        }
    } else if !a.net.quiet {
        print_summary(&report, to_stderr);
    }
    Ok(ExitCode::from(report.exit_code()))
}

/// `--keep`: session after session, each summarized as it ends, until a signal.
fn keep(a: &Args, cfg: RecvConfig, bar: &mut Bar) -> Result<ExitCode> {
    let mut sessions = 0u64;
    loop {
        let report = match receiver::receive(cfg.clone(), bar) {
            Ok(r) => r,
            Err(e) => return Ok(fail(e)),
        };
        let code = report.exit_code();
        if code == rmcast_net::sender::EXIT_INTERRUPTED {
            if !a.net.quiet && !a.net.json {
                eprintln!("interrupted: {sessions} session(s) received");
            }
            return Ok(ExitCode::from(code));
        }
        sessions += 1;
        if a.net.json {
            println!("{}", serde_json::to_string(&report)?);
        } else if !a.net.quiet {
            print_summary(&report, false);
        }
        bar.reset();
    }
}
