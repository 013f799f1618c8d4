//! [`map_in_order`]: run one function over many inputs on scoped threads (one per available
//! core) and get the outputs back in input order, so a parallel load reports exactly what a
//! sequential one would.
//!
//! Plain `std::thread::scope`: loading is CPU work on files (YAML, JSON, schema compilation)
//! done once at start-up or reload, not async work, and the engine has no thread pool to lend.
//! Not here: what is loaded (`loader`).

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Applies `work` to every input on up to `available_parallelism` threads; the outputs are in
/// the order of `inputs`. Threads take the next unclaimed input, so one slow input does not
/// hold up a whole share. A panic in `work` is re-raised here, as a sequential loop would.
pub(crate) fn map_in_order<I, O, F>(inputs: &[I], work: F) -> Vec<O>
where
    I: Sync,
    O: Send,
    F: Fn(&I) -> O + Sync,
{
    let threads = std::thread::available_parallelism()
        .map_or(1, NonZeroUsize::get)
        .min(inputs.len());
    if threads <= 1 {
        return inputs.iter().map(work).collect();
    }
    let next = AtomicUsize::new(0);
    let claim = || {
        let mut done = Vec::new();
        loop {
            let index = next.fetch_add(1, Ordering::Relaxed);
            let Some(input) = inputs.get(index) else {
                return done;
            };
            done.push((index, work(input)));
        }
    };
    let mut slots: Vec<Option<O>> = std::iter::repeat_with(|| None).take(inputs.len()).collect();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads).map(|_| scope.spawn(claim)).collect();
        for worker in workers {
            match worker.join() {
                Ok(done) => {
                    for (index, output) in done {
                        slots[index] = Some(output);
                    }
                }
                Err(panic) => std::panic::resume_unwind(panic),
            }
        }
    });
    // Every index below `inputs.len()` was claimed by exactly one thread, and every thread
    // returned (a panic was re-raised above), so every slot is filled.
    slots.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_come_back_in_input_order() {
        let inputs: Vec<usize> = (0..1_000).collect();
        let outputs = map_in_order(&inputs, |i| i * 2);
        assert_eq!(outputs, inputs.iter().map(|i| i * 2).collect::<Vec<_>>());
    }

    #[test]
    fn empty_and_single_inputs_work_without_threads() {
        assert!(map_in_order(&[] as &[u8], |b| *b).is_empty());
        assert_eq!(map_in_order(&[7u8], |b| *b + 1), [8]);
    }

    #[test]
    fn a_panic_in_the_work_reaches_the_caller() {
        let inputs: Vec<usize> = (0..64).collect();
        let outcome = std::panic::catch_unwind(|| {
            map_in_order(&inputs, |i| {
                assert!(*i != 40, "input 40 is bad");
                *i
            })
        });
        assert!(outcome.is_err());
    }
}
