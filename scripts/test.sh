#!/usr/bin/env bash
# npm test: lint, typecheck, unit and integration tests (Vitest), then e2e in Chromium against a
# production build (Playwright), on a real Postgres server and a real Chromium found or got here,
# then on CI the HA chaos test. Every step runs even if an earlier one failed, so one run shows
# everything that is wrong; the exit status is non-zero if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."

# The rule of lib/ci.ts, in bash: unset, "", "0" and "false" in any case are a local run.
is_ci() {
  local ci="${CI:-}"
  case "${ci,,}" in
    "" | 0 | false) return 1 ;;
    *) return 0 ;;
  esac
}
skipped=()

# Every suite runs on a real Postgres server: TEST_DATABASE_URL's, else a throwaway embedded one
# started for this run (own folder and port, removed at the end), so nothing is skipped.
if [ -z "${TEST_DATABASE_URL:-}" ]; then
  test_dir=$(mktemp -d "${TMPDIR:-/tmp}/ceilings-test-XXXXXX")
  trap 'npx tsx scripts/test-database.ts stop "$test_dir"' EXIT
  echo "==> no TEST_DATABASE_URL: starting a throwaway embedded Postgres in $test_dir"
  TEST_DATABASE_URL=$(npx tsx scripts/test-database.ts start "$test_dir") || exit 1
  export TEST_DATABASE_URL
fi

# A browser without set-up (scripts/find-chromium.ts says which one, and where it came from).
if ! found=$(npx tsx scripts/find-chromium.ts); then
  echo "FAILED: no Chromium for the e2e tests" >&2
  exit 1
fi
export PLAYWRIGHT_CHROMIUM_PATH="${found%%$'\t'*}"
echo "==> e2e browser: $PLAYWRIGHT_CHROMIUM_PATH (${found#*$'\t'})"

passed=()
failed=()
step() {
  local name=$1
  shift
  echo
  echo "==> $name: $*"
  if "$@"; then passed+=("$name"); else failed+=("$name"); fi
}

step lint npm run --silent lint
step typecheck npm run --silent typecheck
rm -rf .test-reports
step "unit and integration tests" npx vitest run --reporter=default --reporter=json --outputFile.json=.test-reports/vitest.json
step e2e npx playwright test
# The HA chaos test (npm run test:ha) needs Patroni, etcd and root, and takes about two minutes:
# it runs on CI (.ci/run installs them) and locally with TEST_HA=1.
if is_ci || [ "${TEST_HA:-}" = 1 ]; then
  step "HA chaos test" npm run --silent test:ha
else
  skipped+=("HA chaos test (npm run test:ha): runs on CI or with TEST_HA=1")
fi

echo
echo "==> summary"
for s in "${passed[@]}"; do echo "  passed   $s"; done
for s in "${failed[@]}"; do echo "  FAILED   $s"; done
for s in "${skipped[@]}"; do echo "  not run  $s"; done
echo "  steps: ${#passed[@]} passed, ${#failed[@]} failed"
# The last line counts tests, from the runners' JSON reports.
node scripts/test-counts.mjs .test-reports/vitest.json .test-reports/playwright.json
[ "${#failed[@]}" -eq 0 ]
