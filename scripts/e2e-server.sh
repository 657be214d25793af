#!/usr/bin/env bash
# The e2e web server, started by Playwright (playwright.config.ts). Playwright starts its webServer
# before globalSetup, so the database is prepared here, then a production build is served on its
# own port, dist folder and database: ceilings_e2e on the TEST_DATABASE_URL server, or an embedded
# server in DATA_DIR (.data-e2e) without one. Both are recreated from nothing on every run.
set -euo pipefail
cd "$(dirname "$0")/.."

: "${E2E_PORT:=3100}"
: "${DATA_DIR:=.data-e2e}"
: "${NEXT_DIST_DIR:=.next-e2e}"
export DATA_DIR NEXT_DIST_DIR
# No telemetry notice in the test log, and nothing sent to Vercel from a test run.
export NEXT_TELEMETRY_DISABLED=1

if [ -n "${E2E_DATABASE_URL:-}" ]; then
  export DATABASE_URL="$E2E_DATABASE_URL"
  echo "e2e: database ${DATABASE_URL##*/} on the TEST_DATABASE_URL server"
else
  # Never fall through to a developer's own DATABASE_URL: e2e recreates its database.
  unset DATABASE_URL
  echo "e2e: embedded database in $DATA_DIR"
fi

npx tsx scripts/e2e-prepare.ts
if [ -n "${E2E_DATABASE_URL:-}" ]; then
  # Prepared as the owner; served as the least-privilege app role, as in production.
  DATABASE_URL="$(npx tsx scripts/e2e-app-role.ts "$E2E_DATABASE_URL")"
  export DATABASE_URL
fi
npx next build
npx next start --hostname 127.0.0.1 --port "$E2E_PORT" &
server=$!
stop() {
  kill -TERM "$server" 2>/dev/null || true
  wait "$server" || true
  # The embedded server e2e-prepare started for this run goes with it.
  if [ -z "${DATABASE_URL:-}" ]; then npx tsx scripts/db-stop.ts || true; fi
}
trap stop TERM INT
wait "$server" || true
stop
