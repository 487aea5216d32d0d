/**
 * Durations and instants as an operator types them: `500ms`, `30s`, `15m`, `2h`, `7d` (the words
 * `durationWords` prints), and for a filter's `since` / `until` an ISO date or such a duration meaning "that
 * long ago". The CLI's flags and the MCP server's tool inputs read them the same way; each surface words its
 * own refusal.
 */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^(\d+)\s*(ms|s|m|h|d)$/;

/** Milliseconds from `500ms`, `30s`, `15m`, `2h` or `7d` (spaces around it allowed); null when it is not one. */
export function parseDuration(text: string): number | null {
  const m = DURATION.exec(text.trim());
  return m ? Number(m[1]) * (UNIT_MS[m[2] as string] as number) : null;
}

/** An ISO date, or a duration meaning that long before `now` (epoch ms); null when it is neither. */
export function parsePastInstant(text: string, now: number): Date | null {
  const ago = parseDuration(text);
  if (ago !== null) return new Date(now - ago);
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}
