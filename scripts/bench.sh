#!/usr/bin/env bash
# Set up .venv (first run only) and run the benchmark, peers included when ../shared is present.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/python -m bench.run "$@"
