#!/bin/sh
# Issue 11's fuzzing campaign: each target in turn (one job, niced), for
# RUNS executions or SECONDS_EACH seconds, whichever comes first; then its
# corpus minimised; then a table of what each run did.
#
#   fuzz/campaign.sh                 # every target: 10 million runs or 15 minutes each
#   fuzz/campaign.sh login auth      # some of them
#   RUNS=100000 SECONDS_EACH=60 fuzz/campaign.sh framing
#
# Logs and the table go to fuzz/artifacts/campaign/, findings to
# fuzz/artifacts/<target>/ as usual. A finding stops its target's run; the
# campaign goes on with the next one.
set -u
cd "$(dirname "$0")"
export RUSTC_BOOTSTRAP=1
RUNS=${RUNS:-10000000}
SECONDS_EACH=${SECONDS_EACH:-900}
LOGS=artifacts/campaign
mkdir -p "$LOGS"

cargo fuzz build || exit 1
targets=${*:-$(cargo fuzz list)}

for t in $targets; do
    echo "== $t: up to $RUNS runs or $SECONDS_EACH s" >&2
    # -timeout: an input that takes 10 s is a finding (libFuzzer's default is 20 minutes).
    nice -n 15 cargo fuzz run "$t" -- -runs="$RUNS" -max_total_time="$SECONDS_EACH" -timeout=10 \
        -print_final_stats=1 >"$LOGS/$t.log" 2>&1
    echo "exit $?" >>"$LOGS/$t.log"

    # cargo fuzz cmin's merge, except that seeds and regression inputs keep
    # their names (and their place: cmin would drop or rename them): only
    # what adds coverage to them is kept.
    min="corpus/$t.min"
    rm -rf "$min" && mkdir "$min"
    cp corpus/"$t"/seed-* corpus/"$t"/regression-* "$min"/ 2>/dev/null
    nice -n 15 cargo fuzz run "$t" "$min" "corpus/$t" -- -merge=1 >"$LOGS/$t.cmin.log" 2>&1 &&
        rm -rf "corpus/$t" && mv "$min" "corpus/$t"
done

# One row per target: the run's executions, speed, time and final coverage,
# then the minimised corpus.
{
    echo "| target | executions | exec/s | time | cov | ft | corpus files | corpus bytes | exit |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
    for t in $(cargo fuzz list); do
        log="$LOGS/$t.log"
        [ -f "$log" ] || continue
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
        speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
        secs=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log")
        cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1)
        files=$(find "corpus/$t" -type f | wc -l)
        bytes=$(find "corpus/$t" -type f -printf '%s\n' | awk '{ s += $1 } END { print s + 0 }')
        echo "| \`$t\` | ${runs:-?} | ${speed:-?} | ${secs:-?} s | $(echo "$cov" | awk '{ print $2 " | " $4 }') | $files | $bytes | $(tail -1 "$log" | cut -d' ' -f2) |"
    done
} | tee "$LOGS/summary.md"
