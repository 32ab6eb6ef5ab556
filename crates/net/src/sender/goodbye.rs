//! Step 3: every receiver's outcome, END (three times, to the group and to each receiver),
//! the summary.

use super::transfer::Transfer;
use super::{AgentCounters, ReceiverSummary, SendReport};
use crate::endpoint::session_packet;
use rmcast_wire::session::{self, Outcome, ReportState};
use std::time::Duration;

/// What the sender knows of a receiver that sent no final report.
#[derive(Debug, Clone, Copy)]
pub(super) struct Silent {
    /// The agent completed: every receiver (or reporter) it waits for acknowledged all data.
    pub completed: bool,
    /// The protocol learns from its receivers that they hold everything
    /// ([`crate::agents::NetProtocol::acknowledged`]).
    pub acknowledged: bool,
    /// Receivers the protocol itself stopped waiting for (`prmp --silent-polls`).
    pub removed_by_agent: u64,
    /// The receiver whose status stands for this one's (`dsp`: its designated receiver).
    pub reported_by: Option<u32>,
    /// Application bytes this receiver's own last session report counted.
    pub own_bytes: u64,
    /// Application bytes sent (`None`: a stream of unknown length).
    pub total: Option<u64>,
    pub final_wait: Duration,
}

/// Why a receiver without a final report is `unconfirmed`: says "acknowledged all data"
/// only when the agent completed on this receiver's own acknowledgments; a receiver another
/// one reported for is said to be represented, with what its own last report counted.
pub(super) fn unconfirmed_reason(s: &Silent) -> String {
    if !s.completed {
        return "the transfer did not complete".to_string();
    }
    if s.removed_by_agent > 0 {
        return format!(
            "sent no final report; the protocol removed {} receiver(s) that did not answer \
             (prmp --silent-polls)",
            s.removed_by_agent
        );
    }
    if !s.acknowledged {
        return format!(
            "sent no final report within --final-wait ({:.1}s) after the last data and its \
             last progress",
            s.final_wait.as_secs_f64()
        );
    }
    if let Some(d) = s.reported_by {
        let own = match s.total {
            Some(t) => format!("{} of {t} bytes", s.own_bytes),
            None => format!("{} bytes", s.own_bytes),
        };
        return format!(
            "sent no final report; represented by {d:08x} (its designated receiver or local \
             exchange), whose status covered all data (this receiver's own last report: {own})"
        );
    }
    "acknowledged all data but sent no final report".to_string()
}

/// Why a receiver that reported completion is not counted as completed.
pub(super) const UNVERIFIED: &str =
    "reported complete, but was admitted by an unauthenticated JOIN and never showed progress \
     (no protocol packet, no report that moved) before: what any host on the LAN can send. \
     Not counted; with --key-file or --receiver-list it would be";

impl Transfer {
    /// Each member's outcome for the summary and for END.
    fn outcomes(&self) -> (Vec<ReceiverSummary>, Vec<(u32, Outcome)>) {
        let removed_by_agent = self.agent.stats().evicted;
        let mut summary = Vec::new();
        let mut outcomes = Vec::new();
        for m in &self.members {
            let (outcome, reason, o) = match (&m.evicted, m.final_state) {
                (Some(why), _) => ("evicted", Some(why.clone()), Outcome::Evicted),
                (None, Some((ReportState::Complete, _))) if m.believed() => {
                    ("completed", None, Outcome::Completed)
                }
                // It may well hold the file (its END says so), but the summary does not count
                // what any host on the LAN can claim.
                (None, Some((ReportState::Complete, _))) => (
                    "unverified",
                    Some(UNVERIFIED.to_string()),
                    Outcome::Completed,
                ),
                (None, Some((_, r))) => (
                    "failed",
                    Some(format!(
                        "receiver reported failure: {}",
                        crate::receiver::reason_text(r)
                    )),
                    Outcome::Failed,
                ),
                (None, None) => (
                    "unconfirmed",
                    Some(unconfirmed_reason(&Silent {
                        completed: self.completed_at.is_some(),
                        acknowledged: self.ep.proto.acknowledged(),
                        removed_by_agent,
                        reported_by: self.side.reported_by(m.node),
                        own_bytes: m.bytes,
                        total: self.total,
                        final_wait: self.ep.cfg.final_wait,
                    })),
                    Outcome::Failed,
                ),
            };
            outcomes.push((m.node, o));
            let role = self.side.role(m.node);
            let seconds = m.finished_at.map(|t| {
                let from = if m.late { m.joined_at } else { self.start };
                t.saturating_since(from).as_secs_f64()
            });
            summary.push(ReceiverSummary {
                seconds,
                mbit_s: seconds
                    .filter(|s| *s > 0.0)
                    .map(|s| m.bytes as f64 * 8.0 / s / 1e6),
                node: m.node,
                addr: m.addr.to_string(),
                outcome,
                admitted: m.admitted.name(),
                traffic: m.traffic,
                reason,
                bytes: m.bytes,
                messages: m.messages,
                repairs_received: m.repairs,
                duplicates: m.duplicates,
                rejected: m.rejected,
                region: role.map(|_| m.region.unwrap_or(0)),
                role,
                joined_late: m.late,
                restarts: m.restarts,
                moves: m.moves,
            });
        }
        (summary, outcomes)
    }

    /// Say goodbye: multicast END with every receiver's outcome and write the summary.
    pub(super) fn goodbye(mut self) -> SendReport {
        let (summary, outcomes) = self.outcomes();
        let end = session_packet(
            self.ep.session,
            self.ep.node,
            session::Message::End {
                outcomes: &session::encode_outcomes(&outcomes),
            },
        );
        let (wire, sock) = (&mut self.ep.wire, &self.ep.sock);
        match end {
            Ok(end) => {
                for i in 0..3 {
                    let _ = wire.send(sock, self.ep.group, &end, false);
                    for m in &self.members {
                        let _ = wire.send(sock, m.addr, &end, false);
                    }
                    if i < 2 {
                        std::thread::sleep(Duration::from_millis(20));
                    }
                }
            }
            // More outcomes than END carries (--max-receivers keeps the list far below).
            Err(e) => tracing::error!("cannot encode END: {e}"),
        }
        let seconds = self.transfer_end.saturating_since(self.start).as_secs_f64();
        let bytes = self.total.unwrap_or(self.acked);
        let ep = &self.ep;
        let st = self.agent.stats();
        let all_completed = !summary.is_empty() && summary.iter().all(|s| s.outcome == "completed");
        SendReport {
            session: ep.session,
            node: ep.node,
            protocol: ep.cfg.protocol.clone(),
            group: ep.group.to_string(),
            files: self.files,
            bytes,
            seconds,
            started_unix_us: crate::clock::unix_micros_of(self.start, self.ep.clock.now()),
            rto_ms: ep.rto.as_secs_f64() * 1e3,
            goodput_mbit_s: if seconds > 0.0 {
                bytes as f64 * 8.0 / seconds / 1e6
            } else {
                0.0
            },
            receivers: summary,
            agent: AgentCounters {
                data_sent: st.data_sent,
                repairs_sent: st.repairs_sent,
                timeouts: st.timeouts,
                messages_completed: st.completed,
                messages_failed: st.failed.max(self.failed_msgs),
            },
            driver: ep.wire.stats.clone(),
            protocol_to_group: self.to_group,
            protocol_unicast: self.to_nodes,
            all_completed,
            interrupted: ep.interrupt.raised(),
            role_changes: self.side.role_changes(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agents::PROTOCOLS;

    fn silent(acknowledged: bool, reported_by: Option<u32>) -> Silent {
        Silent {
            completed: true,
            acknowledged,
            removed_by_agent: 0,
            reported_by,
            own_bytes: 800_000,
            total: Some(20_000_000),
            final_wait: Duration::from_secs(2),
        }
    }

    /// Every protocol's wording for a receiver without a final report: "acknowledged all
    /// data" only where the agent completed on that receiver's own acknowledgments (saw, bap,
    /// rra, xtp, prmp, ff, norm: every receiver acknowledges; dsp: the designated receiver); a dsp
    /// member is "represented" with its own count; pgm, srm and lms (NAKs) acknowledge nothing.
    #[test]
    fn summary_wording_says_whose_state_covered_the_data() {
        for p in &PROTOCOLS {
            let name = p.name();
            let own = unconfirmed_reason(&silent(p.acknowledged(), None));
            match name {
                "saw" | "bap" | "rra" | "xtp" | "prmp" | "ff" | "dsp" | "csp" | "cp" | "norm" => {
                    assert_eq!(
                        own, "acknowledged all data but sent no final report",
                        "{name}"
                    )
                }
                "pgm" | "srm" | "lms" => assert_eq!(
                    own,
                    "sent no final report within --final-wait (2.0s) after the last data and \
                     its last progress"
                ),
                other => panic!("no wording test for {other}"),
            }
            let stood_for = unconfirmed_reason(&silent(p.acknowledged(), Some(5)));
            if p.acknowledged() {
                assert!(!stood_for.contains("acknowledged"), "{name}: {stood_for}");
                assert_eq!(
                    stood_for,
                    "sent no final report; represented by 00000005 (its designated receiver \
                     or local exchange), whose status covered all data (this receiver's own \
                     last report: 800000 of 20000000 bytes)"
                );
            }
            let unfinished = Silent {
                completed: false,
                ..silent(p.acknowledged(), None)
            };
            assert_eq!(
                unconfirmed_reason(&unfinished),
                "the transfer did not complete"
            );
            let removed = Silent {
                removed_by_agent: 2,
                ..silent(p.acknowledged(), None)
            };
            assert!(unconfirmed_reason(&removed).contains("removed 2 receiver(s)"));
        }
        let stream = Silent {
            total: None,
            ..silent(true, Some(9))
        };
        assert!(unconfirmed_reason(&stream).ends_with("own last report: 800000 bytes)"));
    }
}
