//! `csp` and `cp` on sockets (see the parent module's doc): the sender's side (an exchange
//! named per region, the exchanges its reporters), a receiver's endpoint, and the local
//! exchange `rmcast relay --region R` hosts; and `dsp` with `--designated relay`, whose
//! designated receivers are relays the sender names the same way
//! ([`rmcast_proto::tree::HostedDesignated`]).

use super::*;

/// What the running ANNOUNCE tells the relay of a region about the helper it hosts there.
struct Named {
    region: u16,
    window: u16,
    p: DspParams,
    /// The entry the sender named for the region in the helper's role.
    x: DspEntry,
}

/// The entry the sender named in `role` for the relay's region; `None` for a relay without
/// a region, or (with a warning: the relay forwards the session unexamined) for a region the
/// sender named no `what` for.
fn named_for_region(
    a: &Announced<'_>,
    at: &RelayAt<'_>,
    role: DspRole,
    what: &str,
) -> Result<Option<Named>, NetError> {
    let Some(region) = at.region else {
        return Ok(None);
    };
    let window = a.window()?;
    let p = a.params_as(DspParams::decode)?;
    let Some(x) = p
        .entries
        .iter()
        .find(|e| e.role == role && e.region == region)
        .copied()
    else {
        tracing::warn!(
            region,
            "the sender named no {what} for region {region} (no receiver of that region \
             joined): forwarding unexamined"
        );
        return Ok(None);
    };
    Ok(Some(Named {
        region,
        window,
        p,
        x,
    }))
}

/// The local exchange of the relay's region (`rmcast relay --region R`) for a csp/cp session;
/// nothing (forwarded unexamined) for a relay without a region or a region the sender named no
/// exchange for.
pub(super) fn exchange(a: Announced<'_>, at: &RelayAt<'_>) -> Result<Option<Relayed>, NetError> {
    let Some(variant @ (Variant::Csp | Variant::Cp)) = announced_variant(&a) else {
        return Ok(None);
    };
    let Some(Named {
        region,
        window,
        p,
        x,
    }) = named_for_region(&a, at, DspRole::Exchange, "local exchange")?
    else {
        return Ok(None);
    };
    let endpoints: Vec<NodeId> = p
        .entries
        .iter()
        .filter(|e| {
            e.region == region && matches!(e.role, DspRole::Consolidated | DspRole::Combined)
        })
        .map(|e| NodeId(e.node))
        .collect();
    let merge = if variant == Variant::Csp {
        tree::Merge::Pessimistic
    } else {
        tree::Merge::Optimistic
    };
    let timing = Timing::of(&p);
    let mut c = tree::ExchangeConfig::new(
        NodeId(x.node),
        NodeId(at.sender),
        merge,
        endpoints,
        u32::from(window),
    );
    c.session = at.session;
    c.status_min = timing.status_min;
    c.status_max = timing.status_max;
    c.reassign_after = timing.status_max + timing.local_rtd.mul_f64(timing.r_f);
    tracing::info!(
        region,
        exchange = format_args!("{:08x}", x.node),
        endpoints = c.endpoints.len(),
        "{}: hosting region {region}'s local exchange",
        variant.name()
    );
    let rng = AgentRng::derive(u64::from(at.session), NodeId(x.node), 1);
    Ok(Some(Relayed {
        agent: Box::new(tree::Exchange::new(c, rng)),
        links: Links::Receivers,
        node: Some(x.node),
        local_group: match variant {
            Variant::Cp => Some(local_group(at.group, region)?),
            _ => None,
        },
    }))
}

/// dsp with designated relays: region R's designated receiver for `rmcast relay --region R`
/// ([`tree::HostedDesignated`]); nothing (forwarded unexamined) for a relay without a region
/// or a region the sender named no designated relay for.
pub(super) fn designated(a: Announced<'_>, at: &RelayAt<'_>) -> Result<Option<Relayed>, NetError> {
    let Some(Named {
        region,
        window,
        p,
        x,
    }) = named_for_region(&a, at, DspRole::Designated, "designated relay")?
    else {
        return Ok(None);
    };
    let members: Vec<NodeId> = p
        .entries
        .iter()
        .filter(|e| e.region == region && e.role == DspRole::Member)
        .map(|e| NodeId(e.node))
        .collect();
    let n = members.len();
    let timing = Timing::of(&p);
    let mut c = tree::EndpointConfig::new(
        NodeId(x.node),
        NodeId(at.sender),
        tree::Role::Designated {
            members,
            local_group: GroupId(1 + u32::from(region)),
        },
        u32::from(window),
    );
    c.session = at.session;
    c.status_min = timing.status_min;
    c.status_max = timing.status_max;
    c.local_rtd = timing.local_rtd;
    c.r_f = timing.r_f;
    let rng = AgentRng::derive(u64::from(at.session), NodeId(x.node), 1);
    let mut agent = tree::HostedDesignated::new(c, rng)
        .ok_or_else(|| NetError::Failed("dsp: not a designated role".into()))?;
    // No custody: it reports to the sender no more than its members hold, and starts where
    // they are (a standby replacing a dead relay mid-transfer resumes them there).
    agent.end_to_end(RESUME_WAIT);
    tracing::info!(
        region,
        designated = format_args!("{:08x}", x.node),
        members = n,
        "dsp: region {region}'s designated receiver"
    );
    Ok(Some(Relayed {
        agent: Box::new(agent),
        links: Links::Interfaces,
        node: Some(x.node),
        local_group: Some(local_group(at.group, region)?),
    }))
}

/// How long a designated relay waits for a member that does not report before it reports
/// to the sender ([`tree::Endpoint::end_to_end`]): members report every status interval
/// (milliseconds) once their session reaches them through the relay; a standby that just
/// took over waits for them to follow it.
const RESUME_WAIT: Duration = Duration::from_secs(2);

/// csp/cp: every receiver an endpoint of its region (by its JOIN's region), one local
/// exchange per region named, the exchanges the source's reporters.
pub(super) fn start(
    variant: Variant,
    s: &SenderSettings,
    start: &Start<'_>,
) -> Result<Started, NetError> {
    let (role, helper_role) = match variant {
        Variant::Cp => (DspRole::Combined, DspRole::Exchange),
        Variant::Csp => (DspRole::Consolidated, DspRole::Exchange),
        Variant::Dsp => (DspRole::Member, DspRole::Designated),
    };
    let mut entries: Vec<DspEntry> = start
        .joined
        .iter()
        .map(|&(node, region, addr)| DspEntry {
            node,
            region: region.unwrap_or(0),
            role,
            addr,
        })
        .collect();
    let mut regions: Vec<u16> = entries.iter().map(|e| e.region).collect();
    regions.sort_unstable();
    regions.dedup();
    let mut taken: Vec<u32> = start.ids();
    taken.push(s.node);
    let unspecified = SocketAddr::from(([0, 0, 0, 0], 0));
    let mut exchanges = match variant {
        Variant::Dsp => RegionHelpers::new(
            "dsp",
            "designated relay",
            "status",
            "dsp sent with --designated relay: each region's designated receiver is a relay",
        ),
        _ => RegionHelpers::new(
            variant.name(),
            "local exchange",
            "status",
            "csp and cp consolidate statuses inside the network",
        ),
    };
    for &region in &regions {
        let id = exchanges.name(region, &mut taken);
        entries.push(DspEntry {
            node: id,
            region,
            role: helper_role,
            addr: unspecified,
        });
    }
    // A dsp designated receiver reports its own status, as often as an endpoint; an
    // exchange's status waits for its endpoints' (up to a status interval old).
    let status_max = match variant {
        Variant::Dsp => Duration::ZERO,
        _ => s.dsp.status_interval.mul_f64(1.2),
    };
    let reporters = exchanges
        .named()
        .iter()
        .map(|&(_, epi)| tree::Reporter {
            epi,
            rtd: s.dsp.rtd,
            slack: status_max,
        })
        .collect();
    let mut c = tree::SourceConfig::new(NodeId(s.node), GroupId(0), reporters, u32::from(s.window));
    c.session = s.session;
    c.r_f = s.dsp.r_f;
    c.rate_bps = s.rate_bps;
    c.burst_bytes = s.pacing_burst();
    c.queue_limit = QUEUE_LIMIT;
    if variant == Variant::Dsp {
        c.history = STANDBY_WINDOWS * u32::from(s.window);
        // The designated relays give custody up: keep every block until every member holds it.
        c.release_at_lw = true;
    }
    Ok(Started {
        agent: Box::new(tree::Source::new(c)),
        side: Box::new(Exchanges {
            variant,
            opts: s.dsp.clone(),
            entries,
            exchanges,
        }),
    })
}

/// The sender's side of a csp/cp session: the endpoints and the local exchanges it named.
struct Exchanges {
    variant: Variant,
    opts: DspOpts,
    entries: Vec<DspEntry>,
    /// The local exchanges named, one per region.
    exchanges: RegionHelpers,
}

impl SenderSide for Exchanges {
    fn params(&self) -> Result<Vec<u8>, NetError> {
        announce_entries(&self.opts, &self.entries)
    }

    /// Mark the evicted endpoint in the announce (its exchange stops waiting for it); when
    /// it was its region's last, the source stops waiting for the region's helper too: an
    /// exchange with no endpoint left has nothing to consolidate and reports nothing, and
    /// the source, still counting it, held every block from then on.
    fn evicted(&mut self, now: Time, agent: &mut dyn Agent, node: u32) -> bool {
        let Some(e) = self.entries.iter_mut().find(|e| e.node == node) else {
            return false;
        };
        e.role = DspRole::Evicted;
        let region = e.region;
        let endpoint = |r: DspRole| {
            matches!(
                r,
                DspRole::Consolidated | DspRole::Combined | DspRole::Member
            )
        };
        let left = self
            .entries
            .iter()
            .any(|e| e.region == region && endpoint(e.role));
        if let (false, Some(helper)) = (left, self.exchanges.of(region)) {
            if agent
                .as_sender()
                .is_some_and(|s| s.remove_receiver(now, NodeId(helper)))
            {
                tracing::warn!(
                    region,
                    helper = format_args!("{helper:08x}"),
                    "region {region} has no receiver left: no longer waiting for its helper"
                );
            }
        }
        true
    }

    fn role(&self, _node: u32) -> Option<&'static str> {
        Some(match self.variant {
            Variant::Cp => "combined",
            Variant::Csp => "consolidated",
            Variant::Dsp => "member",
        })
    }

    /// An endpoint's status reaches the sender only as part of its exchange's.
    fn reported_by(&self, node: u32) -> Option<u32> {
        let region = self.entries.iter().find(|e| e.node == node)?.region;
        self.exchanges.of(region)
    }

    fn helper(&mut self, _now: Time, node: u32) -> bool {
        self.exchanges.heard(node)
    }

    fn stalled(&mut self, now: Time) -> Option<String> {
        self.exchanges.stalled(now)
    }
}

/// A csp/cp receiver's place: its region, and cp's local group.
#[derive(Debug, Clone)]
struct EndpointPlace {
    region: u16,
    role: &'static str,
    local_group: Option<SocketAddr>,
}

impl ReceiverSide for EndpointPlace {
    fn local_group(&self) -> Option<SocketAddr> {
        self.local_group
    }

    /// A cp endpoint joins its region's local group, where endpoints re-multicast.
    fn join(&self) -> Option<SocketAddr> {
        self.local_group
    }

    fn place(&self) -> Option<(u16, &'static str)> {
        Some((self.region, self.role))
    }
}

/// A csp/cp receiver's endpoint, from the running ANNOUNCE that names it (`Ok(None)` before).
pub(super) fn endpoint(a: Announced<'_>, me: &Me) -> Result<Option<Received>, NetError> {
    let window = a.window()?;
    let p = a.params_as(DspParams::decode)?;
    let Some(mine) = p.entries.iter().find(|e| e.node == me.node) else {
        return Ok(None);
    };
    let region = mine.region;
    let Some(x) = p
        .entries
        .iter()
        .find(|e| e.role == DspRole::Exchange && e.region == region)
    else {
        return Err(NetError::Failed(format!(
            "the sender named no local exchange for region {region}"
        )));
    };
    let (role, place) = match mine.role {
        DspRole::Combined => {
            let g = local_group(me.group, region)?;
            (
                tree::Role::Combined {
                    exchange: NodeId(x.node),
                    local_group: GroupId(1 + u32::from(region)),
                },
                EndpointPlace {
                    region,
                    role: "combined",
                    local_group: Some(g),
                },
            )
        }
        DspRole::Consolidated => (
            tree::Role::Consolidated {
                exchange: NodeId(x.node),
            },
            EndpointPlace {
                region,
                role: "consolidated",
                local_group: None,
            },
        ),
        // Evicted (or a role of another variant): not this session's endpoint now.
        _ => return Ok(None),
    };
    let timing = Timing::of(&p);
    let mut c =
        tree::EndpointConfig::new(NodeId(me.node), NodeId(me.sender), role, u32::from(window));
    c.session = me.session;
    c.status_min = timing.status_min;
    c.status_max = timing.status_max;
    c.local_rtd = timing.local_rtd;
    c.r_f = timing.r_f;
    tracing::info!(
        region,
        exchange = format_args!("{:08x}", x.node),
        "{} endpoint of region {region}",
        place.role
    );
    Ok(Some(Received {
        agent: Box::new(tree::Endpoint::new(c, me.rng())),
        side: Box::new(place),
    }))
}
