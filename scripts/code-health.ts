/**
 * Code-health figures for a change's notes: files over 400 lines, functions over 80 lines (and, in
 * shared/, those over 150 by name), `any` in source, and import cycles (type-only imports included).
 * Run: npx tsx scripts/code-health.ts
 */
import ts from "typescript";
import { importCycles, importGraph, parse, sourceFiles } from "./import-graph";

const ALL_ROOTS = ["shared", "workers", "deno", "cli", "bench", "scripts", "test"];
const SOURCE_ROOTS = ["shared", "workers", "deno", "cli"];

let longFiles = 0;
for (const file of sourceFiles(ALL_ROOTS))
  if (parse(file).getLineAndCharacterOfPosition(parse(file).getEnd()).line + 1 > 400) longFiles++;

let longFunctions = 0;
const veryLong: string[] = [];
let anyCount = 0;
for (const file of sourceFiles(SOURCE_ROOTS)) {
  const source = parse(file);
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const lines =
        source.getLineAndCharacterOfPosition(node.getEnd()).line -
        source.getLineAndCharacterOfPosition(node.getStart()).line +
        1;
      if (lines > 80) longFunctions++;
      if (lines > 150 && file.startsWith("shared/")) {
        const name = "name" in node && node.name ? node.name.getText(source) : "(anonymous)";
        veryLong.push(`${file} ${name}: ${lines}`);
      }
    }
    if (node.kind === ts.SyntaxKind.AnyKeyword) anyCount++;
    ts.forEachChild(node, visit);
  };
  visit(source);
}

const cycles = importCycles(importGraph(SOURCE_ROOTS));
console.log(`files over 400 lines (${ALL_ROOTS.join(", ")}): ${longFiles}`);
console.log(`functions over 80 lines (${SOURCE_ROOTS.join(", ")}): ${longFunctions}`);
console.log(`functions over 150 lines (shared): ${veryLong.length}`);
for (const entry of veryLong) console.log(`  ${entry}`);
console.log(`any (${SOURCE_ROOTS.join(", ")}): ${anyCount}`);
console.log(`import cycles: ${cycles.length}`);
for (const cycle of cycles) console.log(`  ${cycle.join(" -> ")}`);
