//! sysbench's statistics counters (`sb_counter.h`): `sb_counter_inc` and
//! `sb_counter_val`, numbered as `sb_counter_type` numbers them. A count a
//! script adds shows in the reports where sysbench shows it: reads,
//! writes and other in "SQL statistics", `SB_CNT_TRX` (sysbench's
//! `SB_CNT_EVENT`) in the transactions and the total number of events,
//! errors as ignored errors, reconnects as reconnects.
//!
//! sysbench keeps a row of counters per thread and sums the rows for its
//! reports; wirebench counts in the calling state's statistics, whatever
//! thread number the script passes: the reports, which add every state's
//! counts, come out as sysbench's. A state reads back only its own row.

use std::ffi::c_int;

use super::{alert_once, guarded, with_state};
use crate::stats::Counters;

/// `sb_counter_type`'s values, as sysbench's C enum numbers them.
const SB_CNT_OTHER: c_int = 0;
const SB_CNT_READ: c_int = 1;
const SB_CNT_WRITE: c_int = 2;
const SB_CNT_TRX: c_int = 3;
const SB_CNT_ERROR: c_int = 4;
const SB_CNT_RECONNECT: c_int = 5;

/// The counter `kind` of `counters`, if sysbench has that counter.
fn counter(counters: &mut Counters, kind: c_int) -> Option<&mut u64> {
    Some(match kind {
        SB_CNT_OTHER => &mut counters.others,
        SB_CNT_READ => &mut counters.reads,
        SB_CNT_WRITE => &mut counters.writes,
        SB_CNT_TRX => &mut counters.events,
        SB_CNT_ERROR => &mut counters.errors,
        SB_CNT_RECONNECT => &mut counters.reconnects,
        _ => return None,
    })
}

/// Refuses (logged, saying `outcome`) a counter sysbench does not have,
/// and a negative thread number: sysbench would reach outside its counters.
fn check_call(function: &'static str, thread_id: c_int, kind: c_int, outcome: &str) -> bool {
    if counter(&mut Counters::default(), kind).is_none() {
        alert_once(
            function,
            "counter type",
            format_args!(
                "{function}({thread_id}, {kind}): {kind} is not a counter of sysbench's (SB_CNT_OTHER 0, \
                 SB_CNT_READ 1, SB_CNT_WRITE 2, SB_CNT_TRX 3, SB_CNT_ERROR 4, SB_CNT_RECONNECT 5): {outcome}"
            ),
        );
        return false;
    }
    if thread_id < 0 {
        alert_once(
            function,
            "thread id",
            format_args!("{function}({thread_id}, {kind}): a thread number is 0 or more (sysbench.tid): {outcome}"),
        );
        return false;
    }
    true
}

/// `void sb_counter_inc(int thread_id, sb_counter_type type)`: one more
/// of counter `kind`.
#[no_mangle]
pub extern "C" fn sb_counter_inc(thread_id: c_int, kind: c_int) {
    guarded("sb_counter_inc", (), || {
        if !check_call("sb_counter_inc", thread_id, kind, "nothing counted") {
            return;
        }
        let mut one = Counters::default();
        if let Some(count) = counter(&mut one, kind) {
            *count = 1;
        }
        with_state("sb_counter_inc", |ctx| ctx.add_counts(&one));
    })
}

/// `uint64_t sb_counter_val(int thread_id, sb_counter_type type)`: the
/// counter's value, counted since the state started (sysbench never
/// resets its counters). Another thread's counters are that thread's
/// own: asking for them is refused (logged) and answers 0.
#[no_mangle]
pub extern "C" fn sb_counter_val(thread_id: c_int, kind: c_int) -> u64 {
    guarded("sb_counter_val", 0, || {
        if !check_call("sb_counter_val", thread_id, kind, "answered 0") {
            return 0;
        }
        let value = with_state("sb_counter_val", |ctx| {
            let own = u32::try_from(thread_id).is_ok_and(|id| id == ctx.tid);
            own.then(|| counter(&mut ctx.counts_so_far(), kind).map_or(0, |count| *count))
        });
        match value {
            Some(Some(value)) => value,
            Some(None) => {
                alert_once(
                    "sb_counter_val",
                    "other thread",
                    format_args!(
                        "sb_counter_val({thread_id}, {kind}): wirebench reads only the calling thread's own \
                         counters (sysbench.tid): answered 0"
                    ),
                );
                0
            }
            // No state: logged.
            None => 0,
        }
    })
}
