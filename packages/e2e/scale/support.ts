/** Scale-suite support: sizes (full or --short) and the figures each scenario prints. */

export const SHORT = process.env.SCALE_SHORT === "1";
/** `full` normally, `short` with --short / SCALE_SHORT=1. */
export const size = (full: number, short: number): number => (SHORT ? short : full);

/** One line of figures, printed as `SCALE FIGURE {...}` (the figures of docs/guide/past-one-machine.md come from these lines). */
export function figure(row: Record<string, string | number>): void {
  process.stdout.write(`SCALE FIGURE ${JSON.stringify(row)}\n`);
}
