//! Seed 003's recovery schemes (SRM, PGM, LMS and their variants), named once for the
//! scale benchmark ([`crate::bench::scale_run`]) and the seed-003 study in `rmcast-repro`.

/// A seed-003 scheme.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scheme {
    /// LMS with static repliers.
    Lms,
    /// LMS with adaptive repliers (beyond the seed: receivers refresh their cost every
    /// [`rmcast_proto::lms::DEFAULT_REFRESH_PACKETS`] packets, routers follow the cheapest
    /// interface).
    LmsAdaptive,
    /// PGM.
    Pgm,
    /// ns-2 SRM; `adaptive`: Agent/SRM/Adaptive; `topo`: distances from the topology and no
    /// session messages (used beyond the seed on very large graphs).
    Srm {
        /// Agent/SRM/Adaptive.
        adaptive: bool,
        /// Distances from the topology, no session messages.
        topo: bool,
    },
    /// NORM (RFC 5740, libnorm's settings; beyond the seed: issue 62).
    Norm,
}

impl Scheme {
    /// Every scheme, in name order of the seed's three first.
    pub const ALL: [Scheme; 8] = [
        Scheme::Srm {
            adaptive: false,
            topo: true,
        },
        Scheme::Pgm,
        Scheme::Lms,
        Scheme::LmsAdaptive,
        Scheme::Srm {
            adaptive: true,
            topo: true,
        },
        Scheme::Srm {
            adaptive: false,
            topo: false,
        },
        Scheme::Srm {
            adaptive: true,
            topo: false,
        },
        Scheme::Norm,
    ];
    /// The three schemes `rmcast bench scale` runs by default.
    pub const SCALE: [Scheme; 3] = [
        Scheme::Srm {
            adaptive: false,
            topo: true,
        },
        Scheme::Pgm,
        Scheme::Lms,
    ];

    /// `lms`, `lms-adaptive`, `pgm`, and `srm` with `-adaptive` and/or `-session` (session
    /// messages rather than topology distances).
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Lms => "lms",
            Scheme::LmsAdaptive => "lms-adaptive",
            Scheme::Pgm => "pgm",
            Scheme::Norm => "norm",
            Scheme::Srm {
                adaptive: false,
                topo: true,
            } => "srm",
            Scheme::Srm {
                adaptive: true,
                topo: true,
            } => "srm-adaptive",
            Scheme::Srm {
                adaptive: false,
                topo: false,
            } => "srm-session",
            Scheme::Srm {
                adaptive: true,
                topo: false,
            } => "srm-adaptive-session",
        }
    }

    /// The scheme called `s` (its [`name`](Scheme::name)).
    pub fn parse(s: &str) -> Option<Scheme> {
        Scheme::ALL.into_iter().find(|x| x.name() == s)
    }
}
