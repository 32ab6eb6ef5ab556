//! The codec: encode and decode of a data packet and a small control packet.
//! `cargo bench -p rmcast-wire` (not run in CI; clippy --all-targets compiles it).

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use rmcast_wire::{pgm, srm, Envelope, Message, Packet};

fn codec(c: &mut Criterion) {
    let env = Envelope {
        session: 1,
        source: 7,
        flags: 0,
    };
    let payload = vec![0xabu8; 1000];
    let data = Message::Srm(srm::Message::Data {
        seq: 12345,
        payload: &payload,
    });
    let nak = Message::Pgm(pgm::Message::Nak { seq: 99 });
    let data_bytes = Packet::to_vec(env, &data).unwrap();
    let nak_bytes = Packet::to_vec(env, &nak).unwrap();

    let mut g = c.benchmark_group("codec");
    g.throughput(Throughput::Bytes(data_bytes.len() as u64));
    let mut buf = Vec::with_capacity(2048);
    g.bench_function("encode_srm_data_1000B", |b| {
        b.iter(|| {
            buf.clear();
            Packet::encode(env, black_box(&data), &mut buf).unwrap();
            black_box(buf.len())
        })
    });
    g.bench_function("decode_srm_data_1000B", |b| {
        b.iter(|| black_box(Packet::decode(black_box(&data_bytes)).is_ok()))
    });
    g.throughput(Throughput::Elements(1));
    g.bench_function("encode_pgm_nak", |b| {
        b.iter(|| {
            buf.clear();
            Packet::encode(env, black_box(&nak), &mut buf).unwrap();
            black_box(buf.len())
        })
    });
    g.bench_function("decode_pgm_nak", |b| {
        b.iter(|| black_box(Packet::decode(black_box(&nak_bytes)).is_ok()))
    });
    g.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);
