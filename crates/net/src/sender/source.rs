//! The sender's source: files digested before the network is touched, and the producer
//! thread that frames files or standard input into application messages.

use super::{FileInfo, Source};
use crate::frame::Frame;
use crate::NetError;
use bytes::Bytes;
use mio::Waker;
use std::io::Read;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver as Chan};
use std::sync::Arc;

/// A file to send: its path, its announcement and its BLAKE3 digest.
pub(super) type SourceFile = (PathBuf, FileInfo, [u8; 32]);

/// Digest the files of `source` (none for standard input).
pub(super) fn read_files(source: &Source) -> Result<Vec<SourceFile>, NetError> {
    let mut files = Vec::new();
    if let Source::Stdin(name) = source {
        checked_name(name)?;
    }
    if let Source::Files(paths) = source {
        if paths.is_empty() {
            return Err(NetError::setup(
                "no files given: name files, or `-` for standard input",
            ));
        }
        for p in paths {
            let (size, digest) = digest_file(p)?;
            let info = FileInfo {
                name: file_name(p)?,
                size,
                blake3: blake3::Hash::from(digest).to_hex().to_string(),
                resumed_from: 0,
            };
            files.push((p.clone(), info, digest));
        }
    }
    Ok(files)
}

/// Restart mode ([`crate::resume`]): each file starts at the shortest prefix of it any
/// member holds from an earlier session (its HAVE names the file by size, name and digest),
/// 0 if some member holds none of it.
pub(super) fn resume_points(files: &mut [SourceFile], members: &[super::gather::Member]) {
    for (_, info, digest) in files.iter_mut() {
        let key = crate::resume::name_key(&info.name);
        let held = |m: &super::gather::Member| {
            m.held
                .iter()
                .filter(|h| h.size == info.size && h.name_key == key && h.digest == *digest)
                .map(|h| h.held.min(info.size))
                .max()
                .unwrap_or(0)
        };
        info.resumed_from = members.iter().map(held).min().unwrap_or(0);
        if info.resumed_from > 0 {
            tracing::info!(file = %info.name, from = info.resumed_from, "every receiver holds the start: resuming");
        }
    }
}

/// What the producer hands the transfer loop: messages (each with the file bytes it
/// carries), a block's worth at a time so that one channel send and one wake-up serve many
/// datagrams; or the error that ends the transfer.
pub(super) enum Chunk {
    Msgs(Vec<(Bytes, u64)>),
    Err(String),
}

/// Bytes read, hashed and framed at a time (whole messages).
const BLOCK: usize = 64 * 1024;

/// Compute the BLAKE3 digest and size of a file, refusing unreadable files with a clear line.
fn digest_file(p: &PathBuf) -> Result<(u64, [u8; 32]), NetError> {
    let mut f = std::fs::File::open(p).map_err(|e| {
        NetError::setup(format!(
            "cannot read {}: {e}; check the path and permissions",
            p.display()
        ))
    })?;
    let meta = f
        .metadata()
        .map_err(|e| NetError::setup(format!("cannot stat {}: {e}", p.display())))?;
    if !meta.is_file() {
        return Err(NetError::setup(format!(
            "{} is not a regular file: give files, or `-` for standard input",
            p.display()
        )));
    }
    let mut h = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut n = 0u64;
    loop {
        let k = f
            .read(&mut buf)
            .map_err(|e| NetError::io(format!("read {}", p.display()), e))?;
        if k == 0 {
            break;
        }
        h.update(buf.get(..k).unwrap_or_default());
        n += k as u64;
    }
    Ok((n, *h.finalize().as_bytes()))
}

fn file_name(p: &std::path::Path) -> Result<String, NetError> {
    let name = p
        .file_name()
        .and_then(|n| n.to_str())
        .map(str::to_string)
        .ok_or_else(|| {
            NetError::setup(format!(
                "{} has no usable UTF-8 file name: rename it",
                p.display()
            ))
        })?;
    checked_name(&name)?;
    Ok(name)
}

/// A name the receivers will accept (the same check they apply), or a setup error saying why.
pub(super) fn checked_name(name: &str) -> Result<(), NetError> {
    crate::outdir::check_name(name)
        .map_err(|e| NetError::setup(format!("the name `{name}` cannot be sent: {e}")))
}

/// Start the thread that frames the source into application messages.
pub(super) fn spawn_producer(
    source: Source,
    files: Vec<SourceFile>,
    chunk: usize,
    waker: Arc<Waker>,
) -> Chan<Chunk> {
    let (tx, rx) = sync_channel::<Chunk>(16);
    std::thread::spawn(move || {
        let send = |c: Chunk| -> bool {
            let ok = tx.send(c).is_ok();
            let _ = waker.wake();
            ok
        };
        let one = |m: Bytes| Chunk::Msgs(vec![(m, 0)]);
        // Read the source a block of whole messages at a time, hash the block (BLAKE3 is
        // fastest on large updates), frame its messages and hand them over together.
        let pump = |r: &mut dyn Read, h: &mut blake3::Hasher| -> Result<u64, String> {
            let block_len = (BLOCK / chunk).max(1) * chunk;
            let mut block = vec![0u8; block_len];
            let mut total = 0u64;
            loop {
                let mut filled = 0;
                // Fill the block unless the source pauses (a pipe's short read), once there
                // is half a message to send.
                while let Some(space) = block.get_mut(filled..).filter(|s| !s.is_empty()) {
                    let asked = space.len();
                    match r.read(space) {
                        Ok(0) => break,
                        Ok(k) => {
                            filled += k;
                            if k < asked && filled >= chunk / 2 {
                                break;
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => return Err(e.to_string()),
                    }
                }
                if filled == 0 {
                    return Ok(total);
                }
                let data = block.get(..filled).unwrap_or_default();
                h.update(data);
                total += filled as u64;
                let msgs = data
                    .chunks(chunk)
                    .map(|piece| (Frame::Data(piece).encode(), piece.len() as u64))
                    .collect();
                if !send(Chunk::Msgs(msgs)) {
                    return Err("stopped".into());
                }
            }
        };
        match source {
            Source::Files(_) => {
                let count = files.len() as u32;
                for (path, info, digest) in files {
                    let (from, size, name) = (info.resumed_from, info.size, &info.name);
                    let head = match from {
                        0 => Frame::File { size, digest, name },
                        from => Frame::Resume {
                            from,
                            size,
                            digest,
                            name,
                        },
                    };
                    if !send(one(head.encode())) {
                        return;
                    }
                    let mut f = match std::fs::File::open(&path) {
                        Ok(f) => f,
                        Err(e) => {
                            send(Chunk::Err(format!("open {}: {e}", path.display())));
                            return;
                        }
                    };
                    // What the receivers hold is hashed, not sent: the digest check below
                    // still covers the whole file.
                    let mut h = blake3::Hasher::new();
                    let skipped = std::io::copy(&mut (&mut f).take(from), &mut h);
                    match skipped
                        .map_err(|e| e.to_string())
                        .and_then(|k| pump(&mut f, &mut h).map(|n| n + k))
                    {
                        Ok(n) if n == info.size && *h.finalize().as_bytes() == digest => {}
                        Ok(_) => {
                            send(Chunk::Err(format!(
                                "{} changed while it was being sent",
                                path.display()
                            )));
                            return;
                        }
                        Err(e) => {
                            send(Chunk::Err(format!("read {}: {e}", path.display())));
                            return;
                        }
                    }
                }
                send(one(Frame::Finish { files: count }.encode()));
            }
            Source::Stdin(name) => {
                if !send(one(Frame::Stream { name: &name }.encode())) {
                    return;
                }
                let mut h = blake3::Hasher::new();
                let stdin = std::io::stdin();
                let mut lock = stdin.lock();
                match pump(&mut lock, &mut h) {
                    Ok(n) => {
                        let eos = Frame::EndOfStream {
                            size: n,
                            digest: *h.finalize().as_bytes(),
                        };
                        if send(one(eos.encode())) {
                            send(one(Frame::Finish { files: 1 }.encode()));
                        }
                    }
                    Err(e) => {
                        send(Chunk::Err(format!("read standard input: {e}")));
                    }
                }
            }
        }
    });
    rx
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::sender::gather::Member;
    use crate::sender::Admission;
    use rmcast_proto::Time;
    use rmcast_wire::session::Held;

    fn file(name: &str, size: u64, digest: [u8; 32]) -> SourceFile {
        let info = FileInfo {
            name: name.into(),
            size,
            blake3: String::new(),
            resumed_from: 0,
        };
        (PathBuf::from(name), info, digest)
    }

    fn member(node: u32, held: &[Held]) -> Member {
        let addr = "10.0.0.2:5000".parse().unwrap();
        let mut m = Member::new(node, addr, Time::ZERO, None, false, Admission::Key);
        m.held = held.to_vec();
        m
    }

    #[test]
    fn a_file_resumes_at_the_shortest_prefix_every_member_holds() {
        let d = [3u8; 32];
        let held = |name: &str, size: u64, n: u64, digest: [u8; 32]| Held {
            size,
            held: n,
            name_key: crate::resume::name_key(name),
            digest,
        };
        let mut files = vec![file("a.bin", 1000, d), file("b.bin", 500, d)];
        let members = [
            member(
                1,
                &[held("a.bin", 1000, 600, d), held("b.bin", 500, 500, d)],
            ),
            member(
                2,
                &[held("a.bin", 1000, 400, d), held("b.bin", 500, 100, d)],
            ),
        ];
        resume_points(&mut files, &members);
        assert_eq!(
            (files[0].1.resumed_from, files[1].1.resumed_from),
            (400, 100)
        );
        // Another version (digest, size or name) is not the file; a member holding nothing
        // of it makes it start at 0.
        let others = [
            member(1, &[held("a.bin", 1000, 600, [4; 32])]),
            member(2, &[held("a.bin", 999, 600, d)]),
            member(3, &[held("c.bin", 1000, 600, d)]),
        ];
        for m in others {
            let mut files = vec![file("a.bin", 1000, d)];
            resume_points(&mut files, &[m]);
            assert_eq!(files[0].1.resumed_from, 0);
        }
        let mut files = vec![file("a.bin", 1000, d)];
        resume_points(&mut files, &[member(1, &members[0].held), member(9, &[])]);
        assert_eq!(files[0].1.resumed_from, 0, "one member holds none of it");
        resume_points(&mut files, &[]);
        assert_eq!(files[0].1.resumed_from, 0);
    }
}
