#!/usr/bin/env bash
# Lint, format check and type check, as CI runs them before the tests: ruff (settings in
# pyproject.toml) over the repo, mypy over lib/. `bash scripts/lint.sh --fix` applies ruff's fixes
# and formatting instead of only checking.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
if [ "${1:-}" = "--fix" ]; then
  .venv/bin/ruff check --fix .
  .venv/bin/ruff format .
else
  .venv/bin/ruff check .
  .venv/bin/ruff format --check .
fi
.venv/bin/mypy
