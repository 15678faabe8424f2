#!/usr/bin/env bash
# A newcomer's first run: fresh clone, the README's first command, then health and config.
# Usage: bash scripts/newcomer.sh [repo-url-or-path]   (default: this checkout's committed HEAD)
set -euo pipefail
src=${1:-$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)}
dir=$(mktemp -d)
trap 'kill -TERM "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
git clone -q "$src" "$dir/repo"
cd "$dir/repo"
port=${PORT:-42169}; anvil_port=${ANVIL_PORT:-8645}
export PORT=$port ANVIL_PORT=$anvil_port
npm install --no-audit --no-fund >"$dir/install.log" 2>&1
npm start >"$dir/start.log" 2>&1 &
pid=$!
for _ in $(seq 1 240); do
  curl -sf "http://localhost:$port/api/v1/health" >/dev/null && break
  sleep 0.5
done
echo "health: $(curl -s "http://localhost:$port/api/v1/health")"
echo "config: $(curl -s "http://localhost:$port/api/v1/config" | head -c 200)..."
curl -sf "http://localhost:$port/api/v1/config" | grep -q '"chain_id":4663'
echo "newcomer run OK"
