//! SIGINT/SIGTERM for the length of one command, through `signal-hook`.
//!
//! While an [`Interrupt`] is alive, the first SIGINT or SIGTERM only raises its flag: the
//! command notices at its next turn and ends cleanly (a receiver removes its unfinished file, a
//! sender tells its receivers the session ended). A second signal ends the process as it would
//! without the guard. Once every guard is dropped the signals act as by default again, so a
//! library user who never runs a command keeps the process's own handling.

use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::flag;
use signal_hook::SigId;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Guards alive now, and the process-wide flag "no guard alive: act by default".
struct Idle {
    guards: Mutex<usize>,
    flag: Arc<AtomicBool>,
}

static IDLE: OnceLock<Idle> = OnceLock::new();

/// The process-wide "default when idle" actions, registered once (signal-hook cannot give a
/// signal its default disposition back, so the default is emulated while no guard is alive).
fn idle() -> &'static Idle {
    IDLE.get_or_init(|| {
        let flag = Arc::new(AtomicBool::new(true));
        for sig in [SIGINT, SIGTERM] {
            if let Err(e) = flag::register_conditional_default(sig, Arc::clone(&flag)) {
                tracing::warn!("cannot watch signal {sig}: {e}");
            }
        }
        Idle {
            guards: Mutex::new(0),
            flag,
        }
    })
}

/// SIGINT/SIGTERM caught while this guard lives (see the module's text).
#[derive(Debug)]
pub struct Interrupt {
    raised: Arc<AtomicBool>,
    ids: Vec<SigId>,
}

impl Interrupt {
    /// Start catching SIGINT and SIGTERM. If the handlers cannot be installed the command
    /// runs without them (a warning says so): the signals then act as by default.
    pub fn install() -> Self {
        let idle = idle();
        let raised = Arc::new(AtomicBool::new(false));
        let mut ids = Vec::new();
        {
            let mut guards = idle.guards.lock().unwrap_or_else(|e| e.into_inner());
            *guards += 1;
            idle.flag.store(false, Ordering::SeqCst);
        }
        for sig in [SIGINT, SIGTERM] {
            // Registered in this order, the actions run in this order: a signal that finds
            // the flag already raised ends the process; the first one raises it.
            let hooks = flag::register_conditional_default(sig, Arc::clone(&raised))
                .and_then(|a| Ok((a, flag::register(sig, Arc::clone(&raised))?)));
            match hooks {
                Ok((a, b)) => ids.extend([a, b]),
                Err(e) => tracing::warn!("cannot catch signal {sig}: {e}"),
            }
        }
        Interrupt { raised, ids }
    }

    /// Whether a signal arrived since [`Interrupt::install`].
    pub fn raised(&self) -> bool {
        self.raised.load(Ordering::SeqCst)
    }
}

impl Drop for Interrupt {
    fn drop(&mut self) {
        for id in self.ids.drain(..) {
            signal_hook::low_level::unregister(id);
        }
        let idle = idle();
        let mut guards = idle.guards.lock().unwrap_or_else(|e| e.into_inner());
        *guards = guards.saturating_sub(1);
        if *guards == 0 {
            idle.flag.store(true, Ordering::SeqCst);
        }
    }
}
