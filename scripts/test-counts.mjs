// Sums test counts from Vitest's and Playwright's JSON reports into one closing line:
// "N passed, N failed, N skipped". A missing report (its runner crashed) counts as one failure.
// Above it, each failed test by name, and each e2e test that failed and then passed on its one
// retry, so a failure or a flake is seen in the last lines of a long log, and fixed, not hidden.
import { existsSync, readFileSync } from "node:fs";

let passed = 0;
let failed = 0;
let skipped = 0;
for (const file of process.argv.slice(2)) {
  if (!existsSync(file)) {
    console.log(`  no report at ${file}`);
    failed += 1;
    continue;
  }
  const report = JSON.parse(readFileSync(file, "utf8"));
  if (report.stats && "expected" in report.stats) {
    // Playwright: expected = passed, unexpected = failed, flaky passed on retry.
    passed += report.stats.expected + (report.stats.flaky ?? 0);
    for (const title of titlesWith(report.suites ?? [], [], "flaky")) console.log(`  flaky (failed, then passed on its retry): ${title}`);
    for (const title of titlesWith(report.suites ?? [], [], "unexpected")) console.log(`  failed: ${title}`);
    failed += report.stats.unexpected;
    skipped += report.stats.skipped;
  } else {
    passed += report.numPassedTests ?? 0;
    for (const file of report.testResults ?? []) {
      for (const test of file.assertionResults ?? [])
        if (test.status === "failed") console.log(`  failed: ${file.name?.replace(`${process.cwd()}/`, "")} › ${test.fullName}`);
    }
    failed += report.numFailedTests ?? 0;
    skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  }
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);

/** The titles of Playwright's tests whose outcome is `status`, walking nested suites. */
function titlesWith(suites, path, status) {
  const out = [];
  for (const suite of suites) {
    const here = suite.title ? [...path, suite.title] : path;
    for (const spec of suite.specs ?? []) {
      if ((spec.tests ?? []).some((t) => t.status === status)) out.push([...here, spec.title].join(" › "));
    }
    out.push(...titlesWith(suite.suites ?? [], here, status));
  }
  return out;
}
