//! Loss models. Each [`LossRule`] names a site (a link direction, or a node's transmit or
//! receive side, optionally one interface), a model, and a filter on packet kinds (read from
//! the common header with `rmcast_wire::Header::parse(..).class()`). A rule that applies to
//! several sites keeps independent state (random stream, counters, Gilbert–Elliott state) at
//! each site. Every drop is counted under the rule's cause name.

use crate::rng::{tag, SimRng};
use rmcast_proto::{IfaceId, NodeId};
use rmcast_wire::PacketClass;

/// Which packets a rule applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KindFilter {
    /// Every packet (also datagrams without a valid rmcast header).
    #[default]
    All,
    /// Original and repair data.
    Data,
    /// Original data only (first transmissions).
    OriginalData,
    /// Repair data only (retransmissions).
    Repair,
    /// Feedback and control.
    Control,
}

impl KindFilter {
    /// Whether a packet of `class` passes the filter (an unclassified packet only `All`).
    pub fn matches(self, class: Option<PacketClass>) -> bool {
        match (self, class) {
            (KindFilter::All, _) => true,
            (_, None) => false,
            (KindFilter::Data, Some(c)) => c.is_data(),
            (KindFilter::OriginalData, Some(c)) => c == PacketClass::OriginalData,
            (KindFilter::Repair, Some(c)) => c == PacketClass::RepairData,
            (KindFilter::Control, Some(c)) => c == PacketClass::Control,
        }
    }
    /// The filter called `s` in scenario files.
    pub fn parse(s: &str) -> Option<KindFilter> {
        Some(match s {
            "all" => KindFilter::All,
            "data" => KindFilter::Data,
            "original" | "original_data" => KindFilter::OriginalData,
            "repair" => KindFilter::Repair,
            "control" => KindFilter::Control,
            _ => return None,
        })
    }
}

/// How packets are chosen for dropping at one site.
#[derive(Debug, Clone, PartialEq)]
pub enum LossModel {
    /// Each matching packet is lost independently with probability `p`.
    Bernoulli {
        /// Loss probability.
        p: f64,
    },
    /// Two-state Markov chain ([`GilbertElliott`]).
    GilbertElliott(GilbertElliott),
    /// Drop exactly the `k`-th matching packet (1-based) crossing the site, and no other
    /// (seed 003's single-loss runs: `k`-th original data packet on one link).
    DropNth {
        /// Which packet (1-based).
        k: u64,
    },
    /// Drop one of every `n` matching packets: the `n`-th, `2n`-th, … (seed 002).
    EveryNth {
        /// The period.
        n: u64,
    },
}

/// Gilbert–Elliott's two-state Markov chain. In the good state a packet is lost with
/// `loss_good`, in the bad state with `loss_bad`; after each matching packet the chain moves
/// good→bad with `p_gb` and bad→good with `p_bg`. Starts in the good state.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GilbertElliott {
    /// Good → bad transition probability.
    pub p_gb: f64,
    /// Bad → good transition probability.
    pub p_bg: f64,
    /// Loss probability in the good state.
    pub loss_good: f64,
    /// Loss probability in the bad state.
    pub loss_bad: f64,
}

impl GilbertElliott {
    /// Whether a packet seen in state `bad` is lost; then the chain's step.
    #[inline]
    fn drops(&self, bad: &mut bool, rng: &mut SimRng) -> bool {
        let (loss, leave) = if *bad {
            (self.loss_bad, self.p_bg)
        } else {
            (self.loss_good, self.p_gb)
        };
        let lost = rng.chance(loss);
        if rng.chance(leave) {
            *bad = !*bad;
        }
        lost
    }
}

/// `Ok` for a probability, else the error naming `name`.
fn probability(name: &str, v: f64) -> Result<(), String> {
    if (0.0..=1.0).contains(&v) {
        Ok(())
    } else {
        Err(format!("{name} must be a probability in [0, 1], got {v}"))
    }
}

impl LossModel {
    /// Check parameter ranges; the error says what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        match self {
            LossModel::Bernoulli { p } => probability("p", *p),
            LossModel::GilbertElliott(ge) => {
                probability("p_gb", ge.p_gb)?;
                probability("p_bg", ge.p_bg)?;
                probability("loss_good", ge.loss_good)?;
                probability("loss_bad", ge.loss_bad)
            }
            LossModel::DropNth { k: 0 } => Err("k is 1-based and must be >= 1".into()),
            LossModel::EveryNth { n: 0 } => Err("n must be >= 1".into()),
            _ => Ok(()),
        }
    }
}

/// Where a rule applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LossSite {
    /// Packets crossing link `link` (index in the network's link list); `from: Some(n)`
    /// restricts the rule to the direction leaving node `n`, `None` applies it to both
    /// directions (each with its own state).
    Link {
        /// Index in the network's link list.
        link: usize,
        /// The direction leaving this node, or both.
        from: Option<NodeId>,
    },
    /// Packets a node sends, on every interface or only `iface` (includes forwarded ones).
    Tx {
        /// The sending node.
        node: NodeId,
        /// One interface, or all.
        iface: Option<IfaceId>,
    },
    /// Packets a node receives, on every interface or only `iface`.
    Rx {
        /// The receiving node.
        node: NodeId,
        /// One interface, or all.
        iface: Option<IfaceId>,
    },
}

/// One loss rule.
#[derive(Debug, Clone, PartialEq)]
pub struct LossRule {
    /// Where it applies.
    pub site: LossSite,
    /// Which packets it drops.
    pub model: LossModel,
    /// Which kinds of packet it considers.
    pub filter: KindFilter,
    /// Name under which its drops are counted (e.g. "bernoulli", "single_loss").
    pub cause: String,
}

impl LossRule {
    /// A rule for every kind of packet, its drops counted under the model's name.
    pub fn new(site: LossSite, model: LossModel) -> Self {
        let cause = match model {
            LossModel::Bernoulli { .. } => "bernoulli",
            LossModel::GilbertElliott(_) => "gilbert_elliott",
            LossModel::DropNth { .. } => "drop_nth",
            LossModel::EveryNth { .. } => "every_nth",
        }
        .to_string();
        LossRule {
            site,
            model,
            filter: KindFilter::All,
            cause,
        }
    }
    /// The same rule, considering only packets that pass `f`.
    pub fn filter(mut self, f: KindFilter) -> Self {
        self.filter = f;
        self
    }
    /// The same rule, its drops counted under `c`.
    pub fn cause(mut self, c: impl Into<String>) -> Self {
        self.cause = c.into();
        self
    }
}

/// The state of one rule at one site: its model, random stream, count of matching packets
/// and Gilbert–Elliott state. Public so that another driver (`rmcast testbed`'s link
/// emulator) drops frames by the same models and streams as the simulator.
#[derive(Debug, Clone)]
pub struct LossState {
    /// The rule's model.
    pub model: LossModel,
    /// The packets it considers.
    pub filter: KindFilter,
    /// The one interface it applies to (a node's site), or all.
    pub iface: Option<u32>,
    /// The number its drops are counted under.
    pub cause: u32,
    rng: SimRng,
    matched: u64,
    bad: bool,
}

impl LossState {
    /// The state of `rule` at one site, its drops counted as `cause`: its random stream is
    /// the run's `seed`, the rule's place among the run's rules and `site_key` (the
    /// simulator's: a link direction `2 * link + dir`, a node's transmit side `node << 1`,
    /// its receive side `node << 1 | 1`).
    pub fn new(rule: &LossRule, cause: u32, seed: u64, rule_index: u64, site_key: u64) -> Self {
        let iface = match rule.site {
            LossSite::Tx { iface, .. } | LossSite::Rx { iface, .. } => iface.map(|i| i.0),
            LossSite::Link { .. } => None,
        };
        LossState {
            model: rule.model.clone(),
            filter: rule.filter,
            iface,
            cause,
            rng: SimRng::new(seed, tag::LOSS, rule_index, site_key),
            matched: 0,
            bad: false,
        }
    }

    /// Whether this packet is dropped here.
    #[inline]
    pub fn drops(&mut self, class: Option<PacketClass>, iface: u32) -> bool {
        if self.iface.is_some_and(|i| i != iface) || !self.filter.matches(class) {
            return false;
        }
        self.matched += 1;
        match self.model {
            LossModel::Bernoulli { p } => self.rng.chance(p),
            LossModel::GilbertElliott(ge) => ge.drops(&mut self.bad, &mut self.rng),
            LossModel::DropNth { k } => self.matched == k,
            LossModel::EveryNth { n } => self.matched.is_multiple_of(n),
        }
    }

    /// The rules of one site (a node's transmit or receive side, a link direction) in the
    /// order they were added: each is asked in turn until one drops the packet, and that
    /// one's cause is returned (a later rule does not see the packet, so its state does not
    /// move).
    #[inline]
    pub fn first_drop(
        rules: &mut [LossState],
        class: Option<PacketClass>,
        iface: u32,
    ) -> Option<u32> {
        rules
            .iter_mut()
            .find_map(|r| r.drops(class, iface).then_some(r.cause))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(model: LossModel, filter: KindFilter) -> LossState {
        let rule = LossRule::new(
            LossSite::Rx {
                node: NodeId(0),
                iface: None,
            },
            model,
        )
        .filter(filter);
        LossState::new(&rule, 0, 1, 0, 0)
    }

    #[test]
    fn drop_nth_counts_only_matching_packets() {
        let mut s = state(LossModel::DropNth { k: 3 }, KindFilter::OriginalData);
        let orig = Some(PacketClass::OriginalData);
        let ctl = Some(PacketClass::Control);
        let seq = [orig, ctl, orig, ctl, orig, orig, orig];
        let dropped: Vec<bool> = seq.iter().map(|&c| s.drops(c, 0)).collect();
        assert_eq!(
            dropped,
            vec![false, false, false, false, true, false, false]
        );
    }

    #[test]
    fn every_nth() {
        let mut s = state(LossModel::EveryNth { n: 4 }, KindFilter::All);
        let d: Vec<usize> = (0..12)
            .filter(|_| s.drops(None, 0))
            .collect::<Vec<_>>()
            .into_iter()
            .collect();
        assert_eq!(d.len(), 3);
        let mut s = state(LossModel::EveryNth { n: 4 }, KindFilter::All);
        let pattern: Vec<bool> = (0..8).map(|_| s.drops(None, 0)).collect();
        assert_eq!(
            pattern,
            vec![false, false, false, true, false, false, false, true]
        );
    }

    #[test]
    fn bernoulli_rate_and_filter() {
        let mut s = state(LossModel::Bernoulli { p: 0.2 }, KindFilter::Control);
        let n = 50_000;
        let lost = (0..n)
            .filter(|_| s.drops(Some(PacketClass::Control), 0))
            .count();
        assert!((9_400..10_600).contains(&lost), "{lost}");
        assert!((0..1000).all(|_| !s.drops(Some(PacketClass::OriginalData), 0)));
        assert!((0..1000).all(|_| !s.drops(None, 0)));
    }

    #[test]
    fn gilbert_elliott_is_bursty() {
        // Good state never loses, bad state always does; mean burst length 1/p_bg = 5.
        let mut s = state(
            LossModel::GilbertElliott(GilbertElliott {
                p_gb: 0.02,
                p_bg: 0.2,
                loss_good: 0.0,
                loss_bad: 1.0,
            }),
            KindFilter::All,
        );
        let v: Vec<bool> = (0..200_000).map(|_| s.drops(None, 0)).collect();
        let lost = v.iter().filter(|&&b| b).count() as f64;
        let bursts = v.windows(2).filter(|w| !w[0] && w[1]).count() as f64;
        let mean_burst = lost / bursts;
        // Stationary loss rate p_gb / (p_gb + p_bg) = 0.0909.
        assert!((lost / 200_000.0 - 0.0909).abs() < 0.01, "{}", lost / 2e5);
        assert!((mean_burst - 5.0).abs() < 0.5, "{mean_burst}");
    }

    #[test]
    fn validation() {
        assert!(LossModel::Bernoulli { p: 1.5 }.validate().is_err());
        assert!(LossModel::DropNth { k: 0 }.validate().is_err());
        assert!(LossModel::EveryNth { n: 0 }.validate().is_err());
        assert!(LossModel::Bernoulli { p: 0.5 }.validate().is_ok());
    }
}
