// Sums test counts from Vitest's and Playwright's JSON reports into one closing line:
// "N passed, N failed, N skipped". A missing report (its runner crashed) counts as one failure.
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
    failed += report.stats.unexpected;
    skipped += report.stats.skipped;
  } else {
    passed += report.numPassedTests ?? 0;
    failed += report.numFailedTests ?? 0;
    skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  }
}
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
