//! The helpers inside the network a sender names, one per region (a csp/cp local exchange, a
//! prmp relay), and their node ids.

use rmcast_proto::Time;
use std::time::Duration;

/// The helpers inside the network a sender named, one per region (a csp/cp local exchange, a
/// prmp relay), each hosted by `rmcast relay --region R`: which have spoken, and why the
/// session cannot go on when one has not within [`HELPER_WAIT`] of the start.
#[derive(Debug, Clone)]
pub(crate) struct RegionHelpers {
    /// The protocol's name, for messages.
    protocol: &'static str,
    /// What a helper is (`local exchange`, `relay`).
    what: &'static str,
    /// What it sends the sender (`status`, `response`).
    says: &'static str,
    /// Why the protocol needs it, for the message that it never spoke.
    why: &'static str,
    /// (region, node id) of every helper named.
    named: Vec<(u16, u32)>,
    /// Helpers heard from.
    heard: Vec<u32>,
    /// When the transfer started (the first [`RegionHelpers::stalled`] question).
    started: Option<Time>,
}

/// How long the sender waits for each helper's first word after the start before it ends the
/// transfer (no `rmcast relay --region R` hosts it).
pub const HELPER_WAIT: Duration = Duration::from_secs(5);

impl RegionHelpers {
    pub(crate) fn new(
        protocol: &'static str,
        what: &'static str,
        says: &'static str,
        why: &'static str,
    ) -> Self {
        RegionHelpers {
            protocol,
            what,
            says,
            why,
            named: Vec::new(),
            heard: Vec::new(),
            started: None,
        }
    }

    /// Name a helper for `region`: [`helper_id`] moved past the ids in `taken`, which it joins.
    pub(crate) fn name(&mut self, region: u16, taken: &mut Vec<u32>) -> u32 {
        let id = helper_id(region, taken);
        taken.push(id);
        self.named.push((region, id));
        tracing::info!(
            region,
            helper = format_args!("{id:08x}"),
            "{}: region {region}'s {} (rmcast relay --region {region})",
            self.protocol,
            self.what
        );
        id
    }

    /// Every helper named, (region, node id).
    pub(crate) fn named(&self) -> &[(u16, u32)] {
        &self.named
    }

    /// The helper of `region`, if one was named.
    pub(crate) fn of(&self, region: u16) -> Option<u32> {
        self.named
            .iter()
            .find(|&&(r, _)| r == region)
            .map(|&(_, x)| x)
    }

    /// Whether `node` is a helper named (and, the first time, that it spoke).
    pub(crate) fn heard(&mut self, node: u32) -> bool {
        if !self.named.iter().any(|&(_, x)| x == node) {
            return false;
        }
        if !self.heard.contains(&node) {
            self.heard.push(node);
            tracing::info!(
                helper = format_args!("{node:08x}"),
                "{}: a {} speaks",
                self.protocol,
                self.what
            );
        }
        true
    }

    /// Why the session cannot go on: a helper silent [`HELPER_WAIT`] after the start.
    pub(crate) fn stalled(&mut self, now: Time) -> Option<String> {
        let since = *self.started.get_or_insert(now);
        if now.saturating_since(since) < HELPER_WAIT {
            return None;
        }
        let (region, x) = self.named.iter().find(|(_, x)| !self.heard.contains(x))?;
        Some(format!(
            "{}: region {region}'s {} ({x:08x}) sent no {} within {:.0}s of the start: run \
             `rmcast relay --region {region}` between the sender and region {region}'s \
             receivers ({})",
            self.protocol,
            self.what,
            self.says,
            HELPER_WAIT.as_secs_f64(),
            self.why
        ))
    }
}

/// The node id the sender gives region `region`'s helper inside the network (a csp/cp local
/// exchange, a prmp relay): `0xEC00_0000 + region`, moved on past any id in `taken`
/// (receivers, the sender, helpers named before).
pub fn helper_id(region: u16, taken: &[u32]) -> u32 {
    let mut id = 0xEC00_0000u32 | u32::from(region);
    while taken.contains(&id) || id == 0 {
        id = id.wrapping_add(0x0001_0000);
    }
    id
}
