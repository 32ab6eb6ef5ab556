//! Step 3: every receiver's outcome, END (three times, to the group and to each receiver),
//! the summary.

use super::transfer::Transfer;
use super::{AgentCounters, ReceiverSummary, SendReport};
use crate::endpoint::session_packet;
use rmcast_wire::session::{self, Outcome, ReportState};
use std::time::Duration;

impl Transfer {
    /// Each member's outcome for the summary and for END.
    fn outcomes(&self) -> (Vec<ReceiverSummary>, Vec<(u32, Outcome)>) {
        let removed_by_agent = self.agent.stats().evicted;
        let mut summary = Vec::new();
        let mut outcomes = Vec::new();
        for m in &self.members {
            let (outcome, reason, o) = match (&m.evicted, m.final_state) {
                (Some(why), _) => ("evicted", Some(why.clone()), Outcome::Evicted),
                (None, Some((ReportState::Complete, _))) => ("completed", None, Outcome::Completed),
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
                    Some(if self.completed_at.is_some() && removed_by_agent > 0 {
                        format!(
                            "sent no final report; the protocol removed {removed_by_agent} receiver(s) \
                             that did not answer (prmp --silent-polls)"
                        )
                    } else if self.completed_at.is_some() && !self.ep.proto.acknowledged() {
                        format!(
                            "sent no final report within --final-wait ({:.1}s) after the last data",
                            self.ep.cfg.final_wait.as_secs_f64()
                        )
                    } else if self.completed_at.is_some() {
                        "acknowledged all data but sent no final report".to_string()
                    } else {
                        "the transfer did not complete".to_string()
                    }),
                    Outcome::Failed,
                ),
            };
            outcomes.push((m.node, o));
            let role = self.side.role(m.node);
            summary.push(ReceiverSummary {
                node: m.node,
                addr: m.addr.to_string(),
                outcome,
                reason,
                bytes: m.bytes,
                messages: m.messages,
                repairs_received: m.repairs,
                duplicates: m.duplicates,
                rejected: m.rejected,
                region: role.map(|_| m.region),
                role,
                joined_late: m.late,
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
        }
    }
}
