//! The pre-encoded COM_STMT_EXECUTE must not allocate while it is patched:
//! a counting global allocator watches 10,000 rounds of set_* + packet().
//!
//! Implementing `GlobalAlloc` needs `unsafe`; it lives here, in a test crate
//! of its own, not in the `forbid(unsafe_code)` protocol crate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use wirebench_protocol::command::{ExecuteTemplate, ParamSlot};

struct Counting;

thread_local! {
    // Per thread: tests and the harness allocate concurrently on other threads.
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn note_allocation() {
    if COUNTING.try_with(Cell::get).unwrap_or(false) {
        let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note_allocation();
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_allocation();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Allocations made by `f` on this thread.
fn allocations_in(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    COUNTING.with(|c| c.set(true));
    f();
    COUNTING.with(|c| c.set(false));
    ALLOCATIONS.with(Cell::get) - before
}

#[test]
fn the_counter_sees_allocations() {
    // Guards against a test that passes because nothing is counted.
    let n = allocations_in(|| drop(std::hint::black_box(vec![1u8; 64])));
    assert_eq!(n, 1);
}

#[test]
fn patching_an_execute_template_does_not_allocate() {
    // oltp_read_write's INSERT (id, k, c, pad) plus a few more types.
    let slots = [
        ParamSlot::Int32,
        ParamSlot::Int32,
        ParamSlot::Bytes { len: 119 },
        ParamSlot::Bytes { len: 59 },
        ParamSlot::Int64,
        ParamSlot::UInt32,
        ParamSlot::Bytes { len: 300 },
    ];
    let mut t = ExecuteTemplate::new(7, &slots).unwrap();
    let c = [b'#'; 119];
    let pad = [b'-'; 59];
    let long = [b'x'; 300];
    let mut written = 0usize;
    let n = allocations_in(|| {
        for i in 0..10_000i32 {
            t.set_i32(0, i).unwrap();
            t.set_i32(1, -i).unwrap();
            t.set_bytes(2, &c).unwrap();
            t.set_bytes(3, &pad).unwrap();
            t.set_i64(4, i64::from(i) << 20).unwrap();
            t.set_u32(5, i as u32).unwrap();
            // The NULL re-layout path, both ways, every few rounds.
            let null = i % 3 == 0;
            t.set_null(6, null).unwrap();
            t.set_null(2, null).unwrap();
            if !null {
                t.set_bytes(6, &long).unwrap();
            }
            // Errors are values, not allocations.
            assert!(t.set_i64(0, 1).is_err());
            assert!(t.set_bytes(3, &c).is_err());
            t.set_sequence_id(0);
            written += std::hint::black_box(t.packet()).len();
        }
    });
    assert_eq!(n, 0, "patching allocated {n} times");
    assert!(written > 10_000 * 100);
}
