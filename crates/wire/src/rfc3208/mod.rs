//! PGM packets as RFC 3208 puts them on the wire (issue 62): the codec only, self-contained.
//!
//! rmcast's own `pgm` family ([`crate::pgm`]) follows RFC 3208's behaviour inside rmcast's
//! 20-byte header; this module reads and writes the standard's bytes, so that a PGM host
//! (OpenPGM, ZeroMQ's `epgm://`) and Wireshark's own PGM dissector can read them. Nothing
//! here knows about the rest of the crate's families; `docs/pgm-rfc3208.md` says how
//! rmcast's messages map onto these packets.
//!
//! ## Common header (RFC 3208 §8, 16 bytes, network byte order)
//!
//! ```text
//!  0                   1                   2                   3
//!  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |         Source Port           |       Destination Port        |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |      Type     |    Options    |           Checksum            |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! |                        Global Source ID                   ... |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! | ...    Global Source ID       |           TSDU Length         |
//! +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
//! | Type specific data ...
//! ```
//!
//! The transport session identifier is the GSI and the source's port ([`Tsi`]). Packets that
//! travel downstream (SPM, ODATA, RDATA, NCF) carry the source's port as their source port;
//! packets that travel upstream (NAK, NNAK, SPMR) swap the ports, so their *destination*
//! port is the TSI's ([`Packet::tsi`]). The TSDU length counts the data bytes of an ODATA or
//! RDATA (after the options) and is 0 for every other type.
//!
//! The checksum is the Internet checksum (1's complement of the 1's complement sum) of the
//! whole PGM packet — header, body, options and data — with the checksum field 0, and no
//! pseudo header; a sum that comes out 0 is sent as `0xffff`, and 0 on the wire means "no
//! checksum" ([`checksum`]). The decoder checks a non-zero checksum and accepts 0 as the RFC
//! does; OpenPGM refuses ODATA and RDATA without one, so the encoder always writes one
//! unless told not to ([`Checksum::None`]).
//!
//! ## Decoding
//!
//! [`Packet::decode`] never panics and allocates only for options (a vector no longer than
//! the bytes it came from justifies). It is strict about lengths: an ODATA/RDATA's data is
//! exactly its TSDU length, and the other types carry nothing after their options. POLL,
//! POLR and PGMCC's ACK are not decoded ([`Error::Type`]). Options: see [`options`].
//!
//! ## UDP encapsulation
//!
//! See [`udp`]: the PGM packet is the whole UDP payload, as OpenPGM sends it.

pub mod options;
pub mod udp;

#[cfg(test)]
mod tests;

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

pub use options::Opt;

/// Length of the common header.
pub const HEADER_LEN: usize = 16;

/// Type numbers (RFC 3208 §8 and §13.6; the high nibble, the version, is 0).
pub mod kind {
    /// Source path message.
    pub const SPM: u8 = 0x00;
    /// Original data.
    pub const ODATA: u8 = 0x04;
    /// Repair data.
    pub const RDATA: u8 = 0x05;
    /// Negative acknowledgement.
    pub const NAK: u8 = 0x08;
    /// Null NAK (a DLR's).
    pub const NNAK: u8 = 0x09;
    /// NAK confirmation.
    pub const NCF: u8 = 0x0a;
    /// SPM request.
    pub const SPMR: u8 = 0x0c;
}

/// Bits of the header's Options field (RFC 3208 §8).
pub mod opt_bits {
    /// Option extensions are present (the first is OPT_LENGTH).
    pub const PRESENT: u8 = 0x01;
    /// Network-significant options are present.
    pub const NETWORK: u8 = 0x02;
    /// Variable-length parity packets (OPT_VAR_PKTLEN).
    pub const VAR_PKTLEN: u8 = 0x40;
    /// A parity packet (OPT_PARITY): ODATA/RDATA carrying FEC parity.
    pub const PARITY: u8 = 0x80;
}

/// Address family indicators of an NLA (RFC 1700, as RFC 3208 uses them).
pub mod afi {
    /// IPv4.
    pub const IPV4: u16 = 1;
    /// IPv6.
    pub const IPV6: u16 = 2;
}

/// Why a datagram is not an RFC 3208 packet this codec reads, or a packet cannot be written.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// The datagram ends inside a field.
    #[error("truncated {what}: needs {needed} bytes, {got} left")]
    Truncated {
        /// The field being read.
        what: &'static str,
        /// Bytes it needs.
        needed: usize,
        /// Bytes left.
        got: usize,
    },
    /// A type this codec does not read (POLL, POLR, ACK) or that RFC 3208 does not define.
    #[error("unsupported PGM type {0:#04x}")]
    Type(u8),
    /// An NLA address family other than IPv4 (1) and IPv6 (2).
    #[error("unknown NLA address family {0}")]
    Afi(u16),
    /// The checksum does not match the packet.
    #[error("checksum {got:#06x}, computed {want:#06x}")]
    Checksum {
        /// The checksum on the wire.
        got: u16,
        /// The checksum of the bytes.
        want: u16,
    },
    /// The option extensions break RFC 3208 §9's rules.
    #[error("malformed options: {0}")]
    Options(&'static str),
    /// ODATA/RDATA data whose length is not the TSDU length.
    #[error("TSDU length {tsdu}, but {data} bytes of data")]
    Tsdu {
        /// The header's TSDU length.
        tsdu: u16,
        /// Bytes after the options.
        data: usize,
    },
    /// A non-data packet with a TSDU length or bytes after its options.
    #[error("{0} bytes after a non-data packet's options, or a non-zero TSDU length")]
    Trailing(usize),
    /// The packet cannot be written (a field too long for its length field).
    #[error("cannot encode: {0}")]
    Encode(&'static str),
}

/// A global source identifier: 6 bytes, unique per source host (OpenPGM derives it from the
/// host name or address).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Gsi(pub [u8; 6]);

/// A transport session identifier: GSI and the source's data-source port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Tsi {
    /// The source's GSI.
    pub gsi: Gsi,
    /// The source port of the source's downstream packets.
    pub sport: u16,
}

impl fmt::Display for Tsi {
    /// As OpenPGM prints it: the GSI's bytes in decimal, then the port, dot-separated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let g = self.gsi.0;
        write!(
            f,
            "{}.{}.{}.{}.{}.{}.{}",
            g[0], g[1], g[2], g[3], g[4], g[5], self.sport
        )
    }
}

/// The header's option bits this codec keeps; `PRESENT` follows from the options themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Flags {
    /// OPT_NETWORK: network-significant options present (OpenPGM sets it with
    /// OPT_PARITY_PRM).
    pub network: bool,
    /// OPT_VAR_PKTLEN.
    pub var_pktlen: bool,
    /// OPT_PARITY: the data is a parity packet.
    pub parity: bool,
}

impl Flags {
    fn bits(self) -> u8 {
        (if self.network { opt_bits::NETWORK } else { 0 })
            | (if self.var_pktlen {
                opt_bits::VAR_PKTLEN
            } else {
                0
            })
            | (if self.parity { opt_bits::PARITY } else { 0 })
    }

    fn from_bits(b: u8) -> Self {
        Flags {
            network: b & opt_bits::NETWORK != 0,
            var_pktlen: b & opt_bits::VAR_PKTLEN != 0,
            parity: b & opt_bits::PARITY != 0,
        }
    }
}

/// The body of an ODATA or RDATA (RFC 3208 §8.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Data<'a> {
    /// Data packet sequence number.
    pub sqn: u32,
    /// The trailing edge of the source's transmit window.
    pub trail: u32,
    /// The TSDU (borrowed from the datagram).
    pub payload: &'a [u8],
}

/// The body of a NAK, NNAK or NCF (RFC 3208 §8.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NakBody {
    /// The requested sequence number (more in OPT_NAK_LIST).
    pub sqn: u32,
    /// The source's unicast address.
    pub source: IpAddr,
    /// The multicast group's address.
    pub group: IpAddr,
}

/// The type-specific part of a packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Body<'a> {
    /// SPM (§8.1): the source's path message with its transmit window's edges.
    Spm {
        /// The SPM's own sequence number.
        sqn: u32,
        /// Trailing edge: the oldest data sequence number the source can repair.
        trail: u32,
        /// Leading edge: the newest data sequence number sent.
        lead: u32,
        /// The path NLA: the address of the last network element (or the source).
        path: IpAddr,
    },
    /// ODATA: original data.
    Odata(Data<'a>),
    /// RDATA: repair data.
    Rdata(Data<'a>),
    /// NAK: a receiver's request for repair.
    Nak(NakBody),
    /// NNAK: a null NAK (a designated local repairer's report to the source).
    Nnak(NakBody),
    /// NCF: a NAK confirmation.
    Ncf(NakBody),
    /// SPMR (§13.6): a request for an SPM; no body.
    Spmr,
}

impl Body<'_> {
    /// The type number on the wire.
    pub fn kind(&self) -> u8 {
        match self {
            Body::Spm { .. } => kind::SPM,
            Body::Odata(_) => kind::ODATA,
            Body::Rdata(_) => kind::RDATA,
            Body::Nak(_) => kind::NAK,
            Body::Nnak(_) => kind::NNAK,
            Body::Ncf(_) => kind::NCF,
            Body::Spmr => kind::SPMR,
        }
    }

    /// Whether packets of this type travel upstream (receiver to source), with the ports
    /// swapped.
    pub fn upstream(&self) -> bool {
        matches!(self, Body::Nak(_) | Body::Nnak(_) | Body::Spmr)
    }

    fn payload(&self) -> &[u8] {
        match self {
            Body::Odata(d) | Body::Rdata(d) => d.payload,
            _ => &[],
        }
    }
}

/// Whether the encoder computes a checksum.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksum {
    /// Compute it (what OpenPGM needs for ODATA and RDATA).
    Compute,
    /// Leave the field 0 ("no checksum", allowed by the RFC).
    None,
}

/// One PGM packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<'a> {
    /// Source port (the TSI's port downstream, the data's destination port upstream).
    pub sport: u16,
    /// Destination port.
    pub dport: u16,
    /// The source's GSI (upstream packets carry the GSI of the source they address).
    pub gsi: Gsi,
    /// The header's option bits other than OPT_PRESENT.
    pub flags: Flags,
    /// The type-specific body.
    pub body: Body<'a>,
    /// Option extensions, in wire order, without the leading OPT_LENGTH (the encoder
    /// writes it when there is any option).
    pub options: Vec<Opt<'a>>,
}

/// The Internet checksum of `bytes` as PGM sends it: 0 becomes `0xffff` (0 means none).
pub fn checksum(bytes: &[u8]) -> u16 {
    ones_complement(bytes, None)
}

/// The 1's complement of the 1's complement sum of `bytes`' 16-bit words (an odd last byte
/// padded with 0), leaving out word `skip`; 0 becomes `0xffff`.
fn ones_complement(bytes: &[u8], skip: Option<usize>) -> u16 {
    let mut sum: u64 = 0;
    for (i, c) in bytes.chunks(2).enumerate() {
        if Some(i) == skip {
            continue;
        }
        sum += u64::from(match c {
            [a, b] => u16::from_be_bytes([*a, *b]),
            [a] => u16::from_be_bytes([*a, 0]),
            _ => 0,
        });
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    match !(sum as u16) {
        0 => 0xffff,
        c => c,
    }
}

/// A bounds-checked reader; every read past the end is [`Error::Truncated`].
pub(crate) struct Rd<'a> {
    buf: &'a [u8],
}

impl<'a> Rd<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Rd { buf }
    }

    pub(crate) fn rest(&self) -> &'a [u8] {
        self.buf
    }

    pub(crate) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], Error> {
        if n > self.buf.len() {
            return Err(Error::Truncated {
                what,
                needed: n,
                got: self.buf.len(),
            });
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Ok(a)
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], Error> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, what)?);
        Ok(a)
    }

    pub(crate) fn u8(&mut self, what: &'static str) -> Result<u8, Error> {
        Ok(self.array::<1>(what)?[0])
    }

    pub(crate) fn u16(&mut self, what: &'static str) -> Result<u16, Error> {
        Ok(u16::from_be_bytes(self.array(what)?))
    }

    pub(crate) fn u32(&mut self, what: &'static str) -> Result<u32, Error> {
        Ok(u32::from_be_bytes(self.array(what)?))
    }

    /// An NLA: AFI (16 bits), reserved (16 bits), then 4 or 16 address bytes.
    fn nla(&mut self, what: &'static str) -> Result<IpAddr, Error> {
        let afi = self.u16(what)?;
        let _reserved = self.u16(what)?;
        match afi {
            afi::IPV4 => Ok(IpAddr::V4(Ipv4Addr::from(self.array::<4>(what)?))),
            afi::IPV6 => Ok(IpAddr::V6(Ipv6Addr::from(self.array::<16>(what)?))),
            other => Err(Error::Afi(other)),
        }
    }
}

fn put_nla(out: &mut Vec<u8>, a: &IpAddr) {
    match a {
        IpAddr::V4(v4) => {
            out.extend_from_slice(&afi::IPV4.to_be_bytes());
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(&v4.octets());
        }
        IpAddr::V6(v6) => {
            out.extend_from_slice(&afi::IPV6.to_be_bytes());
            out.extend_from_slice(&[0, 0]);
            out.extend_from_slice(&v6.octets());
        }
    }
}

fn read_nak(r: &mut Rd<'_>) -> Result<NakBody, Error> {
    Ok(NakBody {
        sqn: r.u32("NAK sequence number")?,
        source: r.nla("NAK source NLA")?,
        group: r.nla("NAK group NLA")?,
    })
}

fn put_nak(out: &mut Vec<u8>, n: &NakBody) {
    out.extend_from_slice(&n.sqn.to_be_bytes());
    put_nla(out, &n.source);
    put_nla(out, &n.group);
}

impl<'a> Packet<'a> {
    /// The transport session this packet belongs to: the GSI with the source port of a
    /// downstream packet or the destination port of an upstream one.
    pub fn tsi(&self) -> Tsi {
        Tsi {
            gsi: self.gsi,
            sport: if self.body.upstream() {
                self.dport
            } else {
                self.sport
            },
        }
    }

    /// Read one PGM packet (a whole UDP payload, or an IP payload without its IP header).
    /// Never panics.
    pub fn decode(buf: &'a [u8]) -> Result<Self, Error> {
        let mut r = Rd::new(buf);
        let sport = r.u16("header")?;
        let dport = r.u16("header")?;
        let ty = r.u8("header")?;
        let bits = r.u8("header")?;
        let sum = r.u16("header")?;
        let gsi = Gsi(r.array("header")?);
        let tsdu = r.u16("header")?;
        if sum != 0 {
            let want = checksum_without_field(buf);
            if want != sum {
                return Err(Error::Checksum { got: sum, want });
            }
        }
        let fixed = match ty {
            kind::SPM => Some(Body::Spm {
                sqn: r.u32("SPM")?,
                trail: r.u32("SPM")?,
                lead: r.u32("SPM")?,
                path: r.nla("SPM path NLA")?,
            }),
            kind::ODATA | kind::RDATA => None,
            kind::NAK => Some(Body::Nak(read_nak(&mut r)?)),
            kind::NNAK => Some(Body::Nnak(read_nak(&mut r)?)),
            kind::NCF => Some(Body::Ncf(read_nak(&mut r)?)),
            kind::SPMR => Some(Body::Spmr),
            other => return Err(Error::Type(other)),
        };
        let (data_sqn, data_trail) = match fixed {
            None => (r.u32("data header")?, r.u32("data header")?),
            Some(_) => (0, 0),
        };
        let options = if bits & opt_bits::PRESENT != 0 {
            options::decode(&mut r)?
        } else {
            Vec::new()
        };
        let rest = r.rest();
        let body = match fixed {
            Some(b) => {
                if tsdu != 0 || !rest.is_empty() {
                    return Err(Error::Trailing(rest.len()));
                }
                b
            }
            None => {
                if usize::from(tsdu) != rest.len() {
                    return Err(Error::Tsdu {
                        tsdu,
                        data: rest.len(),
                    });
                }
                let d = Data {
                    sqn: data_sqn,
                    trail: data_trail,
                    payload: rest,
                };
                if ty == kind::ODATA {
                    Body::Odata(d)
                } else {
                    Body::Rdata(d)
                }
            }
        };
        Ok(Packet {
            sport,
            dport,
            gsi,
            flags: Flags::from_bits(bits),
            body,
            options,
        })
    }

    /// Append the packet to `out` with its checksum; returns its length.
    pub fn encode(&self, out: &mut Vec<u8>) -> Result<usize, Error> {
        self.encode_with(out, Checksum::Compute)
    }

    /// Append the packet to `out`, with or without a checksum; returns its length. On an
    /// error `out` is left as it was.
    pub fn encode_with(&self, out: &mut Vec<u8>, sum: Checksum) -> Result<usize, Error> {
        let payload = self.body.payload();
        let tsdu = u16::try_from(payload.len())
            .map_err(|_| Error::Encode("a TSDU longer than 65535 bytes"))?;
        let start = out.len();
        let present = if self.options.is_empty() {
            0
        } else {
            opt_bits::PRESENT
        };
        out.extend_from_slice(&self.sport.to_be_bytes());
        out.extend_from_slice(&self.dport.to_be_bytes());
        out.push(self.body.kind());
        out.push(self.flags.bits() | present);
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&self.gsi.0);
        out.extend_from_slice(&tsdu.to_be_bytes());
        match &self.body {
            Body::Spm {
                sqn,
                trail,
                lead,
                path,
            } => {
                for v in [sqn, trail, lead] {
                    out.extend_from_slice(&v.to_be_bytes());
                }
                put_nla(out, path);
            }
            Body::Odata(d) | Body::Rdata(d) => {
                out.extend_from_slice(&d.sqn.to_be_bytes());
                out.extend_from_slice(&d.trail.to_be_bytes());
            }
            Body::Nak(n) | Body::Nnak(n) | Body::Ncf(n) => put_nak(out, n),
            Body::Spmr => {}
        }
        if let Err(e) = options::encode(&self.options, out) {
            out.truncate(start);
            return Err(e);
        }
        out.extend_from_slice(payload);
        if sum == Checksum::Compute {
            let c = checksum(out.get(start..).unwrap_or_default());
            if let Some(field) = out.get_mut(start + 6..start + 8) {
                field.copy_from_slice(&c.to_be_bytes());
            }
        }
        Ok(out.len() - start)
    }

    /// The packet's bytes, with its checksum.
    pub fn to_vec(&self) -> Result<Vec<u8>, Error> {
        let mut v = Vec::new();
        self.encode(&mut v)?;
        Ok(v)
    }
}

/// The checksum of a packet computed with its checksum field (bytes 6 and 7, word 3) taken
/// as 0.
fn checksum_without_field(buf: &[u8]) -> u16 {
    ones_complement(buf, Some(3))
}
