//! Where delivered application messages go: files verified against their BLAKE3 digest and
//! renamed into place only then, or standard output.

use super::{reason, FileResult, Output, RecvObserver};
use crate::digest::StreamDigest;
use crate::frame::Frame;
use crate::outdir::{check_target, Incoming};
use rmcast_wire::session::ReportState;
use std::io::Write;

pub(super) struct Current {
    name: String,
    size: Option<u64>,
    digest: Option<[u8; 32]>,
    hasher: StreamDigest,
    written: u64,
    incoming: Option<Incoming>,
    failed: Option<(u8, String)>,
    /// A late joiner's suffix of the stream (no digest to check).
    partial: bool,
    starts_at: Option<u64>,
    /// Restart mode: the byte its data began at (the bytes before were held here).
    from: u64,
}

pub(super) struct Sink {
    pub(super) output: Output,
    pub(super) current: Option<Current>,
    pub(super) results: Vec<FileResult>,
    pub(super) finished: bool,
    pub(super) failure: Option<u8>,
    pub(super) bytes: u64,
    tag: u64,
    /// A late joiner's stream name until its first data: what it gets is kept as
    /// `<name>.partial`.
    pub(super) late: Option<String>,
}

impl Sink {
    pub(super) fn new(output: Output) -> Self {
        Sink {
            output,
            current: None,
            results: Vec::new(),
            finished: false,
            failure: None,
            bytes: 0,
            tag: 0,
            late: None,
        }
    }

    /// A late joiner's first delivery: open `<name>.partial` for the suffix it gets.
    fn begin_partial(&mut self, obs: &mut dyn RecvObserver) {
        if self.current.is_some() || !self.results.is_empty() {
            return;
        }
        let Some(name) = self.late.take() else {
            return;
        };
        self.start(&format!("{name}.partial"), None, None, 0, obs);
        if let Some(c) = self.current.as_mut() {
            c.partial = true;
        }
    }

    fn fail_file(&mut self, code: u8, why: String) {
        if let Some(c) = self.current.as_mut() {
            if c.failed.is_none() {
                c.failed = Some((code, why));
                if let Some(i) = c.incoming.take() {
                    i.discard();
                }
            }
        }
    }

    /// A file (`size` and `digest` known) or a stream begins; a file's data from byte `from`
    /// on (restart mode: the first `from` bytes are the partial copy here, see
    /// [`crate::resume`]).
    fn start(
        &mut self,
        name: &str,
        size: Option<u64>,
        digest: Option<[u8; 32]>,
        from: u64,
        obs: &mut dyn RecvObserver,
    ) {
        if self.current.is_some() {
            self.fail_file(
                reason::MALFORMED,
                "a new file began before this one ended".into(),
            );
            self.close(obs);
        }
        obs.file(name, size);
        self.tag += 1;
        let mut c = Current {
            name: name.to_string(),
            size,
            digest,
            hasher: StreamDigest::default(),
            written: 0,
            incoming: None,
            failed: None,
            partial: false,
            starts_at: None,
            from,
        };
        match &self.output {
            _ if size.is_some_and(|s| from > s) => {
                c.failed = Some((reason::MALFORMED, format!("{name:?} resumed past its end")))
            }
            Output::Dir { path, force } => match check_target(path, name, *force) {
                Err(e) => c.failed = Some((reason::REFUSED_NAME, format!("refused {name:?}: {e}"))),
                Ok(_) => {
                    let opened = match (size, digest) {
                        (Some(size), Some(digest)) => {
                            let s = crate::resume::Sidecar {
                                size,
                                digest,
                                name: name.to_string(),
                            };
                            let h = &mut c.hasher;
                            Incoming::resumable(path, &s, *force, from, &mut |b| h.update(b))
                        }
                        _ => Incoming::create(path, name, *force, self.tag ^ rand::random::<u64>()),
                    };
                    match opened {
                        Ok(i) => {
                            c.incoming = Some(i);
                            c.written = from;
                        }
                        Err(e) => {
                            c.failed = Some((
                                reason::WRITE,
                                format!("cannot write {name:?} in {}: {e}", path.display()),
                            ))
                        }
                    }
                }
            },
            Output::Stdout if from > 0 => {
                c.failed = Some((
                    reason::MALFORMED,
                    format!("{name:?} was resumed at byte {from}: standard output holds none"),
                ))
            }
            Output::Stdout => {}
        }
        self.current = Some(c);
        if size == Some(from) || size.is_some_and(|s| from > s) {
            self.close(obs);
        }
    }

    fn data(&mut self, d: &[u8], obs: &mut dyn RecvObserver) {
        self.begin_partial(obs);
        let stdout = matches!(self.output, Output::Stdout);
        let Some(c) = self.current.as_mut() else {
            self.failure = Some(reason::MALFORMED);
            return;
        };
        c.hasher.update(d);
        c.written += d.len() as u64;
        self.bytes += d.len() as u64;
        if c.size.is_some_and(|s| c.written > s) {
            self.fail_file(
                reason::MALFORMED,
                "more data than the announced size".into(),
            );
            return;
        }
        if c.failed.is_none() {
            let r = if stdout {
                std::io::stdout().lock().write_all(d)
            } else if let Some(i) = c.incoming.as_mut() {
                i.write(d)
            } else {
                Ok(())
            };
            if let Err(e) = r {
                let name = c.name.clone();
                self.fail_file(reason::WRITE, format!("write {name}: {e}"));
            }
        }
        if let Some(c) = self.current.as_ref() {
            obs.progress(c.written);
            if c.size == Some(c.written) {
                self.close(obs);
            }
        }
    }

    fn end_stream(&mut self, size: u64, digest: [u8; 32], obs: &mut dyn RecvObserver) {
        self.begin_partial(obs);
        match self.current.as_mut() {
            Some(c) if c.size.is_none() && c.partial => {
                // A suffix: its offset follows from the stream's length; its digest cannot
                // be checked against the whole stream's.
                match size.checked_sub(c.written) {
                    Some(at) => c.starts_at = Some(at),
                    None => {
                        c.failed.get_or_insert((
                            reason::MALFORMED,
                            format!("received {} bytes of a {size}-byte stream", c.written),
                        ));
                    }
                }
                c.size = Some(c.written);
                self.close(obs);
            }
            Some(c) if c.size.is_none() => {
                if c.written != size {
                    c.failed.get_or_insert((
                        reason::MALFORMED,
                        format!(
                            "stream length {} differs from the announced {size}",
                            c.written
                        ),
                    ));
                }
                c.size = Some(size);
                c.digest = Some(digest);
                self.close(obs);
            }
            _ => self.failure = Some(reason::MALFORMED),
        }
    }

    fn close(&mut self, obs: &mut dyn RecvObserver) {
        let Some(mut c) = self.current.take() else {
            return;
        };
        let got = c.hasher.finalize();
        if c.failed.is_none() && !c.partial && Some(got) != c.digest {
            c.failed = Some((
                reason::DIGEST,
                format!(
                    "{}: BLAKE3 digest mismatch; the partial file was removed",
                    c.name
                ),
            ));
        }
        if matches!(self.output, Output::Stdout) {
            let _ = std::io::stdout().lock().flush();
        }
        let mut path = None;
        if let Some(i) = c.incoming.take() {
            if c.failed.is_some() {
                i.discard();
            } else {
                match i.commit() {
                    Ok(p) => path = Some(p.display().to_string()),
                    Err(e) => c.failed = Some((reason::WRITE, format!("{}: {e}", c.name))),
                }
            }
        }
        let ok = c.failed.is_none();
        let why = match (&c.failed, c.starts_at) {
            (Some((_, w)), _) => Some(w.clone()),
            (None, Some(at)) if c.partial => Some(format!(
                "partial: joined the stream late, holds its bytes from offset {at} on; not verified"
            )),
            _ => None,
        };
        if let Some((code, _)) = &c.failed {
            self.failure.get_or_insert(*code);
        }
        obs.file_done(&c.name, ok, why.as_deref());
        self.results.push(FileResult {
            name: c.name,
            bytes: c.written,
            ok,
            path,
            reason: why,
            partial: c.partial,
            starts_at: c.starts_at,
            resumed_from: (c.from > 0).then_some(c.from),
        });
    }

    pub(super) fn handle(&mut self, msg: &[u8], obs: &mut dyn RecvObserver) {
        match Frame::decode(msg) {
            Ok(Frame::File { size, digest, name }) => {
                self.start(name, Some(size), Some(digest), 0, obs)
            }
            Ok(Frame::Resume {
                from,
                size,
                digest,
                name,
            }) => self.start(name, Some(size), Some(digest), from, obs),
            Ok(Frame::Data(d)) => self.data(d, obs),
            Ok(Frame::Stream { name }) => {
                // A late joiner that caught the stream's start gets all of it.
                self.late = None;
                self.start(name, None, None, 0, obs)
            }
            Ok(Frame::EndOfStream { size, digest }) => self.end_stream(size, digest, obs),
            Ok(Frame::Finish { files }) => {
                if self.current.is_some() {
                    self.fail_file(reason::MALFORMED, "the transfer ended inside a file".into());
                    self.close(obs);
                }
                if files as usize != self.results.len() {
                    self.failure.get_or_insert(reason::MALFORMED);
                }
                self.finished = true;
            }
            Err(_) => self.failure = Some(reason::MALFORMED),
        }
    }

    pub(super) fn state(&self) -> (ReportState, u8) {
        match (self.finished, self.failure) {
            (_, Some(r)) if self.finished => (ReportState::Failed, r),
            (true, None) => (ReportState::Complete, reason::NONE),
            _ => (ReportState::Receiving, reason::NONE),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receiver::NoObserver;

    fn sink(dir: &std::path::Path, late: Option<&str>) -> Sink {
        let mut s = Sink::new(Output::Dir {
            path: dir.to_path_buf(),
            force: false,
        });
        s.late = late.map(str::to_string);
        s
    }

    fn feed(s: &mut Sink, frames: &[Frame<'_>]) {
        for f in frames {
            s.handle(&f.encode(), &mut NoObserver);
        }
    }

    #[test]
    fn a_late_joiner_keeps_its_suffix_as_a_partial_file() {
        let dir = tempfile::tempdir().unwrap();
        let whole = b"0123456789abcdef";
        let digest = *blake3::hash(whole).as_bytes();
        let mut s = sink(dir.path(), Some("live"));
        // It joined after the stream header and the first 6 bytes.
        feed(
            &mut s,
            &[
                Frame::Data(&whole[6..10]),
                Frame::Data(&whole[10..]),
                Frame::EndOfStream { size: 16, digest },
                Frame::Finish { files: 1 },
            ],
        );
        assert_eq!(s.state(), (ReportState::Complete, reason::NONE));
        let f = &s.results[0];
        assert!(f.ok && f.partial, "{f:?}");
        assert_eq!((f.name.as_str(), f.starts_at), ("live.partial", Some(6)));
        assert_eq!(
            std::fs::read(dir.path().join("live.partial")).unwrap(),
            &whole[6..]
        );
        assert!(!dir.path().join("live").exists());
    }

    #[test]
    fn a_file_resumes_from_its_partial_copy_and_only_a_bad_one_is_discarded() {
        let dir = tempfile::tempdir().unwrap();
        let whole: Vec<u8> = (0..5000u32).map(|i| (i % 251) as u8).collect();
        let digest = *blake3::hash(&whole).as_bytes();
        let (size, name) = (whole.len() as u64, "f.bin");
        let names = || {
            let mut v: Vec<String> = std::fs::read_dir(dir.path())
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        // A session that ends inside the file keeps its first 3,000 bytes and the sidecar.
        let mut s = sink(dir.path(), None);
        let head = Frame::File { size, digest, name };
        feed(&mut s, &[head.clone(), Frame::Data(&whole[..3000])]);
        drop(s);
        assert_eq!(names().len(), 2, "{:?}", names());
        assert_eq!(crate::resume::scan(dir.path())[0].held, 3000);
        // A sender that resumes further than what is held is refused; the copy stays.
        let resume = |from| Frame::Resume {
            from,
            size,
            digest,
            name,
        };
        let mut s = sink(dir.path(), None);
        feed(&mut s, &[resume(4000)]);
        assert!(s.current.as_ref().unwrap().failed.is_some());
        // Resumed at 2,000: the held prefix is hashed, the rest written after it.
        let mut s = sink(dir.path(), None);
        let rest = Frame::Data(&whole[2000..]);
        feed(&mut s, &[resume(2000), rest, Frame::Finish { files: 1 }]);
        assert_eq!(s.state(), (ReportState::Complete, reason::NONE));
        assert_eq!(s.results[0].resumed_from, Some(2000));
        assert_eq!(std::fs::read(dir.path().join(name)).unwrap(), whole);
        assert_eq!(names(), [name]);
        // A digest mismatch removes the partial copy with its sidecar.
        std::fs::remove_file(dir.path().join(name)).unwrap();
        let mut s = sink(dir.path(), None);
        let mut bad = whole.clone();
        bad[10] ^= 1;
        feed(
            &mut s,
            &[head, Frame::Data(&bad), Frame::Finish { files: 1 }],
        );
        assert_eq!(s.state().0, ReportState::Failed);
        assert!(names().is_empty(), "{:?}", names());
    }

    #[test]
    fn a_late_joiner_that_caught_the_start_verifies_the_whole_stream() {
        let dir = tempfile::tempdir().unwrap();
        let whole = b"0123456789";
        let mut s = sink(dir.path(), Some("live"));
        feed(
            &mut s,
            &[
                Frame::Stream { name: "live" },
                Frame::Data(whole),
                Frame::EndOfStream {
                    size: 10,
                    digest: *blake3::hash(whole).as_bytes(),
                },
                Frame::Finish { files: 1 },
            ],
        );
        assert!(s.results[0].ok && !s.results[0].partial);
        assert_eq!(std::fs::read(dir.path().join("live")).unwrap(), whole);
        // Without late join, data before any header is malformed, never a file.
        let mut s = sink(dir.path(), None);
        feed(&mut s, &[Frame::Data(b"xyz")]);
        assert_eq!(s.failure, Some(reason::MALFORMED));
        assert!(s.results.is_empty());
    }
}
