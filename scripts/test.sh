#!/usr/bin/env bash
# npm test: lint, typecheck, unit and integration tests (Vitest), then e2e in Chromium against a
# production build (Playwright), then on CI the HA chaos test. Every step runs even if an earlier one failed, so one run shows
# everything that is wrong; the exit status is non-zero if any step failed.
set -uo pipefail
cd "$(dirname "$0")/.."

is_ci() {
  case "${CI:-}" in
    "" | 0 | false | FALSE | False) return 1 ;;
    *) return 0 ;;
  esac
}

skipped=()
if [ -z "${TEST_DATABASE_URL:-}" ]; then
  if is_ci; then
    echo "FAILED: CI is set but TEST_DATABASE_URL is not: the Postgres integration suites cannot be skipped on CI." >&2
    exit 1
  fi
  echo "SKIPPED: integration suites need TEST_DATABASE_URL, e.g."
  echo "         TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm test"
  echo "         (e2e runs on the embedded database in .data-e2e instead)"
  skipped+=("integration suites (*.int.test.ts): TEST_DATABASE_URL is not set")
fi

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
for s in "${skipped[@]}"; do echo "  SKIPPED  $s"; done
echo "  steps: ${#passed[@]} passed, ${#failed[@]} failed, ${#skipped[@]} skipped"
# The last line counts tests, from the runners' JSON reports.
node scripts/test-counts.mjs .test-reports/vitest.json .test-reports/playwright.json
[ "${#failed[@]}" -eq 0 ]
