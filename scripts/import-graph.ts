/**
 * The import graph of the project's TypeScript (type-only imports included, as a reader follows
 * them), its cycles and the imports that run up the rooms' layers, for scripts/code-health.ts and
 * the architecture tests.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import ts from "typescript";

/** Every .ts file below `roots` (relative to the working directory), declaration files left out. */
export function sourceFiles(roots: readonly string[]): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return name === "node_modules" ? [] : walk(path);
      return /\.tsx?$/.test(name) && !name.endsWith(".d.ts") ? [path] : [];
    });
  return roots.flatMap((root) => walk(root));
}

const isFile = (path: string): boolean => {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
};

/** The relative imports and re-exports of one parsed file, as paths from the working directory. */
export function relativeImports(file: string, source: ts.SourceFile): string[] {
  const found: string[] = [];
  for (const statement of source.statements) {
    if (
      (ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement)) &&
      statement.moduleSpecifier &&
      ts.isStringLiteral(statement.moduleSpecifier)
    ) {
      const spec = statement.moduleSpecifier.text;
      if (!spec.startsWith(".")) continue;
      const base = resolve(dirname(file), spec);
      const target = [`${base}.ts`, join(base, "index.ts"), base].find(isFile);
      if (target) found.push(relative(process.cwd(), target));
    }
  }
  return found;
}

export function parse(file: string): ts.SourceFile {
  return ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
}

/** Strongly connected groups of more than one file (Tarjan): each is an import cycle. */
export function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, next);
    low.set(node, next++);
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        connect(target);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(target) ?? 0));
      } else if (onStack.has(target)) low.set(node, Math.min(low.get(node) ?? 0, index.get(target) ?? 0));
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop();
      if (member === undefined) break;
      onStack.delete(member);
      group.push(member);
    } while (member !== node);
    if (group.length > 1) cycles.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) connect(node);
  return cycles;
}

/** The import graph of every file below `roots`. */
export function importGraph(roots: readonly string[]): Map<string, string[]> {
  return new Map(sourceFiles(roots).map((file) => [file, relativeImports(file, parse(file))]));
}

/** The room of a file of shared/: its first folder, or the name of a loose file. */
export function roomOf(file: string): string {
  const parts = file.split("/");
  return parts.length > 2 ? parts[1]! : parts[1]!.replace(/\.ts$/, "");
}

/** Every import of a file of shared/ into a room not below its own (same room excepted), as `file -> file`. */
export function upwardArrows(
  graph: ReadonlyMap<string, readonly string[]>,
  layers: readonly (readonly string[])[],
): string[] {
  const layerOf = new Map(layers.flatMap((rooms, i) => rooms.map((room) => [room, i] as const)));
  const arrows: string[] = [];
  for (const [file, imports] of graph) {
    if (!file.startsWith("shared/")) continue;
    const from = roomOf(file);
    for (const target of imports) {
      const to = roomOf(target);
      if (to === from) continue;
      if ((layerOf.get(to) ?? Infinity) >= (layerOf.get(from) ?? -1)) arrows.push(`${file} -> ${target}`);
    }
  }
  return arrows.sort();
}
