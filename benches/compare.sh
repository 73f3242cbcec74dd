#!/usr/bin/env bash
# The side-by-side benchmark against sysbench; see benches/compare.py.
# Builds wirebench, starts the throwaway MariaDB, then runs the cases.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
command -v sysbench >/dev/null || { echo "compare: sysbench is missing (apt-get install sysbench)" >&2; exit 1; }
cargo build --release --quiet
scripts/mariadb.sh start >&2
exec python3 benches/compare.py "$@"
