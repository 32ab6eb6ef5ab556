//! The global allocator: mimalloc, with transparent huge pages held back until a simulation
//! is large.
//!
//! mimalloc asks the kernel for transparent huge pages (`MADV_HUGEPAGE`) on the memory it
//! reserves. A huge page is zeroed whole, 2 MiB, at its first touch, and where the kernel has
//! none free (memory fragmented, or handed back to a VM's host) it compacts or faults the
//! page in first. For a simulation of 10^5–10^6 receivers that is a good trade (fewer TLB
//! misses: `rmcast bench scale` ran PGM at 10^5 in 1.9 s with them and 2.7 s without). For a
//! run of a few milliseconds it is not: a 20-receiver SRM run right after an ns-2 run took
//! 25 ms on average with them and 11 ms without (RSS 20 MB against 9 MB), which is most of
//! the difference between runs of the same scenario that `bench/ns2/compare.sh` saw; the
//! first huge page, touched by the Rust runtime before `main`, was alone up to 40 % of a run.
//!
//! So huge pages are off for the process (`PR_SET_THP_DISABLE`, which the kernel checks at
//! each page fault) from before the runtime's first allocation (an ELF constructor). `main`
//! then [`settle`]s: the simulator's commands keep them off until the process's first
//! allocation of [`LARGE_BLOCK`] or more, when they are turned back on for everything
//! allocated from then on; every other command gets back the setting it inherited (its
//! children, such as the tools a benchmark compares with, inherit that). `MIMALLOC_ALLOW_THP`
//! in the environment, mimalloc's own switch, takes precedence: with it set, nothing here
//! changes the process's setting.

use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicI32, AtomicU8, Ordering};

/// An allocation this large means a large simulation: huge pages from then on.
pub const LARGE_BLOCK: usize = 4 << 20;

/// mimalloc, watching for the first [`LARGE_BLOCK`].
pub struct Alloc;

/// Whether huge pages are as mimalloc and the system set them, held back, or back on.
struct Watch(AtomicU8);

const NOT_WATCHING: u8 = 0;
const SMALL: u8 = 1;
const LARGE: u8 = 2;

static WATCH: Watch = Watch::new();

/// The process's `PR_GET_THP_DISABLE` before [`hold_back_at_start`] changed it (-1: it did not).
static INHERITED: AtomicI32 = AtomicI32::new(-1);

/// Runs before `main` and before the Rust runtime's first allocation: holds huge pages back
/// from the start. Allocates nothing (mimalloc would touch its first page).
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static HOLD_BACK_AT_START: extern "C" fn() = hold_back_at_start;

#[cfg(target_os = "linux")]
extern "C" fn hold_back_at_start() {
    // SAFETY: getenv reads the environment libc set up before constructors run; the name is
    // a NUL-terminated literal. prctl(PR_GET_THP_DISABLE) takes no pointer.
    let (set, inherited) = unsafe {
        (
            !libc::getenv(c"MIMALLOC_ALLOW_THP".as_ptr()).is_null(),
            libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0),
        )
    };
    if set || inherited < 0 {
        return;
    }
    if WATCH.small_until_large() {
        INHERITED.store(inherited, Ordering::Relaxed);
    }
}

/// Called once from `main` with the command's kind: a simulation keeps huge pages back until
/// it is large (see the module's text); anything else gets back the setting the process
/// inherited.
pub fn settle(simulation: bool) {
    if simulation {
        return;
    }
    let inherited = INHERITED.swap(-1, Ordering::Relaxed);
    if inherited >= 0
        && WATCH
            .0
            .compare_exchange(SMALL, NOT_WATCHING, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
    {
        set_thp_disabled(inherited == 1);
    }
}

impl Watch {
    const fn new() -> Watch {
        Watch(AtomicU8::new(NOT_WATCHING))
    }

    /// Hold huge pages back (once); whether this call did.
    fn small_until_large(&self) -> bool {
        if self
            .0
            .compare_exchange(NOT_WATCHING, SMALL, Ordering::Relaxed, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        if set_thp_disabled(true) {
            return true;
        }
        self.0.store(NOT_WATCHING, Ordering::Relaxed);
        false
    }

    #[inline]
    fn allocating(&self, size: usize) {
        if size >= LARGE_BLOCK
            && self.0.load(Ordering::Relaxed) == SMALL
            && self
                .0
                .compare_exchange(SMALL, LARGE, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            set_thp_disabled(false);
        }
    }
}

#[cfg(target_os = "linux")]
fn set_thp_disabled(off: bool) -> bool {
    // SAFETY: prctl with PR_SET_THP_DISABLE takes an integer argument and touches no memory
    // of ours; it allocates nothing, so it may run inside the allocator.
    unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, libc::c_ulong::from(off), 0, 0, 0) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn set_thp_disabled(_off: bool) -> bool {
    false
}

// SAFETY: every call is mimalloc's, with the caller's arguments unchanged; `allocating` only
// reads the size and may make one prctl call.
unsafe impl GlobalAlloc for Alloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        WATCH.allocating(layout.size());
        unsafe { mimalloc::MiMalloc.alloc(layout) }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        WATCH.allocating(layout.size());
        unsafe { mimalloc::MiMalloc.alloc_zeroed(layout) }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { mimalloc::MiMalloc.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        WATCH.allocating(new_size);
        unsafe { mimalloc::MiMalloc.realloc(ptr, layout, new_size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(target_os = "linux")]
    fn thp_disabled() -> bool {
        // SAFETY: PR_GET_THP_DISABLE takes no pointer and returns the flag.
        unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) == 1 }
    }

    /// Held back from the call, and on again after the first large allocation. A watch of
    /// its own (the global one sees every test's allocations); the kernel's flag is the
    /// process's, and no other test sets it.
    #[cfg(target_os = "linux")]
    #[test]
    fn huge_pages_are_held_back_until_the_first_large_allocation() {
        // This test binary's constructor held them back too (its watch is the global one).
        set_thp_disabled(false);
        let w = Watch::new();
        w.allocating(LARGE_BLOCK);
        assert!(!thp_disabled(), "a watch not started changes nothing");
        assert!(w.small_until_large());
        assert_eq!(w.0.load(Ordering::Relaxed), SMALL);
        assert!(thp_disabled(), "PR_SET_THP_DISABLE after small_until_large");
        w.allocating(LARGE_BLOCK - 1);
        assert!(thp_disabled(), "a block below the bound");
        w.allocating(LARGE_BLOCK);
        assert_eq!(w.0.load(Ordering::Relaxed), LARGE);
        assert!(!thp_disabled(), "on again after a block of LARGE_BLOCK");
        // Once large, a second call changes nothing.
        assert!(!w.small_until_large());
        assert!(!thp_disabled());
    }
}
