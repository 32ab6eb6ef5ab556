//! Laying out the roles of one connection on regions: every agent configuration and local
//! group a driver needs.

use super::*;

/// One region (local exchange `L_i` and its jurisdiction) as a driver sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Region {
    /// The local exchange (a router node; CSP and CP put an [`Exchange`] there).
    pub exchange: NodeId,
    /// Its endpoints; for DSP the first one is the designated endpoint `E_i1` (put the one
    /// closest to the source first).
    pub endpoints: Vec<NodeId>,
    /// Round-trip delay between the source and the exchange.
    pub rtd_exchange: Duration,
    /// Round-trip delay between the source and each endpoint (same order as `endpoints`).
    pub rtd_endpoints: Vec<Duration>,
}

/// Parameters shared by every role of one connection.
#[derive(Debug, Clone)]
pub struct Settings {
    /// DSP, CSP or CP.
    pub variant: Variant,
    /// Session id: carried in every datagram, and datagrams of another session are ignored.
    pub session: u32,
    /// `L`: window (largest number of outstanding blocks) and LOB length.
    pub l: u32,
    /// Retransmission buffer of DSP designated and CP endpoints, blocks.
    pub retx_capacity: u32,
    /// Retransmission timeout factor `r_f` (source and DSP designated endpoints).
    pub r_f: f64,
    /// Source peak rate, bits per second (0: unpaced).
    pub rate_bps: u64,
    /// Datagram length of one block (for `ipt` in the `k` field).
    pub block_datagram: usize,
    /// Shortest interval between an endpoint's statuses.
    pub status_min: Duration,
    /// Longest interval between an endpoint's statuses.
    pub status_max: Duration,
    /// Round-trip delay inside a region.
    pub local_rtd: Duration,
    /// `k`: blocks per unit of a status's LOB.
    pub kou: u32,
    /// Delay between the last acknowledgment and `Completed` at the source.
    pub linger: Duration,
    /// DSP: each region's designated endpoint is its local exchange's node (a router), hosted
    /// there ([`HostedDesignated`]) as `rmcast relay --region` hosts it on sockets, and every
    /// receiver is a member; otherwise the region's first endpoint is designated.
    pub designated_at_exchange: bool,
    /// Messages queued at the source before `send` refuses.
    pub queue_limit: usize,
}

impl Settings {
    /// The defaults (`spec::dsp`) for `variant` with window `l`.
    pub fn new(variant: Variant, l: u32) -> Self {
        Settings {
            variant,
            session: 0,
            l: l.max(1),
            retx_capacity: l.max(1),
            r_f: crate::tree::spec::R_F,
            rate_bps: 0,
            block_datagram: crate::tree::spec::BLOCK_BYTES + HEADER_LEN + 12,
            status_min: crate::spec::ms(crate::tree::spec::STATUS_MIN_MS),
            status_max: crate::spec::ms(crate::tree::spec::STATUS_MAX_MS),
            local_rtd: crate::spec::ms(crate::tree::spec::LOCAL_RTD_MS),
            kou: crate::tree::spec::KOU,
            linger: Duration::ZERO,
            designated_at_exchange: false,
            queue_limit: 64,
        }
    }
    /// Time to send one block at the peak rate.
    pub fn ipt(&self) -> Duration {
        if self.rate_bps == 0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(self.block_datagram as f64 * 8.0 / self.rate_bps as f64)
        }
    }
}

/// Every agent configuration of one connection: build the agents from it and add the local
/// groups to the driver.
#[derive(Debug, Clone)]
pub struct Deployment {
    /// The source's configuration.
    pub source: SourceConfig,
    /// Every endpoint's configuration.
    pub endpoints: Vec<EndpointConfig>,
    /// Every local exchange's configuration (CSP and CP).
    pub exchanges: Vec<ExchangeConfig>,
    /// DSP designated endpoints hosted at their region's exchange node
    /// ([`Settings::designated_at_exchange`]).
    pub hosted: Vec<EndpointConfig>,
    /// Local multicast groups (region `i` gets `GroupId(first_local_group + i)`) and their
    /// members: DSP — the region's endpoints but `E_i1`; CP — all its endpoints; CSP uses none.
    pub local_groups: Vec<(GroupId, Vec<NodeId>)>,
}

/// Lay out the roles of `s.variant` on `regions` (empty regions are skipped).
pub fn deploy(
    source: NodeId,
    group: GroupId,
    first_local_group: u32,
    regions: &[Region],
    s: &Settings,
) -> Deployment {
    let ipt = s.ipt();
    let mut reporters = Vec::new();
    let mut endpoints = Vec::new();
    let mut exchanges = Vec::new();
    let mut hosted = Vec::new();
    let mut local_groups = Vec::new();
    for (i, r) in regions.iter().enumerate() {
        let Some(&designated) = r.endpoints.first() else {
            continue;
        };
        let local_group = GroupId(first_local_group.saturating_add(i as u32));
        let lmvci = 2 + i as u32;
        let rtd_of = |j: usize| r.rtd_endpoints.get(j).copied().unwrap_or(r.rtd_exchange);
        let endpoint = |j: usize, m: NodeId, role: Role| {
            let mut c = EndpointConfig::new(m, source, role, s.l);
            c.session = s.session;
            c.lmvci = lmvci;
            c.retx_capacity = s.retx_capacity;
            c.status_min = s.status_min;
            c.status_max = s.status_max;
            c.rtd = rtd_of(j);
            c.kou = s.kou;
            c.ipt = ipt;
            c.local_rtd = s.local_rtd;
            c.r_f = s.r_f;
            c
        };
        match s.variant {
            Variant::Dsp if s.designated_at_exchange => {
                reporters.push(Reporter {
                    epi: r.exchange.0,
                    rtd: r.rtd_exchange,
                    slack: Duration::ZERO,
                });
                let mut d = endpoint(
                    0,
                    r.exchange,
                    Role::Designated {
                        members: r.endpoints.clone(),
                        local_group,
                    },
                );
                d.rtd = r.rtd_exchange;
                hosted.push(d);
                for (j, &m) in r.endpoints.iter().enumerate() {
                    endpoints.push(endpoint(
                        j,
                        m,
                        Role::Member {
                            designated: r.exchange,
                        },
                    ));
                }
                local_groups.push((local_group, r.endpoints.clone()));
            }
            Variant::Dsp => {
                let others: Vec<NodeId> = r.endpoints.iter().skip(1).copied().collect();
                reporters.push(Reporter {
                    epi: designated.0,
                    rtd: rtd_of(0),
                    slack: Duration::ZERO,
                });
                endpoints.push(endpoint(
                    0,
                    designated,
                    Role::Designated {
                        members: others.clone(),
                        local_group,
                    },
                ));
                for (j, &m) in r.endpoints.iter().enumerate().skip(1) {
                    endpoints.push(endpoint(j, m, Role::Member { designated }));
                }
                local_groups.push((local_group, others));
            }
            Variant::Csp | Variant::Cp => {
                let merge = if s.variant == Variant::Csp {
                    Merge::Pessimistic
                } else {
                    Merge::Optimistic
                };
                reporters.push(Reporter {
                    epi: r.exchange.0,
                    rtd: r.rtd_exchange,
                    slack: s.status_max,
                });
                let mut x =
                    ExchangeConfig::new(r.exchange, source, merge, r.endpoints.clone(), s.l);
                x.session = s.session;
                x.lmvci = lmvci;
                x.status_min = s.status_min;
                x.status_max = s.status_max;
                x.rtd = r.rtd_exchange;
                x.kou = s.kou;
                x.ipt = ipt;
                x.reassign_after = s.status_max + secs_mul(s.local_rtd, s.r_f);
                exchanges.push(x);
                for (j, &m) in r.endpoints.iter().enumerate() {
                    let role = if s.variant == Variant::Csp {
                        Role::Consolidated {
                            exchange: r.exchange,
                        }
                    } else {
                        Role::Combined {
                            exchange: r.exchange,
                            local_group,
                        }
                    };
                    endpoints.push(endpoint(j, m, role));
                }
                if s.variant == Variant::Cp {
                    local_groups.push((local_group, r.endpoints.clone()));
                }
            }
        }
    }
    let mut sc = SourceConfig::new(source, group, reporters, s.l);
    sc.session = s.session;
    sc.r_f = s.r_f;
    sc.rate_bps = s.rate_bps;
    sc.linger = s.linger;
    sc.queue_limit = s.queue_limit;
    Deployment {
        source: sc,
        endpoints,
        exchanges,
        hosted,
        local_groups,
    }
}

crate::deploy::role!(ExchangeConfig => dyn RouterAgent, |c, rng| {
    let r = rng(c.node, 1);
    Exchange::new(c, r)
});
crate::deploy::role!(EndpointConfig => dyn Agent, |c, rng| {
    let r = rng(c.node, 0);
    Endpoint::new(c, r)
});
crate::deploy::role!(SourceConfig => dyn Agent, |c, _rng| Source::new(c));

impl crate::deploy::Deploy for Deployment {
    /// The local groups; an [`Exchange`] per exchange (RNG stream 1), an [`Endpoint`] per
    /// endpoint (stream 0) and the [`Source`].
    fn roles(self, rng: &mut dyn FnMut(NodeId, u64) -> AgentRng) -> crate::deploy::Roles {
        let mut roles = crate::deploy::Roles::new();
        roles.groups = self.local_groups;
        for x in self.exchanges {
            roles.router(x, rng);
        }
        for d in self.hosted {
            let node = d.node;
            if let Some(h) = HostedDesignated::new(d, rng(node, 1)) {
                roles.routers.push((node, Box::new(h)));
            }
        }
        for e in self.endpoints {
            roles.host(e, rng);
        }
        roles.host(self.source, rng);
        roles
    }
}
