//! The codec: encode and decode of a data packet and a small control packet.
//! `cargo bench -p rmcast-wire` (not run in CI; clippy --all-targets compiles it).

use criterion::{
    black_box, criterion_group, criterion_main, measurement::WallTime, BenchmarkGroup, Criterion,
    Throughput,
};
use rmcast_wire::{pgm, srm, Envelope, Message, Packet};

/// `encode_NAME` and `decode_NAME`: `msg` with `env` into a reused buffer, and back.
fn encode_and_decode(
    g: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    env: Envelope,
    msg: &Message<'_>,
) {
    let bytes = Packet::to_vec(env, msg).unwrap();
    let mut buf = Vec::with_capacity(2048);
    g.bench_function(format!("encode_{name}"), |b| {
        b.iter(|| {
            buf.clear();
            Packet::encode(env, black_box(msg), &mut buf).unwrap();
            black_box(buf.len())
        })
    });
    g.bench_function(format!("decode_{name}"), |b| {
        b.iter(|| black_box(Packet::decode(black_box(&bytes)).is_ok()))
    });
}

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

    let mut g = c.benchmark_group("codec");
    g.throughput(Throughput::Bytes(Packet::encoded_len(&data) as u64));
    encode_and_decode(&mut g, "srm_data_1000B", env, &data);
    g.throughput(Throughput::Elements(1));
    encode_and_decode(&mut g, "pgm_nak", env, &nak);
    g.finish();
}

criterion_group!(benches, codec);
criterion_main!(benches);
