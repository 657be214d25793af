// Sums test counts from Vitest's and Playwright's JSON reports into one closing line:
// "N passed, N failed, N skipped". A missing report (its runner crashed) counts as one failure.
// An e2e test that failed and then passed on CI's one retry is named above that line, so a flake is
// seen and fixed rather than hidden.
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
    for (const title of flakyTitles(report.suites ?? [], [])) console.log(`  flaky (failed, then passed on its retry): ${title}`);
    failed += report.stats.unexpected;
    skipped += report.stats.skipped;
  } else {
    passed += report.numPassedTests ?? 0;
    failed += report.numFailedTests ?? 0;
    skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  }
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);

/** The titles of Playwright's tests whose outcome is "flaky", walking nested suites. */
function flakyTitles(suites, path) {
  const out = [];
  for (const suite of suites) {
    const here = suite.title ? [...path, suite.title] : path;
    for (const spec of suite.specs ?? []) {
      if ((spec.tests ?? []).some((t) => t.status === "flaky")) out.push([...here, spec.title].join(" › "));
    }
    out.push(...flakyTitles(suite.suites ?? [], here));
  }
  return out;
}
