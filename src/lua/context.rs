//! Where a state's context is found. The Rust functions a state calls
//! through mlua find it in the state's app data; the C functions a script
//! calls through LuaJIT's FFI (`ffi.C.db_query`, `ffi.C.sb_rand_uniform`)
//! get no state, so they find the context of the state running now: the
//! one whose task is running on this thread (a task's fiber keeps it,
//! `driver::Caller::local`), else the one this thread entered outside any
//! task (the main state loading the script, a report hook).

use std::cell::{RefCell, RefMut};
use std::rc::Rc;

use mlua::Lua;

use super::lua_state::ThreadCtx;

/// A state's context, shared by its app data and its task.
pub(crate) type SharedCtx = Rc<RefCell<ThreadCtx>>;

thread_local! {
    /// The state this thread runs outside any task, while one does.
    static OUTSIDE_TASKS: RefCell<Option<SharedCtx>> = const { RefCell::new(None) };
}

/// The context of the state `lua`, for a Rust function it called.
pub(crate) fn of(lua: &Lua) -> mlua::Result<SharedCtx> {
    let ctx = lua.app_data_ref::<SharedCtx>().ok_or_else(|| mlua::Error::runtime("no thread context"))?;
    Ok(ctx.clone())
}

/// Runs `f` with the context of the state `lua`.
pub(crate) fn with<T>(lua: &Lua, f: impl FnOnce(&mut ThreadCtx) -> T) -> mlua::Result<T> {
    let ctx = of(lua)?;
    let mut ctx = borrow(&ctx)?;
    Ok(f(&mut ctx))
}

fn borrow(ctx: &SharedCtx) -> mlua::Result<RefMut<'_, ThreadCtx>> {
    ctx.try_borrow_mut().map_err(|_| mlua::Error::runtime("the thread context is in use (a call re-entered it)"))
}

/// The context of the state running now on this thread, for a C function
/// a script called; `None` when no state runs here.
pub(crate) fn current() -> Option<SharedCtx> {
    if let Some(ctx) = crate::driver::with_caller(|caller| caller.local::<RefCell<ThreadCtx>>()).flatten() {
        return Some(ctx);
    }
    OUTSIDE_TASKS.with(|outside| outside.borrow().clone())
}

/// Runs `f` with the context of the state running now, if one is and it
/// is not in use.
pub(crate) fn with_current<T>(f: impl FnOnce(&mut ThreadCtx) -> T) -> Option<T> {
    let ctx = current()?;
    let mut ctx = ctx.try_borrow_mut().ok()?;
    Some(f(&mut ctx))
}

/// Makes `ctx` the task's state: its C functions find it from now on.
pub(crate) fn enter_task(ctx: &SharedCtx) {
    crate::driver::with_caller(|caller| caller.set_local(ctx.clone()));
}

/// Makes `ctx` the state this thread runs outside tasks while the guard lives.
pub(crate) struct OutsideGuard {
    previous: Option<SharedCtx>,
}

impl OutsideGuard {
    pub(crate) fn enter(ctx: &SharedCtx) -> Self {
        let previous = OUTSIDE_TASKS.with(|outside| outside.borrow_mut().replace(ctx.clone()));
        OutsideGuard { previous }
    }
}

impl Drop for OutsideGuard {
    fn drop(&mut self) {
        let previous = self.previous.take();
        OUTSIDE_TASKS.with(|outside| *outside.borrow_mut() = previous);
    }
}
