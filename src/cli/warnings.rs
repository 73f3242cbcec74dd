//! The warnings sysbench 1.0.20 prints about a command line it accepts:
//! deprecated options and a run without limits. It prints them before its
//! banner, at every `--verbosity` (its logger is not set up yet); wirebench
//! as `sysbench` prints them so, and as wirebench says them in a note.

/// A warning about the command line, for any command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StartupWarning {
    /// `--num-threads`, `--max-requests`, `--max-time` or `--tx-rate` on a
    /// sysbench 1.0 command line, with a value that wins over the option
    /// it stands for (`modern`).
    DeprecatedAlias { alias: &'static str, modern: &'static str, shown: String, value: u32 },
    /// `--test=NAME` naming a sysbench 1.0 test.
    DeprecatedTestOption { shown: String },
    /// Neither `--events` nor `--time` limits the run.
    NoLimit,
}

impl StartupWarning {
    /// sysbench's line, `WARNING: ...` included.
    pub fn sysbench_text(&self) -> String {
        match self {
            StartupWarning::DeprecatedAlias { alias, modern, .. } => {
                format!("WARNING: --{alias} is deprecated, use --{modern} instead")
            }
            StartupWarning::DeprecatedTestOption { .. } => "WARNING: the --test option is deprecated. You can pass a \
                                                             script name or path on the command line without any \
                                                             options."
                .to_owned(),
            StartupWarning::NoLimit => {
                "WARNING: Both event and time limits are disabled, running an endless test".to_owned()
            }
        }
    }

    /// sysbench writes the `--test` warning while it reads the arguments,
    /// with `fprintf(stderr)`; the others through its logger, on stdout.
    pub fn sysbench_on_stdout(&self) -> bool {
        !matches!(self, StartupWarning::DeprecatedTestOption { .. })
    }

    /// wirebench's note: what the option was read as.
    pub fn note(&self) -> String {
        match self {
            StartupWarning::DeprecatedAlias { modern, shown, value, .. } => {
                let unlimited = if *value == 0 { " (no limit)" } else { "" };
                format!("{shown} is deprecated (sysbench 1.0.20 warns too): --{modern}={value}{unlimited}")
            }
            StartupWarning::DeprecatedTestOption { shown } => {
                format!("{shown} is deprecated (sysbench 1.0.20 warns too): name the test without --test")
            }
            StartupWarning::NoLimit => "--events=0 and --time=0: the run has no limit and goes on until Ctrl-C or \
                                        SIGTERM (sysbench 1.0.20 warns too)"
                .to_owned(),
        }
    }
}
