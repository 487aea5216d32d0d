/**
 * Every name an entry exports, types included, read by the TypeScript compiler from the entry's source: what a
 * user can `import { ... }` from it.
 */
import path from "node:path";
import ts from "typescript";

const SRC = path.resolve(import.meta.dirname, "../src");

export function exportedNames(entries: readonly string[]): Map<string, string[]> {
  const files = entries.map((e) => path.join(SRC, `${e}.ts`));
  const program = ts.createProgram(files, {
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2023,
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  });
  const checker = program.getTypeChecker();
  const out = new Map<string, string[]>();
  for (const [i, file] of files.entries()) {
    const source = program.getSourceFile(file);
    const symbol = source && checker.getSymbolAtLocation(source);
    if (!symbol) throw new Error(`cannot read ${file}`);
    out.set(
      entries[i] as string,
      checker
        .getExportsOfModule(symbol)
        .map((s) => s.getName())
        .sort(),
    );
  }
  return out;
}
