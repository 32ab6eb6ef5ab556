//! `rmcast relay`'s settings.

use crate::secure::Keys;
use std::net::SocketAddr;
use std::time::Duration;

/// Relay settings.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// The group and port the sessions run on.
    pub group: SocketAddr,
    /// The interface toward the sender.
    pub upstream: String,
    /// The interfaces toward the receivers (at least one).
    pub downstream: Vec<String>,
    /// TTL of what it multicasts downstream.
    pub ttl: u32,
    /// Serve only this session id.
    pub session: Option<u32>,
    /// Most receivers (proxies) one session may have through this relay.
    pub max_receivers: usize,
    /// A session whose sender is silent this long is forgotten.
    pub idle: Duration,
    /// End after the first session (its END, or its sender's silence).
    pub once: bool,
    /// Give up if no session is announced within this time (`None`: wait forever).
    pub wait: Option<Duration>,
    /// The relay's node id (`None`: a random one): what its agent names itself (an LMS
    /// turning point in its DREQs).
    pub node: Option<u32>,
    /// The region whose local exchange it hosts (csp, cp); `None`: none.
    pub region: Option<u16>,
    /// The sessions' key (`--key-file`, with `--encrypt` as the sender): what comes in is
    /// opened with it (and refused if it does not open), what the agent originates is
    /// sealed with it; what passes goes on as it came, sealed by its author.
    pub keys: Option<Keys>,
    /// A standby relay (`--standby SECS`): it serves nothing downstream while another relay's
    /// multicast of the session is heard on its downstream interfaces, and takes over once
    /// that relay has been silent this long (`super::standby`).
    pub standby: Option<Duration>,
}

impl RelayConfig {
    /// Defaults for relaying `group` from `upstream` to `downstream`.
    pub fn new(group: SocketAddr, upstream: String, downstream: Vec<String>) -> Self {
        RelayConfig {
            group,
            upstream,
            downstream,
            ttl: 1,
            session: None,
            max_receivers: 1024,
            idle: Duration::from_secs(15),
            once: false,
            wait: None,
            node: None,
            region: None,
            keys: None,
            standby: None,
        }
    }
}
