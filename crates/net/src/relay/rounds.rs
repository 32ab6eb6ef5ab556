//! Fair reading of the relay's sockets.
//!
//! `mio` reports a socket readable once (edge-triggered), so a socket must be read until it
//! would block or it is never reported again. Reading each ready socket to the end before the
//! next lets a flood on one (a downstream member's request storm on a CPU-starved host) hold
//! the relay on that socket while the others wait: the sender's repairs sat upstream for
//! 0.2–2 s while the storm was forwarded promptly. The relay therefore reads in rounds: every
//! socket with data gets at most [`BUDGET`] datagrams per round, in turn, and one that may
//! hold more is carried to the next round, which the relay runs without waiting (a zero poll
//! timeout) after its timers and housekeeping.

use mio::Token;

/// Datagrams read from one socket per round.
pub(super) const BUDGET: usize = 64;

/// The sockets of the next round: those `carried` from the last one (they may hold more),
/// then the newly readable `ready` ones not already among them, in the order reported.
pub(super) fn next_round(
    carried: Vec<Token>,
    ready: impl IntoIterator<Item = Token>,
) -> Vec<Token> {
    let mut round = carried;
    for t in ready {
        if !round.contains(&t) {
            round.push(t);
        }
    }
    round
}

/// One round: `serve(ctx, t, budget)` reads at most `budget` datagrams from each socket of
/// `round` in turn and says whether the socket may hold more; those are returned, to be
/// carried to the next round.
pub(super) fn serve_round<C, E>(
    ctx: &mut C,
    round: Vec<Token>,
    budget: usize,
    serve: fn(&mut C, Token, usize) -> Result<bool, E>,
) -> Result<Vec<Token>, E> {
    let mut carried = Vec::new();
    for t in round {
        if serve(ctx, t, budget)? {
            carried.push(t);
        }
    }
    Ok(carried)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    /// Sockets as queues of datagrams, and the order datagrams were read in.
    #[derive(Default)]
    struct Fake {
        queued: BTreeMap<usize, usize>,
        read: Vec<usize>,
    }

    fn serve(f: &mut Fake, t: Token, budget: usize) -> Result<bool, ()> {
        let q = f.queued.entry(t.0).or_default();
        let n = (*q).min(budget);
        *q -= n;
        f.read.extend(std::iter::repeat_n(t.0, n));
        // A socket that filled the budget may hold more (the relay cannot tell without a
        // read that would block).
        Ok(n == budget)
    }

    #[test]
    fn a_flooded_socket_does_not_hold_back_a_datagram_on_another() {
        let (flood, up) = (Token(7), Token(0));
        let mut f = Fake::default();
        f.queued.insert(flood.0, 10_000);
        f.queued.insert(up.0, 1);
        // Both readable, the flood reported first.
        let carried =
            serve_round(&mut f, next_round(Vec::new(), [flood, up]), BUDGET, serve).unwrap();
        // The upstream datagram was read after at most one budget of the flood.
        let at = f.read.iter().position(|&t| t == up.0).unwrap();
        assert_eq!(at, BUDGET);
        assert_eq!(carried, vec![flood]);
        // A socket that becomes readable while the flood lasts is served in the next round.
        let late = Token(3);
        f.queued.insert(late.0, 2);
        let before = f.read.len();
        let carried =
            serve_round(&mut f, next_round(carried, [late, flood]), BUDGET, serve).unwrap();
        assert_eq!(f.read[before..].iter().filter(|&&t| t == late.0).count(), 2);
        assert_eq!(f.read.len() - before, BUDGET + 2);
        assert_eq!(carried, vec![flood]);
        // Rounds continue until every socket is empty; nothing is lost or read twice.
        let mut carried = carried;
        let mut rounds = 0;
        while !carried.is_empty() {
            carried = serve_round(&mut f, next_round(carried, []), BUDGET, serve).unwrap();
            rounds += 1;
        }
        assert_eq!(f.read.iter().filter(|&&t| t == flood.0).count(), 10_000);
        assert!(f.queued.values().all(|&q| q == 0));
        assert_eq!(rounds, 10_000 / BUDGET - 1);
    }

    #[test]
    fn next_round_keeps_the_carried_first_and_each_socket_once() {
        let r = next_round(vec![Token(5), Token(2)], [Token(2), Token(9), Token(9)]);
        assert_eq!(r, vec![Token(5), Token(2), Token(9)]);
    }
}
