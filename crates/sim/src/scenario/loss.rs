//! Loss rules: the topology's per-class error rates, then the scenario's `[[loss]]` tables
//! (a model, a site — links, or nodes' transmit/receive sides — a packet filter, a cause).

use crate::loss::{GilbertElliott, KindFilter, LossModel, LossRule, LossSite};
use crate::params::{Params, ScenarioError};
use crate::sim::Sim;
use crate::Network;
use rmcast_proto::{IfaceId, NodeId};
use toml::{Table, Value};

/// The topology's link-class losses (`link_loss`: (link, p)), then the `[[loss]]` rules.
pub(super) fn add_losses(
    sim: &mut Sim,
    top: &Params,
    table: &Table,
    tp: &Params,
    link_loss: Vec<(usize, f64)>,
    source: NodeId,
    receivers: &[NodeId],
) -> Result<(), ScenarioError> {
    let rules = collect(sim.network(), top, table, &link_loss, source, receivers)?;
    for (rule, at) in rules {
        sim.add_loss(&rule).map_err(|e| match at {
            Origin::Class => tp.bad("class", &e.to_string()),
            Origin::Rule(i) => top.bad(&format!("loss.{i}"), &e.to_string()),
        })?;
    }
    Ok(())
}

/// Where a collected rule came from (for an error adding it).
enum Origin {
    /// The topology's link classes.
    Class,
    /// The `i`-th `[[loss]]` table.
    Rule(usize),
}

/// The loss rules a scenario run's `table` gives on `net` (the topology's link-class losses
/// `link_loss`, then its `[[loss]]` tables, each resolved to its sites), in the order the
/// simulator adds them — so another driver of the same file (`rmcast testbed`'s link
/// emulator) applies the same rules. `file` names the scenario in errors.
pub fn loss_rules(
    net: &Network,
    table: &Table,
    file: &str,
    link_loss: &[(usize, f64)],
    source: NodeId,
    receivers: &[NodeId],
) -> Result<Vec<LossRule>, ScenarioError> {
    let top = Params::new(file, "", table.clone());
    let rules = collect(net, &top, table, link_loss, source, receivers)?;
    Ok(rules.into_iter().map(|(r, _)| r).collect())
}

fn collect(
    net: &Network,
    top: &Params,
    table: &Table,
    link_loss: &[(usize, f64)],
    source: NodeId,
    receivers: &[NodeId],
) -> Result<Vec<(LossRule, Origin)>, ScenarioError> {
    let file = top.file();
    let links = net.link_count();
    let classes: Vec<String> = (0..links)
        .map(|i| {
            net.link(i)
                .map(|l| l.2.class.to_string())
                .unwrap_or_default()
        })
        .collect();
    let n_nodes = net.node_count();
    let mut out = Vec::new();
    // Loss: the topology's class error rates, then the scenario's rules.
    for &(l, p) in link_loss {
        if p > 0.0 {
            let rule = LossRule::new(
                LossSite::Link {
                    link: l,
                    from: None,
                },
                LossModel::Bernoulli { p },
            )
            .cause("link_class");
            out.push((rule, Origin::Class));
        }
    }
    if let Some(v) = table.get("loss") {
        let arr = v
            .as_array()
            .filter(|a| a.iter().all(Value::is_table))
            .ok_or_else(|| top.bad("loss", "an array of tables ([[loss]])"))?;
        for (i, lv) in arr.iter().enumerate() {
            let Value::Table(lt) = lv else { continue };
            let lp = Params::new(file, &format!("loss.{i}"), lt.clone());
            let at = Sites {
                net,
                source,
                receivers,
                links,
                classes: &classes,
                n_nodes,
            };
            for r in loss_rule(&lp, &at)? {
                out.push((r, Origin::Rule(i)));
            }
        }
    }
    Ok(out)
}

/// What a `[[loss]]` table's sites are chosen from.
struct Sites<'a> {
    net: &'a Network,
    source: NodeId,
    receivers: &'a [NodeId],
    links: usize,
    classes: &'a [String],
    n_nodes: usize,
}

/// The rules of one `[[loss]]` table, one per site.
fn loss_rule(lp: &Params, at: &Sites) -> Result<Vec<LossRule>, ScenarioError> {
    lp.check_keys(&[
        "model",
        "p",
        "p_gb",
        "p_bg",
        "loss_good",
        "loss_bad",
        "k",
        "n",
        "at",
        "links",
        "from",
        "nodes",
        "iface",
        "filter",
        "cause",
    ])?;
    let model = model(lp)?;
    let filter = KindFilter::parse(&lp.str_or("filter", "all")?).ok_or_else(|| {
        lp.bad(
            "filter",
            "\"all\", \"data\", \"original\", \"repair\" or \"control\"",
        )
    })?;
    let default_cause = LossRule::new(
        LossSite::Link {
            link: 0,
            from: None,
        },
        model.clone(),
    )
    .cause;
    let cause = lp.str_or("cause", &default_cause)?;
    let rule = |site| LossRule {
        site,
        model: model.clone(),
        filter,
        cause: cause.clone(),
    };
    let mut out = Vec::new();
    let site = lp.str_or("at", "link")?;
    match site.as_str() {
        "link" => {
            let mut from = lp.opt_u64("from")?.map(|v| NodeId(v as u32));
            let sel = link_selection(lp, at.net, at.source, &mut from, at.links, at.classes)?;
            for l in sel {
                if let (Some(node), Some((a, b, _))) = (from, at.net.link(l)) {
                    if node != a && node != b {
                        let e = crate::SimError::NotOnLink { node, link: l };
                        return Err(lp.bad("from", &e.to_string()));
                    }
                }
                out.push(rule(LossSite::Link { link: l, from }));
            }
        }
        "tx" | "rx" | "interface" => {
            let nodes = node_selection(lp, at.source, at.receivers, at.n_nodes)?;
            let iface = lp.opt_u64("iface")?.map(|i| IfaceId(i as u32));
            for n in nodes {
                if site != "rx" {
                    out.push(rule(LossSite::Tx { node: n, iface }));
                }
                if site != "tx" {
                    out.push(rule(LossSite::Rx { node: n, iface }));
                }
            }
        }
        _ => return Err(lp.bad("at", "\"link\", \"tx\", \"rx\" or \"interface\"")),
    }
    Ok(out)
}

/// The rule's loss model.
fn model(lp: &Params) -> Result<LossModel, ScenarioError> {
    Ok(match lp.str_or("model", "")?.as_str() {
        "bernoulli" => LossModel::Bernoulli {
            p: lp.req_f64_in("p", 0.0, 1.0)?,
        },
        "gilbert_elliott" => LossModel::GilbertElliott(GilbertElliott {
            p_gb: lp.req_f64_in("p_gb", 0.0, 1.0)?,
            p_bg: lp.req_f64_in("p_bg", 0.0, 1.0)?,
            loss_good: lp.f64_in("loss_good", 0.0, 0.0, 1.0)?,
            loss_bad: lp.f64_in("loss_bad", 1.0, 0.0, 1.0)?,
        }),
        "drop_nth" => LossModel::DropNth {
            k: lp.req_u64_in("k", 1, u64::MAX)?,
        },
        "every_nth" => LossModel::EveryNth {
            n: lp.req_u64_in("n", 1, u64::MAX)?,
        },
        _ => {
            return Err(lp.bad(
                "model",
                "\"bernoulli\", \"gilbert_elliott\", \"drop_nth\" or \"every_nth\"",
            ))
        }
    })
}

/// The links of an `at = "link"` rule; `links = "source"` also defaults `from` to the source.
fn link_selection(
    lp: &Params,
    net: &Network,
    source: NodeId,
    from: &mut Option<NodeId>,
    links: usize,
    classes: &[String],
) -> Result<Vec<usize>, ScenarioError> {
    Ok(match lp.table.get("links") {
        None => (0..links).collect(),
        Some(Value::String(s)) if s == "all" => (0..links).collect(),
        Some(Value::String(s)) if s == "source" => {
            // The source's own links, in the direction leaving it.
            *from = from.or(Some(source));
            (0..links)
                .filter(|&l| {
                    net.link(l)
                        .is_some_and(|(a, b, _)| a == source || b == source)
                })
                .collect()
        }
        Some(Value::String(s)) => {
            let v: Vec<usize> = (0..links).filter(|&i| classes[i] == *s).collect();
            if v.is_empty() {
                let mut known: Vec<&str> = classes
                    .iter()
                    .map(String::as_str)
                    .filter(|c| !c.is_empty())
                    .collect();
                known.sort_unstable();
                known.dedup();
                return Err(lp.bad(
                    "links",
                    &format!(
                        "\"all\", \"source\", a link class ({}) or a list of link indices",
                        known.join(", ")
                    ),
                ));
            }
            v
        }
        Some(Value::Array(a)) => indices(lp, "links", a, links, "link indices")?,
        Some(_) => {
            return Err(lp.bad(
                "links",
                "\"all\", \"source\", a link class or a list of link indices",
            ))
        }
    })
}

/// The integers of the array `a` under `key`, each below `n`; `what` names them in the error.
fn indices(
    lp: &Params,
    key: &str,
    a: &[Value],
    n: usize,
    what: &str,
) -> Result<Vec<usize>, ScenarioError> {
    a.iter()
        .map(|x| match x.as_integer() {
            Some(i) if i >= 0 && (i as usize) < n => Ok(i as usize),
            _ => Err(lp.bad(key, &format!("{what} in [0, {n})"))),
        })
        .collect()
}

/// The nodes of a `tx`/`rx`/`interface` rule.
fn node_selection(
    lp: &Params,
    source: NodeId,
    receivers: &[NodeId],
    n_nodes: usize,
) -> Result<Vec<NodeId>, ScenarioError> {
    Ok(match lp.table.get("nodes") {
        None => std::iter::once(source)
            .chain(receivers.iter().copied())
            .collect(),
        Some(Value::String(s)) => match s.as_str() {
            "all" | "members" => std::iter::once(source)
                .chain(receivers.iter().copied())
                .collect(),
            "receivers" => receivers.to_vec(),
            "source" => vec![source],
            _ => {
                return Err(lp.bad(
                    "nodes",
                    "\"members\", \"receivers\", \"source\" or a list of node ids",
                ))
            }
        },
        Some(Value::Array(a)) => indices(lp, "nodes", a, n_nodes, "node ids")?
            .into_iter()
            .map(|i| NodeId(i as u32))
            .collect(),
        Some(_) => {
            return Err(lp.bad(
                "nodes",
                "\"members\", \"receivers\", \"source\" or a list of node ids",
            ))
        }
    })
}
