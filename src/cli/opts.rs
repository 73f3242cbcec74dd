//! The options of one command line after the config files and the legacy
//! rewrites, each read at most once: the last one written wins, as in
//! sysbench, and an option nobody read is a bug the builder reports.

use std::cell::Cell;
use std::collections::BTreeMap;

use super::cli_error::CliError;
use super::raw::RawOpt;
use super::value;

/// The largest value of a C `int` option.
pub(crate) const INT_MAX: u32 = i32::MAX as u32;

pub(crate) struct Opts {
    list: Vec<RawOpt>,
    used: Vec<Cell<bool>>,
}

impl Opts {
    pub(crate) fn new(list: Vec<RawOpt>) -> Self {
        let used = list.iter().map(|_| Cell::new(false)).collect();
        Opts { list, used }
    }

    /// The last occurrence of `key`, marking every occurrence as read.
    pub(crate) fn get(&self, key: &str) -> Option<&RawOpt> {
        let mut found = None;
        for (opt, used) in self.list.iter().zip(&self.used) {
            if opt.key == key {
                used.set(true);
                found = Some(opt);
            }
        }
        found
    }

    /// The last occurrence of `key`, without marking it as read (for a note
    /// about an option that another reader handles).
    pub(crate) fn peek(&self, key: &str) -> Option<&RawOpt> {
        self.list.iter().rev().find(|o| o.key == key)
    }

    /// Every occurrence, in order: sysbench checks each boolean as it
    /// reads it, so `--debug=yes --debug` is refused; wirebench checks every
    /// occurrence of every kind.
    fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a RawOpt> + 'a {
        self.list.iter().zip(&self.used).filter(move |(opt, _)| opt.key == key).map(|(opt, used)| {
            used.set(true);
            opt
        })
    }

    /// Every option as given, by the name it was written with (the last
    /// one written wins), a bare flag as `on` and a password as `(hidden)`:
    /// what a result records as the options used.
    pub(crate) fn given(&self) -> BTreeMap<String, String> {
        let shown = |o: &RawOpt| match &o.value {
            Some(_) if super::defs::is_secret(&o.key) => "(hidden)".to_owned(),
            Some(value) => value.clone(),
            None => "on".to_owned(),
        };
        self.list.iter().map(|o| (o.name.clone(), shown(o))).collect()
    }

    /// Every value given for `key`, in order (an option that may be given
    /// more than once).
    pub(crate) fn texts(&self, key: &str) -> Vec<String> {
        self.all(key).filter_map(|opt| opt.value.clone()).collect()
    }

    pub(crate) fn unused(&self) -> Option<&RawOpt> {
        self.list.iter().zip(&self.used).find(|(_, used)| !used.get()).map(|(opt, _)| opt)
    }

    /// Every occurrence of `key`, in order: an option that may be given
    /// more than once (`--metrics-label`).
    pub(crate) fn every<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a RawOpt> + 'a {
        self.all(key)
    }

    pub(crate) fn flag(&self, key: &str, default: bool) -> Result<bool, CliError> {
        self.all(key).try_fold(default, |_, o| value::boolean(o))
    }

    pub(crate) fn int(&self, key: &str, min: u32, max: u32, expected: &str) -> Result<Option<u32>, CliError> {
        self.all(key).try_fold(None, |_, o| value::u32_in(o, min, max, expected).map(Some))
    }

    /// A Lua script's numeric option.
    pub(crate) fn whole(&self, key: &str, min: u32, max: u32, expected: &str) -> Result<Option<u32>, CliError> {
        self.all(key).try_fold(None, |_, o| value::whole(o, min, max, expected).map(Some))
    }

    pub(crate) fn text(&self, key: &str) -> Result<Option<String>, CliError> {
        self.get(key).map(|o| value::text(o, "STRING").map(str::to_owned)).transpose()
    }
}

/// The note for an option that only sysbench master (1.1) has.
pub(crate) fn master_note(opt: &RawOpt) -> String {
    format!("{}: a sysbench 1.1 (master) option, which sysbench 1.0.20 refuses", opt.shown())
}
