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
            };
            files.push((p.clone(), info, digest));
        }
    }
    Ok(files)
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
                    let head = Frame::File {
                        size: info.size,
                        digest,
                        name: &info.name,
                    }
                    .encode();
                    if !send(one(head)) {
                        return;
                    }
                    let mut f = match std::fs::File::open(&path) {
                        Ok(f) => f,
                        Err(e) => {
                            send(Chunk::Err(format!("open {}: {e}", path.display())));
                            return;
                        }
                    };
                    let mut h = blake3::Hasher::new();
                    match pump(&mut f, &mut h) {
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
