//! `wirebench merge [--format=text|json] [--percentile=LIST]
//! [--per-statement] FILE...`.

use std::path::PathBuf;

use super::cli_error::CliError;
use super::defs;
use super::general::{percentiles, sysbench_percentile};
use super::raw::RawOpt;
use super::{value, Invocation};
use crate::results::{MergeOptions, OutputFormat};

pub(crate) fn parse_merge(opts: &[RawOpt], files: &[&str]) -> Result<Invocation, CliError> {
    if let Some(opt) = opts.iter().find(|o| !defs::is_in(defs::MERGE, &o.key)) {
        let suggestion = defs::closest(&opt.name, defs::MERGE.iter().map(|d| d.name)).map(|n| format!("--{n}"));
        if defs::find(&opt.key).is_some() {
            return Err(CliError::NotHere {
                option: opt.label(),
                reason: "not a merge option: merge takes --format, --percentile and --per-statement, then the \
                         shards' result files (see docs/shards.md)"
                    .to_owned(),
            });
        }
        return Err(CliError::UnknownOption { option: opt.label(), suggestion, written: opt.shown() });
    }
    let last = |key: &str| opts.iter().rev().find(|o| o.key == key);
    if last("help").map_or(Ok(false), value::boolean)? {
        return Ok(Invocation::MergeHelp);
    }
    let mut options = MergeOptions {
        files: files.iter().map(PathBuf::from).collect(),
        format: OutputFormat::Text,
        percentiles: vec![95.0],
        percentile: Some(95),
        per_statement: last("per_statement").map_or(Ok(false), value::boolean)?,
    };
    if let Some(opt) = last("format") {
        options.format = value::choice(opt, &OutputFormat::NAMES[..2], "text or json")?;
    }
    if let Some(opt) = last("percentile") {
        options.percentiles = percentiles(opt)?;
        options.percentile = sysbench_percentile(&options.percentiles);
    }
    if options.files.is_empty() {
        return Err(CliError::Conflict(
            "merge needs the shards' result files: wirebench merge shard-0.json shard-1.json ..., each written by \
             `wirebench ... --shard=I/N --format=json run > shard-I.json` (see docs/shards.md)"
                .to_owned(),
        ));
    }
    Ok(Invocation::Merge(options))
}
