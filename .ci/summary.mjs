// Prints the plain "N passed, N failed" line from vitest's JSON report (last line of CI output).
import { readFileSync } from "node:fs";

const file = process.argv[2];
let report;
try {
  report = JSON.parse(readFileSync(file, "utf8"));
} catch {
  console.log("no test report was written");
  console.log("0 passed, 1 failed");
  process.exit(1);
}
const passed = report.numPassedTests ?? 0;
// A suite that fails to load has no failed tests but fails the run: count it as one failure.
const failed = (report.numFailedTests ?? 0) || (report.success === false ? 1 : 0);
const skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
console.log(
  skipped > 0 ? `${passed} passed, ${failed} failed, ${skipped} skipped` : `${passed} passed, ${failed} failed`,
);
process.exit(failed > 0 || passed === 0 ? 1 : 0);
