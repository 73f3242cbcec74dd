/// The C functions of sysbench 1.0.20's binary that wirebench's exports
/// under the same names and signatures, for scripts' `ffi.C` (LuaJIT
/// finds them with `dlsym` in the executable), and libc's `usleep`. build.rs reads this list
/// (`include!`) to put exactly these names in the executable's dynamic
/// symbol table.
pub const EXPORTED_C_FUNCTIONS: &[&str] = &[
    "sb_counter_inc",
    "sb_counter_val",
    "sb_rand_default",
    "sb_rand_uniform",
    "sb_rand_gaussian",
    "sb_rand_special",
    "sb_rand_pareto",
    "sb_rand_unique",
    "sb_rand_uniform_uint64",
    "sb_rand_uniform_double",
    "sb_rand_str",
    "sb_histogram_new",
    "sb_histogram_delete",
    "sb_histogram_update",
    "sb_histogram_print",
    "sb_lua_set_test_args",
    "sb_print_test_options",
    // sysbench.lua's event loop (events.rs).
    "sb_more_events",
    "sb_event_start",
    "sb_event_stop",
    // sysbench.sql's driver functions (sql_ffi/).
    "db_create",
    "db_destroy",
    "db_connection_create",
    "db_connection_close",
    "db_connection_reconnect",
    "db_connection_free",
    "db_bulk_insert_init",
    "db_bulk_insert_next",
    "db_bulk_insert_done",
    "db_query",
    "db_fetch_row",
    "db_prepare",
    "db_bind_param",
    "db_bind_result",
    "db_execute",
    "db_close",
    "db_free_results",
    // libc's, which a script calls through the FFI to pause: it pauses
    // the calling state, not its loop (events.rs).
    "usleep",
];
