//! The protocol table as a document (feature `serde`): the one shape `rmcast protocols --json`
//! prints and the Python package's `rmcast.protocols()` reads. Each protocol is
//! `{name, seed, summary, sockets, params}`; each parameter is `{key, scenario, flag, unit,
//! range, default, on_sockets, help}` with the flag as typed (`--window`), the range as text
//! (`1..=65535`, `[0, 1]`, `true|false`, `a|b`), a default as a number, switch or word, or
//! `{"derived": why}` where it has no fixed value, and `on_sockets` as `{default, why}` where
//! the socket driver's default differs.

use super::{Param, ProtocolSpec, Range, Value};
use serde::ser::{Serialize, SerializeMap, SerializeStruct, Serializer};

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Value::Int(v) => s.serialize_u64(v),
            Value::Real(v) => s.serialize_f64(v),
            Value::Bool(v) => s.serialize_bool(v),
            Value::Word(w) => s.serialize_str(w),
            Value::Derived(why) => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_entry("derived", why)?;
                m.end()
            }
        }
    }
}

impl Serialize for Range {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A socket default and why it differs.
struct OnSockets(Value, &'static str);

impl Serialize for OnSockets {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("OnSockets", 2)?;
        m.serialize_field("default", &self.0)?;
        m.serialize_field("why", self.1)?;
        m.end()
    }
}

impl Serialize for Param {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("Param", 8)?;
        m.serialize_field("key", self.key)?;
        m.serialize_field("scenario", &self.scenario)?;
        m.serialize_field("flag", &self.flag.map(|f| format!("--{f}")))?;
        m.serialize_field("unit", self.unit)?;
        m.serialize_field("range", &self.range)?;
        m.serialize_field("default", &self.default)?;
        m.serialize_field(
            "on_sockets",
            &self.on_sockets.map(|(v, why)| OnSockets(v, why)),
        )?;
        m.serialize_field("help", self.help)?;
        m.end()
    }
}

impl Serialize for ProtocolSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_struct("ProtocolSpec", 5)?;
        m.serialize_field("name", self.name)?;
        m.serialize_field("seed", self.seed)?;
        m.serialize_field("summary", self.summary)?;
        m.serialize_field("sockets", &self.sockets)?;
        m.serialize_field("params", self.params)?;
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use crate::protocols::{lookup, PROTOCOLS};

    #[test]
    fn every_protocol_and_parameter_is_in_the_document() {
        let doc = serde_json::to_value(PROTOCOLS).unwrap();
        let items = doc.as_array().unwrap();
        assert_eq!(items.len(), PROTOCOLS.len());
        for (item, p) in items.iter().zip(PROTOCOLS) {
            assert_eq!(item["name"], p.name);
            assert_eq!(item["sockets"], p.sockets);
            let params = item["params"].as_array().unwrap();
            assert_eq!(params.len(), p.params.len(), "{}", p.name);
            for (j, q) in params.iter().zip(p.params) {
                assert_eq!(j["key"], q.key);
                assert_eq!(j["range"], q.range.to_string());
                assert_eq!(j["help"], q.help);
            }
        }
    }

    #[test]
    fn a_parameter_reads_as_documented() {
        let prmp = lookup("prmp").unwrap();
        let rate = prmp.param("response_rate").unwrap();
        let j = serde_json::to_value(rate).unwrap();
        assert_eq!(
            j["default"],
            serde_json::json!(rate.default.real().unwrap() as u64)
        );
        assert_eq!(
            j["flag"],
            serde_json::json!(rate.flag.map(|f| format!("--{f}")))
        );
        assert!(j["on_sockets"].is_null() == rate.on_sockets.is_none());
        let derived = PROTOCOLS
            .iter()
            .flat_map(|p| p.params)
            .find(|q| matches!(q.default, crate::spec::Value::Derived(_)))
            .expect("some parameter has a derived default");
        let j = serde_json::to_value(derived).unwrap();
        assert!(j["default"]["derived"].is_string(), "{j}");
    }
}
