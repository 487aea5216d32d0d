/**
 * A flow's steps as a tree for a terminal: each step with no parents is a root, each dependent sits under
 * its first parent (in the flow's order) with its other parents named, and a step reached again through
 * another path is written once more as `ref (see above)`, so a diamond or a fan-in stays a readable tree
 * and no step is ever drawn twice in full.
 */

export interface TreeStep {
  ref: string;
  jobId: string;
  jobName: string;
  state: string;
  dependsOn: readonly string[];
}

export interface TreeStyle {
  /** The state word, coloured or not. */
  state(word: string): string;
  dim(text: string): string;
}

const PLAIN: TreeStyle = { state: (w) => w, dim: (t) => t };

/** The tree's lines, without a trailing newline. */
export function flowTree(steps: readonly TreeStep[], style: TreeStyle = PLAIN): string[] {
  const byRef = new Map(steps.map((s) => [s.ref, s]));
  const children = new Map<string, string[]>(steps.map((s) => [s.ref, []]));
  const roots: string[] = [];
  for (const step of steps) {
    const parents = step.dependsOn.filter((p) => byRef.has(p));
    if (parents.length === 0) roots.push(step.ref);
    for (const parent of parents) children.get(parent)?.push(step.ref);
  }
  const drawn = new Set<string>();
  const lines: string[] = [];

  const label = (step: TreeStep, under: string | null): string => {
    const others = step.dependsOn.filter((p) => p !== under);
    const after = under !== null && others.length > 0 ? style.dim(`  (also after ${others.join(", ")})`) : "";
    return `${step.ref}  ${style.state(step.state)}  ${step.jobName}  ${style.dim(step.jobId)}${after}`;
  };

  // Iterative depth-first walk: a fan-out of 10,000 must not recurse 10,000 frames deep.
  const stack: { ref: string; prefix: string; last: boolean; under: string | null; root: boolean }[] = [];
  for (let i = roots.length - 1; i >= 0; i--)
    stack.push({
      ref: roots[i] as string,
      prefix: "",
      last: i === roots.length - 1,
      under: null,
      root: true,
    });
  while (stack.length > 0) {
    const item = stack.pop() as (typeof stack)[number];
    const step = byRef.get(item.ref) as TreeStep;
    const branch = item.root ? "" : item.last ? "└── " : "├── ";
    if (drawn.has(item.ref)) {
      lines.push(`${item.prefix}${branch}${step.ref} ${style.dim("(see above)")}`);
      continue;
    }
    drawn.add(item.ref);
    lines.push(`${item.prefix}${branch}${label(step, item.under)}`);
    const next = children.get(item.ref) ?? [];
    const prefix = item.root ? "" : `${item.prefix}${item.last ? "    " : "│   "}`;
    for (let i = next.length - 1; i >= 0; i--)
      stack.push({
        ref: next[i] as string,
        prefix,
        last: i === next.length - 1,
        under: item.ref,
        root: false,
      });
  }
  // Steps in a cycle of unknown parents (never valid, but a tree must not hide a step).
  for (const step of steps) if (!drawn.has(step.ref)) lines.push(label(step, null));
  return lines;
}
