//! What a sweep produces: per-run metric columns, `runs.csv` and `runs.jsonl`, and the
//! per-packet and per-loss records (`packets.csv`, `losses.csv`), written with the `csv`
//! crate.

use crate::sim::{LossRecord, PacketRecord, RecoveryRecord};
use rmcast_proto::{Dest, GroupId, NodeId};
use rmcast_wire::PacketClass;
use toml::Value;

/// A metric value.
#[derive(Debug, Clone, PartialEq)]
pub enum Metric {
    /// A count.
    U(u64),
    /// A real number (empty in CSV, null in JSON when not finite).
    F(f64),
    /// Text.
    S(String),
    /// A switch.
    B(bool),
}

impl Metric {
    /// The value as a CSV field (quoting, where needed, is the CSV writer's).
    pub fn csv(&self) -> String {
        match self {
            Metric::U(v) => v.to_string(),
            Metric::F(v) => {
                if v.is_finite() {
                    v.to_string()
                } else {
                    String::new()
                }
            }
            Metric::S(s) => s.clone(),
            Metric::B(b) => b.to_string(),
        }
    }
    /// The value for `runs.jsonl`.
    pub fn json(&self) -> serde_json::Value {
        match self {
            Metric::U(v) => (*v).into(),
            Metric::F(v) => {
                serde_json::Number::from_f64(*v).map_or(serde_json::Value::Null, Into::into)
            }
            Metric::S(s) => s.clone().into(),
            Metric::B(b) => (*b).into(),
        }
    }
    pub(super) fn from_value(v: &Value) -> Metric {
        match v {
            Value::Integer(i) if *i >= 0 => Metric::U(*i as u64),
            Value::Integer(i) => Metric::F(*i as f64),
            Value::Float(f) => Metric::F(*f),
            Value::Boolean(b) => Metric::B(*b),
            Value::String(s) => Metric::S(s.clone()),
            other => Metric::S(other.to_string()),
        }
    }
}

/// Per-packet and per-loss records of a run, and each node's role.
#[derive(Debug, Clone, Default)]
pub struct Trace {
    /// Every packet originated during the run.
    pub packets: Vec<PacketRecord>,
    /// Every loss, with its cause.
    pub losses: Vec<LossRecord>,
    /// Every loss an agent detected, and when it delivered the packet.
    pub recoveries: Vec<RecoveryRecord>,
    /// Nodes in the network.
    pub nodes: usize,
    /// Every group and its members.
    pub groups: Vec<(GroupId, Vec<NodeId>)>,
}

/// One run's results.
#[derive(Debug, Clone)]
pub struct RunResult {
    /// The run's position in the sweep.
    pub index: usize,
    /// Swept keys and their values, then every metric, as (column, value).
    pub columns: Vec<(String, Metric)>,
    /// Its packet and loss records, when asked for.
    pub trace: Option<Trace>,
    /// The run sampled every `[metrics] sample_ms` (empty without it).
    pub samples: Vec<Sample>,
}

/// The state of a run at one instant (`[metrics] sample_ms`), after every event up to it:
/// cumulative counts, so a rate over an interval is the difference of two samples.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Simulated time, seconds.
    pub time_s: f64,
    /// The source's [`rmcast_proto::Gauge::Rate`], bytes per second (e.g. `pgm` with
    /// `tfmcc`: the TFMCC sending rate; `None` for an agent without one).
    pub source_rate: Option<f64>,
    /// Bytes of every datagram the source sent.
    pub source_sent_bytes: u64,
    /// The fewest bytes any receiver received (every datagram handed to its agent).
    pub received_bytes_min: u64,
    /// The fewest messages any receiver delivered.
    pub delivered_min: u64,
    /// The lowest [`rmcast_proto::Gauge::Rate`] of the receivers (TFMCC: the rate the
    /// slowest receiver computed; `None` while none has one, or an infinite one before loss).
    pub receiver_rate_min: Option<f64>,
    /// Packets dropped by full link queues.
    pub lost_queue: u64,
    /// The `[cross]` flow: bytes its sender sent and its sink received.
    pub cross: Option<(u64, u64)>,
}

/// Columns of `series.csv`.
pub const SERIES_COLUMNS: [&str; 10] = [
    "run",
    "time_s",
    "source_rate_bytes_per_s",
    "source_sent_bytes",
    "received_bytes_min",
    "delivered_min",
    "receiver_rate_min_bytes_per_s",
    "lost_queue",
    "cross_sent_bytes",
    "cross_received_bytes",
];

/// `series.csv`: every sample of every run (empty fields for what a run does not have).
pub fn series_csv(results: &[RunResult]) -> String {
    let opt = |v: Option<f64>| v.map_or(String::new(), |x| Metric::F(x).csv());
    csv_text(
        &SERIES_COLUMNS,
        results.iter().flat_map(|r| {
            r.samples.iter().map(move |x| {
                let (cs, cr) = match x.cross {
                    Some((s, r)) => (s.to_string(), r.to_string()),
                    None => (String::new(), String::new()),
                };
                vec![
                    r.index.to_string(),
                    x.time_s.to_string(),
                    opt(x.source_rate),
                    x.source_sent_bytes.to_string(),
                    x.received_bytes_min.to_string(),
                    x.delivered_min.to_string(),
                    opt(x.receiver_rate_min),
                    x.lost_queue.to_string(),
                    cs,
                    cr,
                ]
            })
        }),
    )
}

impl RunResult {
    /// The value of column `name` (a swept key or a metric), if the run has it.
    pub fn column(&self, name: &str) -> Option<&Metric> {
        self.columns.iter().find(|(c, _)| c == name).map(|(_, v)| v)
    }
}

/// Columns in first-seen order over all runs (runs may differ, e.g. in loss causes).
pub fn columns(results: &[RunResult]) -> Vec<String> {
    let mut cols: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for r in results {
        for (c, _) in &r.columns {
            if seen.insert(c.clone()) {
                cols.push(c.clone());
            }
        }
    }
    cols
}

/// A CSV document of `header` and `rows`, fields quoted only where needed (a comma, a
/// quote or a line break in them), lines ended by `\n`.
fn csv_text<R, F>(header: &[&str], rows: R) -> String
where
    R: IntoIterator<Item = Vec<F>>,
    F: AsRef<[u8]>,
{
    let mut w = csv::WriterBuilder::new()
        .terminator(csv::Terminator::Any(b'\n'))
        .quote_style(csv::QuoteStyle::Necessary)
        .from_writer(Vec::new());
    // Writing to a Vec cannot fail, and every row has the header's length.
    let _ = w.write_record(header);
    for row in rows {
        let _ = w.write_record(row);
    }
    let bytes = w.into_inner().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

/// `runs.csv`: a header and one row per run.
pub fn to_csv(results: &[RunResult]) -> String {
    let cols = columns(results);
    let header: Vec<&str> = cols.iter().map(String::as_str).collect();
    csv_text(
        &header,
        results.iter().map(|r| {
            cols.iter()
                .map(|c| {
                    r.columns
                        .iter()
                        .find(|(k, _)| k == c)
                        .map_or(String::new(), |(_, v)| v.csv())
                })
                .collect::<Vec<_>>()
        }),
    )
}

/// The `--records` files of a sweep, as CSV text.
#[derive(Debug, Clone)]
pub struct Records {
    /// `packets.csv`: every packet originated, one row each.
    pub packets: String,
    /// `losses.csv`: every packet lost, with its cause.
    pub losses: String,
    /// `recoveries.csv`: every loss an agent detected, when, and when it delivered the packet
    /// (`delivered_s` empty if it had not by the end of the run).
    pub recoveries: String,
}

impl Records {
    /// (file name, text) of each file.
    pub fn files(&self) -> [(&'static str, &str); 3] {
        [
            ("packets.csv", &self.packets),
            ("losses.csv", &self.losses),
            ("recoveries.csv", &self.recoveries),
        ]
    }
}

/// The `--records` files: every traced packet, loss and recovery of every run.
pub fn records_csv(results: &[RunResult]) -> Records {
    let traces = || {
        results
            .iter()
            .filter_map(|r| r.trace.as_ref().map(|t| (r.index, t)))
    };
    let packets = csv_text(
        &["run", "id", "time_s", "src", "dest", "class", "len"],
        traces().flat_map(|(run, t)| {
            t.packets.iter().map(move |x| {
                let dest = match x.dest {
                    Dest::Node(n) => format!("node{}", n.0),
                    Dest::Group(g) => format!("group{}", g.0),
                };
                let class = match x.class {
                    Some(PacketClass::OriginalData) => "data",
                    Some(PacketClass::RepairData) => "repair",
                    Some(PacketClass::Control) => "control",
                    None => "other",
                };
                vec![
                    run.to_string(),
                    x.id.to_string(),
                    x.time.as_secs_f64().to_string(),
                    x.src.0.to_string(),
                    dest,
                    class.to_string(),
                    x.payload.len().to_string(),
                ]
            })
        }),
    );
    let losses = csv_text(
        &["run", "id", "time_s", "node", "cause"],
        traces().flat_map(|(run, t)| {
            t.losses.iter().map(move |x| {
                vec![
                    run.to_string(),
                    x.id.to_string(),
                    x.time.as_secs_f64().to_string(),
                    x.node.0.to_string(),
                    x.cause.clone(),
                ]
            })
        }),
    );
    let recoveries = csv_text(
        &["run", "node", "seq", "detected_s", "delivered_s"],
        traces().flat_map(|(run, t)| {
            t.recoveries.iter().map(move |x| {
                vec![
                    run.to_string(),
                    x.node.0.to_string(),
                    x.seq.to_string(),
                    x.detected.as_secs_f64().to_string(),
                    x.delivered
                        .map_or(String::new(), |d| d.as_secs_f64().to_string()),
                ]
            })
        }),
    );
    Records {
        packets,
        losses,
        recoveries,
    }
}

/// `runs.jsonl`: one JSON object per run.
pub fn to_jsonl(results: &[RunResult]) -> String {
    let mut s = String::new();
    for r in results {
        let mut m = serde_json::Map::new();
        for (k, v) in &r.columns {
            m.insert(k.clone(), v.json());
        }
        s.push_str(&serde_json::Value::Object(m).to_string());
        s.push('\n');
    }
    s
}
