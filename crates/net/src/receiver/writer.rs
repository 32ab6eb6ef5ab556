//! The receiver's writer thread: delivered messages go into the [`Sink`] (hashing, writing,
//! verifying and committing files with fsync and rename) off the protocol thread, so feedback
//! never waits for the disk. Committing a finished file on the protocol thread delayed the
//! ACK of the next message past the sender's 20 ms retransmission timeout.
//!
//! The protocol thread hands over what it delivered in batches of up to [`BATCH_BYTES`] or
//! [`BATCH_AGE`] old (a wake-up of the writer per message cost the receiver about as much CPU
//! as the rest of its work for stop-and-wait), sees what the sink did through a [`Status`] the
//! writer updates after every batch, and gets the sink's observer calls as [`Note`]s it replays on
//! its own observer. It waits for the writer only when more than [`BACKLOG`] bytes are queued (a
//! disk slower than the network), before it reports an outcome, and at the end.

use super::sink::Sink;
use super::{Output, RecvObserver};
use bytes::Bytes;
use mio::Waker;
use rmcast_proto::Time;
use rmcast_wire::session::ReportState;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// Most delivered bytes queued for the writer before the protocol thread waits for it.
pub(super) const BACKLOG: u64 = 64 << 20;

/// A batch goes to the writer once it holds this many bytes ...
pub(super) const BATCH_BYTES: u64 = 1 << 20;
/// ... or its first message is this old.
pub(super) const BATCH_AGE: Duration = Duration::from_millis(5);

/// Progress notes are sent at most once per this many bytes of a file (and at its end).
const PROGRESS_STEP: u64 = 256 << 10;

enum ToWriter {
    /// A late joiner's stream name (`Sink::late`).
    Late(Option<String>),
    /// The messages one turn of the protocol loop delivered, in order.
    Msgs(Vec<Bytes>),
    /// Send the sink back and start a fresh one ([`Writer::reset`]).
    Reset(Sender<Sink>),
}

/// What the protocol thread knows of the sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Status {
    /// Application bytes delivered into the sink.
    pub(super) bytes: u64,
    /// The sender's FINISH was handled: every file is closed (committed or failed).
    pub(super) finished: bool,
    /// What a REPORT says (state, reason).
    pub(super) state: (ReportState, u8),
}

/// An observer call made on the writer thread, replayed on the protocol thread.
enum Note {
    File(String, Option<u64>),
    Progress(u64),
    FileDone(String, bool, Option<String>),
}

#[derive(Default)]
struct Queue {
    /// Batches sent and not yet handled, and their bytes.
    msgs: u64,
    bytes: u64,
    /// Protocol-thread waits in progress (the writer signals only then: a condvar signal is
    /// a system call).
    waiters: u32,
}

struct Shared {
    status: Mutex<Status>,
    queue: Mutex<Queue>,
    drained: Condvar,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A poisoned lock means the writer panicked; what it guarded is still consistent enough
    // to read (counters).
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The writer thread's observer: turns the sink's calls into notes, progress coalesced.
struct Notes {
    tx: Sender<Note>,
    last: u64,
}

impl RecvObserver for Notes {
    fn file(&mut self, name: &str, size: Option<u64>) {
        self.last = 0;
        let _ = self.tx.send(Note::File(name.to_string(), size));
    }
    fn progress(&mut self, bytes_in_file: u64) {
        if bytes_in_file >= self.last + PROGRESS_STEP {
            self.last = bytes_in_file;
            let _ = self.tx.send(Note::Progress(bytes_in_file));
        }
    }
    fn file_done(&mut self, name: &str, ok: bool, why: Option<&str>) {
        let _ = self
            .tx
            .send(Note::FileDone(name.into(), ok, why.map(str::to_string)));
    }
}

/// The protocol thread's handle on the writer thread.
pub(super) struct Writer {
    tx: Option<Sender<ToWriter>>,
    /// Delivered and not yet handed over, with their bytes and the time of the first.
    turn: Vec<Bytes>,
    turn_bytes: u64,
    since: Option<Time>,
    notes: Receiver<Note>,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<Sink>>,
    output: Output,
    waker: Arc<Waker>,
}

impl Writer {
    /// Start the writer thread for `output`; it wakes the protocol loop through `waker` when
    /// the sink's state changes (a file verified, the transfer finished).
    pub(super) fn spawn(output: Output, waker: Arc<Waker>) -> Writer {
        let (tx, rx) = channel::<ToWriter>();
        let (ntx, notes) = channel::<Note>();
        let mut sink = Sink::new(output.clone());
        let shared = Arc::new(Shared {
            status: Mutex::new(Status {
                bytes: 0,
                finished: false,
                state: sink.state(),
            }),
            queue: Mutex::new(Queue::default()),
            drained: Condvar::new(),
        });
        let sh = shared.clone();
        let (out, wake) = (output.clone(), waker.clone());
        let thread = std::thread::Builder::new()
            .name("rmcast-writer".into())
            .spawn(move || {
                let mut obs = Notes { tx: ntx, last: 0 };
                for m in rx {
                    let mut back = None;
                    let len = match m {
                        ToWriter::Late(name) => {
                            sink.late = name;
                            0
                        }
                        ToWriter::Msgs(batch) => batch
                            .iter()
                            .map(|d| {
                                sink.handle(d, &mut obs);
                                d.len() as u64
                            })
                            .sum(),
                        ToWriter::Reset(to) => {
                            obs.last = 0;
                            back = Some((to, std::mem::replace(&mut sink, Sink::new(out.clone()))));
                            0
                        }
                    };
                    let now = Status {
                        bytes: sink.bytes,
                        finished: sink.finished,
                        state: sink.state(),
                    };
                    let changed = {
                        let mut s = lock(&sh.status);
                        let changed = (s.finished, s.state) != (now.finished, now.state);
                        *s = now;
                        changed
                    };
                    let waiters = {
                        let mut q = lock(&sh.queue);
                        q.msgs -= 1;
                        q.bytes -= len;
                        q.waiters
                    };
                    if waiters > 0 {
                        sh.drained.notify_all();
                    }
                    if changed {
                        let _ = wake.wake();
                    }
                    // Only now, so the status and queue the protocol thread sees next are
                    // the fresh sink's.
                    if let Some((to, old)) = back {
                        let _ = to.send(old);
                    }
                }
                sink
            });
        let thread = match thread {
            Ok(t) => Some(t),
            Err(e) => {
                // Without a thread the transfer cannot write; it fails rather than hangs.
                tracing::error!("cannot start the writer thread: {e}");
                None
            }
        };
        Writer {
            tx: thread.as_ref().map(|_| tx),
            turn: Vec::new(),
            turn_bytes: 0,
            since: None,
            notes,
            shared,
            thread,
            output,
            waker,
        }
    }

    fn alive(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    /// Wait for the writer to handle a message (or 50 ms, in case it died meanwhile).
    fn wait<'a>(&'a self, mut q: MutexGuard<'a, Queue>) -> MutexGuard<'a, Queue> {
        q.waiters += 1;
        let mut q = match self
            .shared
            .drained
            .wait_timeout(q, Duration::from_millis(50))
        {
            Ok((q, _)) => q,
            Err(p) => p.into_inner().0,
        };
        q.waiters -= 1;
        q
    }

    fn push(&mut self, m: ToWriter, len: u64) {
        let Some(tx) = self.tx.as_ref() else {
            return;
        };
        {
            let mut q = lock(&self.shared.queue);
            while q.bytes > BACKLOG && self.alive() {
                q = self.wait(q);
            }
            q.msgs += 1;
            q.bytes += len;
        }
        if tx.send(m).is_err() {
            // The writer is gone (it panicked): nothing more can be written.
            self.tx = None;
        }
    }

    /// A late joiner's stream name, before its first delivery.
    pub(super) fn late(&mut self, name: Option<String>) {
        self.send();
        self.push(ToWriter::Late(name), 0);
    }

    /// A message delivered at `now`, for the writer; it goes with others on
    /// [`Writer::send_due`].
    pub(super) fn deliver(&mut self, now: Time, data: Bytes) {
        self.turn_bytes += data.len() as u64;
        self.turn.push(data);
        self.since.get_or_insert(now);
    }

    /// When the batch being gathered must go to the writer, if one is.
    pub(super) fn due_at(&self) -> Option<Time> {
        self.since.map(|t| t + BATCH_AGE)
    }

    /// Hand the gathered messages to the writer if the batch is full or old enough.
    pub(super) fn send_due(&mut self, now: Time) {
        if self.turn_bytes >= BATCH_BYTES || self.due_at().is_some_and(|t| t <= now) {
            self.send();
        }
    }

    /// Hand the gathered messages to the writer now.
    pub(super) fn send(&mut self) {
        self.since = None;
        if !self.turn.is_empty() {
            let batch = std::mem::take(&mut self.turn);
            let len = std::mem::take(&mut self.turn_bytes);
            self.push(ToWriter::Msgs(batch), len);
        }
    }

    /// The sink's state as of the last message the writer handled.
    pub(super) fn status(&self) -> Status {
        *lock(&self.shared.status)
    }

    /// Wait until the writer handled everything queued; returns the status then.
    pub(super) fn flush(&mut self) -> Status {
        self.send();
        let mut q = lock(&self.shared.queue);
        while q.msgs > 0 && self.alive() {
            q = self.wait(q);
        }
        drop(q);
        self.status()
    }

    /// Replay the writer's observer calls on `obs`.
    pub(super) fn notes(&self, obs: &mut dyn RecvObserver) {
        while let Ok(n) = self.notes.try_recv() {
            match n {
                Note::File(name, size) => obs.file(&name, size),
                Note::Progress(b) => obs.progress(b),
                Note::FileDone(name, ok, why) => obs.file_done(&name, ok, why.as_deref()),
            }
        }
    }

    /// Stop the writer once it handled everything queued and take the sink back.
    pub(super) fn finish(mut self) -> Sink {
        self.send();
        self.tx = None;
        let output = self.output.clone();
        self.thread
            .take()
            .and_then(|t| t.join().ok())
            .unwrap_or_else(|| lost(output))
    }

    /// Take the sink back once the writer handled everything queued, as [`Writer::finish`]
    /// does, and leave the writer as [`Writer::spawn`] gives it: the same thread with a fresh
    /// sink (a new thread if that one is gone), nothing gathered, no notes pending.
    pub(super) fn reset(&mut self) -> Sink {
        self.send();
        let (tx, rx) = channel();
        self.push(ToWriter::Reset(tx), 0);
        let sink = rx.recv().ok();
        while self.notes.try_recv().is_ok() {}
        match sink {
            Some(sink) => sink,
            None => {
                let output = self.output.clone();
                let dead =
                    std::mem::replace(self, Writer::spawn(output.clone(), self.waker.clone()));
                dead.finish();
                lost(output)
            }
        }
    }
}

/// The sink of a writer thread that is gone: nothing more could be written.
fn lost(output: Output) -> Sink {
    let mut s = Sink::new(output);
    s.failure = Some(super::reason::WRITE);
    s
}
