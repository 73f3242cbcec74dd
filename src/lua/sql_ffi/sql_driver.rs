//! `sql_driver`: the one driver wirebench has, `mysql`, which a script asks
//! for first (`db_create`); from then on its reports are sysbench's SQL
//! statistics.

use std::ffi::{c_char, c_int, CStr};

use super::fatal;
use crate::lua::context;
use crate::lua::ffi::guarded;

/// `sql_driver`: the one driver wirebench has.
#[repr(C)]
pub struct SqlDriver {
    sname: *const c_char,
    lname: *const c_char,
}

/// The driver `db_create` hands out: static, never freed.
pub(super) struct StaticDriver(pub(super) SqlDriver);

// SAFETY: the pointers are to static C strings, never written.
unsafe impl Sync for StaticDriver {}

pub(super) static MYSQL_DRIVER: StaticDriver =
    StaticDriver(SqlDriver { sname: c"mysql".as_ptr(), lname: c"MySQL driver".as_ptr() });

/// `sql_driver *db_create(const char *name)`: the mysql driver (the
/// default, also for a NULL name); from now on the reports are sysbench's
/// SQL statistics.
#[no_mangle]
pub extern "C" fn db_create(name: *const c_char) -> *mut SqlDriver {
    guarded("db_create", std::ptr::null_mut(), || {
        // SAFETY: a NUL-terminated string from Lua, or NULL.
        let name = (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) }.to_string_lossy().into_owned());
        if name.as_deref().is_some_and(|n| n != "mysql") {
            fatal(&format!("invalid database driver name: '{}'", name.unwrap_or_default()));
            return std::ptr::null_mut();
        }
        context::with_current(|ctx| ctx.env.sql_used.store(true, std::sync::atomic::Ordering::Relaxed));
        std::ptr::addr_of!(MYSQL_DRIVER.0).cast_mut()
    })
}

/// `int db_destroy(sql_driver *)`: the driver is static.
#[no_mangle]
pub extern "C" fn db_destroy(_driver: *mut SqlDriver) -> c_int {
    0
}

#[cfg(test)]
mod tests {
    use std::ffi::CStr;

    use super::*;

    #[test]
    fn mysql_is_the_one_driver_and_the_default() {
        let named = db_create(c"mysql".as_ptr());
        assert!(!named.is_null());
        assert_eq!(db_create(std::ptr::null()), named);
        // SAFETY: the static driver, whose names are static C strings.
        let (sname, lname) = unsafe { (CStr::from_ptr((*named).sname), CStr::from_ptr((*named).lname)) };
        assert_eq!((sname, lname), (c"mysql", c"MySQL driver"));
        assert!(db_create(c"pgsql".as_ptr()).is_null());
        assert_eq!(db_destroy(named), 0);
    }
}
