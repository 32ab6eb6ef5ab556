//! Sample messages: one of every kind of every family (two or three of the kinds whose layout
//! varies), each with the bytes it encodes to. Each family writes its own beside its
//! `messages!` declaration (`saw::samples`, …); [`Family::samples`] reaches them through the
//! family table, so a new family adds its samples in its own module and nothing here. They
//! are the wire crate's golden-bytes and mutation tests (`tests/samples.rs`, `tests/fuzz.rs`),
//! the Wireshark dissector's test in `rmcast`, and each protocol's sample messages
//! (`rmcast_proto::protocols::ProtocolDef::samples`).
//!
//! The bytes of the families declared before commit 69c936e were produced by the hand-written
//! encoders that the `messages!` declarations replaced: encoding must give exactly these
//! bytes, and decoding them must give the message back.

use crate::{Envelope, Family, Message, PacketClass, FLAG_RETRANSMISSION};

/// The application data of the samples that carry some.
pub const P: &[u8] = &[0xaa, 0xbb, 0xcc];

/// The envelope of the samples sent for the first time.
pub const ENV: Envelope = Envelope {
    session: 0x0102_0304,
    source: 0x0a0b_0c0d,
    flags: 0,
};

/// The envelope of the samples that are retransmissions.
pub const RX: Envelope = Envelope {
    flags: FLAG_RETRANSMISSION,
    ..ENV
};

/// One sample message of a family (`M`: the family's message type, or [`Message`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample<M> {
    /// The envelope it is sent with.
    pub env: Envelope,
    /// The message.
    pub message: M,
    /// Whether its kind carries application data, as its family's documentation says (a
    /// statement of the sample's author, checked against the `messages!` declaration's
    /// `data` list by the golden-bytes test).
    pub data: bool,
    /// The datagram it encodes to, in hexadecimal: the header, a space, the body.
    pub bytes: &'static str,
}

impl<M> Sample<M> {
    /// A sample of a kind that carries application data.
    pub fn data(env: Envelope, message: M, bytes: &'static str) -> Self {
        Sample {
            env,
            message,
            data: true,
            bytes,
        }
    }

    /// A sample of a control kind (feedback, status, session).
    pub fn control(env: Envelope, message: M, bytes: &'static str) -> Self {
        Sample {
            env,
            message,
            data: false,
            bytes,
        }
    }

    /// The same sample as a message of the family enum.
    pub fn widen<'a>(self) -> Sample<Message<'a>>
    where
        M: Into<Message<'a>>,
    {
        Sample {
            env: self.env,
            message: self.message.into(),
            data: self.data,
            bytes: self.bytes,
        }
    }

    /// What a protocol-agnostic observer must call it ([`crate::Header::class`]) when sent
    /// with `flags`.
    pub fn class(&self, flags: u8) -> PacketClass {
        match (self.data, flags & FLAG_RETRANSMISSION != 0) {
            (false, _) => PacketClass::Control,
            (true, false) => PacketClass::OriginalData,
            (true, true) => PacketClass::RepairData,
        }
    }

    /// Its datagram's bytes ([`Sample::bytes`] read as hexadecimal; `None` if they are not).
    pub fn datagram(&self) -> Option<Vec<u8>> {
        let hex: Vec<u8> = self.bytes.bytes().filter(|b| *b != b' ').collect();
        hex.chunks(2)
            .map(|pair| {
                let pair = core::str::from_utf8(pair).ok()?;
                u8::from_str_radix(pair, 16).ok()
            })
            .collect()
    }
}

/// Every family's samples, in family order.
pub fn all() -> Vec<Sample<Message<'static>>> {
    Family::ALL.iter().flat_map(|f| f.samples()).collect()
}

/// One message of every kind of every family (two or three of the kinds whose layout
/// varies), with the envelope it is sent with.
pub fn every_kind() -> Vec<(Envelope, Message<'static>)> {
    all().into_iter().map(|s| (s.env, s.message)).collect()
}

/// `bytes` for as long as the program runs, for a sample's borrowed list. Each distinct
/// content is leaked once: the samples are built anew on every call, their buffers are not.
pub(crate) fn lasting(bytes: Vec<u8>) -> &'static [u8] {
    static HELD: std::sync::Mutex<std::collections::BTreeSet<&'static [u8]>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(b) = held.get(bytes.as_slice()) {
        return b;
    }
    let b: &'static [u8] = Vec::leak(bytes);
    held.insert(b);
    b
}

#[cfg(test)]
mod lasting_tests {
    #[test]
    fn the_same_content_is_held_once() {
        let a = super::lasting(vec![1, 2, 3]);
        let b = super::lasting(vec![1, 2, 3]);
        assert_eq!(a.as_ptr(), b.as_ptr());
        assert_ne!(super::lasting(vec![1, 2]).as_ptr(), a.as_ptr());
    }
}
