//! `rmcast relay`: host a protocol's helper inside the network (PGM's network element)
//! between a sender's interface and its receivers' interfaces.

use super::send::fail;
use anyhow::Result;
use rmcast_net::relay::{self, RelayConfig, RelayReport};
use rmcast_net::secure::Keys;
use rmcast_net::socket::check_group;
use rmcast_net::NetError;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
#[command(
    about = "Relay a session between an upstream and downstream interfaces, hosting the \
             protocol's network agent (PGM network element, LMS router, CSP/CP local exchange)",
    after_help = "Examples:\n  \
    rmcast relay --group 239.1.2.3:5000 --upstream eth0 --downstream eth1 --downstream eth2\n  \
    rmcast relay -g 239.1.2.3:5000 --upstream eth0 --downstream eth1 --once --json\n  \
    # csp/cp: region 2's local exchange, for receivers started with --region 2 below it:\n  \
    rmcast relay -g 239.1.2.3:5000 --upstream eth0 --downstream eth1 --region 2\n  \
    # prmp: region 2's relay, the polling parent of the receivers started with --region 2:\n  \
    rmcast relay -g 239.1.2.3:5000 --upstream eth0 --downstream eth1 --region 2\n  \
    # a keyed session (rmcast send --key-file rmcast.key --encrypt):\n  \
    rmcast relay -g 239.1.2.3:5000 --upstream eth0 --downstream eth1 --key-file rmcast.key --encrypt\n\n\
    The relay joins the group on the upstream interface and multicasts the session on each\n\
    downstream interface; receivers there take the relay for the sender. Their unicast\n\
    (JOIN, REPORT, NAK, ACK) comes to the relay, which forwards it upstream from one socket\n\
    per receiver, so the sender sees each at its own address. For pgm the relay is a network\n\
    element (RFC 3208 §7): it confirms NAKs with an NCF at once, forwards only the first NAK\n\
    of a repair and sends RDATA only down the interfaces that asked. Other protocols are\n\
    forwarded unexamined. Relays stack (a relay's upstream may be another's downstream).\n\
    One session at a time: the first ANNOUNCE heard upstream (or --session's) is served\n\
    until its END or the sender's silence for --idle, then the next.\n\
    For srm it carries the members' own multicast between its interfaces. For csp and cp,\n\
    --region R makes it region R's local exchange (seed 001): it consolidates the statuses\n\
    of region R's receivers into one status to the sender and, for cp, orders a receiver\n\
    holding a block to re-multicast it on the region's local group (group port + 1 + R),\n\
    which it carries between its downstream interfaces; without --region it forwards them.\n\
    For prmp, --region R makes it region R's relay (multi-level PRMP): a child of the sender\n\
    upstream, the polling parent of region R's receivers downstream, re-multicasting the\n\
    data and repairing its children itself; without --region it forwards prmp.\n\
    For dsp sent with --designated relay, --region R makes it region R's designated\n\
    receiver on a separate host: it takes the members' statuses, reports to the sender and\n\
    re-multicasts what they lack on the region's local group.\n\
    --standby SECS makes it a standby for another relay between the same networks (same\n\
    --region): it forwards nothing while that relay's multicast of the session is heard\n\
    downstream and takes over after SECS of its silence; the receivers below follow.\n\
    Keyed sessions need the sender's --key-file (and --encrypt if it uses it): the relay\n\
    refuses what does not open with it, forwards what does as it came (sealed by its\n\
    author) and seals what it originates; without a key it drops sealed datagrams.\n\
    Not yet: dsp whose designated receivers are receivers (its members reach them at their\n\
    own addresses) is refused at its first ANNOUNCE.\n\
    Exit status: 0 ended as asked (--once: the session's END; or a signal after serving);\n\
    1 --once's session was refused or its sender went silent, or --wait passed without a\n\
    session; 2 bad usage or\n\
    setup error; 130 interrupted before any session."
)]
pub struct Args {
    /// Multicast group and port of the sessions (as `rmcast send --group`)
    #[arg(long, short = 'g', value_name = "ADDR:PORT")]
    pub group: SocketAddr,
    /// The interface toward the sender
    #[arg(long, value_name = "IFACE")]
    pub upstream: String,
    /// An interface toward receivers (repeat for several)
    #[arg(long, value_name = "IFACE", required = true)]
    pub downstream: Vec<String>,
    /// TTL of the datagrams multicast downstream
    #[arg(long, default_value_t = 1)]
    pub ttl: u32,
    /// Serve only this session id (8 hex digits, as `rmcast send` prints it)
    #[arg(long, value_name = "ID", value_parser = super::recv::parse_session)]
    pub session: Option<u32>,
    /// csp, cp: host the local exchange of this region; prmp: be this region's relay; dsp sent
    /// with --designated relay: be its designated receiver (the receivers below started with
    /// `rmcast recv --region REGION`); other protocols ignore it
    #[arg(long, value_name = "REGION")]
    pub region: Option<u16>,
    /// Most receivers one session may have through this relay
    #[arg(long, default_value_t = 1024, value_name = "N")]
    pub max_receivers: usize,
    /// Forget a session whose sender is silent for SECS
    #[arg(long, default_value_t = 15.0, value_name = "SECS")]
    pub idle: f64,
    /// End after the first session
    #[arg(long)]
    pub once: bool,
    /// Give up if no session is announced within SECS (default: wait forever)
    #[arg(long, value_name = "SECS")]
    pub wait: Option<f64>,
    /// The sessions' key file (the sender's --key-file): open what comes in, seal what the
    /// relay originates
    #[arg(long, value_name = "FILE")]
    pub key_file: Option<PathBuf>,
    /// The sender encrypts (its --encrypt); needs --key-file
    #[arg(long, requires = "key_file")]
    pub encrypt: bool,
    /// Stand by for another relay between the same interfaces: forward nothing while its
    /// multicast of the session is heard downstream; take over once it has been silent for
    /// SECS (the receivers below then follow the session here)
    #[arg(long, value_name = "SECS")]
    pub standby: Option<f64>,
    /// Print the report as JSON on stdout
    #[arg(long)]
    pub json: bool,
    /// No summary on stderr
    #[arg(long, short = 'q')]
    pub quiet: bool,
}

fn secs(v: f64, flag: &str) -> Result<std::time::Duration, NetError> {
    match rmcast_proto::duration_from_secs(v) {
        Some(d) if !d.is_zero() => Ok(d),
        _ => Err(NetError::setup(format!(
            "{flag} must be a positive number of seconds"
        ))),
    }
}

fn summary(r: &RelayReport) {
    for s in &r.sessions {
        eprintln!(
            "session {:08x} ({}{}), sender {:08x} at {}: {} receivers, ended: {}; down {} \
             forwarded ({} to some interfaces only), {} held back; up {} forwarded, {} held back; \
             {} originated ({} repairs); peak state {}{}",
            s.session,
            s.protocol.unwrap_or("not running"),
            if s.agent { ", network agent" } else { "" },
            s.sender,
            s.upstream.map(|a| a.to_string()).unwrap_or_default(),
            s.receivers,
            s.ended,
            s.down_forwarded,
            s.down_subcast,
            s.down_consumed,
            s.up_forwarded,
            s.up_consumed,
            s.originated,
            s.repairs_originated,
            s.peak_state,
            s.local_group
                .map(|g| format!("; local group {g}: {} carried", s.local_carried))
                .unwrap_or_default()
        );
        if s.standby_held > 0 || s.took_over_after_s.is_some() {
            eprintln!(
                "  standby: {} datagrams held; {}",
                s.standby_held,
                match s.took_over_after_s {
                    Some(t) => format!("took over {t:.1}s into the session"),
                    None => "never took over".into(),
                }
            );
        }
    }
    eprintln!(
        "rejected {} datagrams, {} sealed (no key), {} not opening with the key, {} stale \
         ANNOUNCEs, {} receivers beyond --max-receivers; {} sends dropped",
        r.rejected,
        r.rejected_sealed,
        r.rejected_auth,
        r.rejected_stale,
        r.rejected_receivers,
        r.send_dropped
    );
}

pub fn run(a: Args) -> Result<ExitCode> {
    if let Err(e) = check_group(a.group) {
        return Ok(fail(e));
    }
    let mut cfg = RelayConfig::new(a.group, a.upstream, a.downstream);
    cfg.ttl = a.ttl;
    cfg.session = a.session;
    cfg.once = a.once;
    cfg.region = a.region;
    if let Some(p) = &a.key_file {
        match Keys::from_file(p, a.encrypt) {
            Ok(k) => cfg.keys = Some(k),
            Err(e) => return Ok(fail(e)),
        }
    }
    if a.max_receivers == 0 {
        return Ok(fail(NetError::setup("--max-receivers must be at least 1")));
    }
    cfg.max_receivers = a.max_receivers;
    match secs(a.idle, "--idle") {
        Ok(d) => cfg.idle = d,
        Err(e) => return Ok(fail(e)),
    }
    if let Some(w) = a.wait {
        match secs(w, "--wait") {
            Ok(d) => cfg.wait = Some(d),
            Err(e) => return Ok(fail(e)),
        }
    }
    if let Some(w) = a.standby {
        match secs(w, "--standby") {
            Ok(d) => cfg.standby = Some(d),
            Err(e) => return Ok(fail(e)),
        }
    }
    let r = match relay::relay(cfg) {
        Ok(r) => r,
        Err(e) => return Ok(fail(e)),
    };
    if a.json {
        println!("{}", serde_json::to_string(&r)?);
    }
    if !a.quiet {
        summary(&r);
    }
    let code = if r.interrupted && r.sessions.iter().all(|s| s.ended == "interrupted") {
        ExitCode::from(super::send::INTERRUPTED)
    } else if a.once && r.sessions.first().is_some_and(|s| s.ended != "end") {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    };
    Ok(code)
}
