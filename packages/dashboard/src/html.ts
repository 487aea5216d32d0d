/**
 * HTML built only through `html```: every interpolated value is escaped unless it is already `Html`
 * (produced by `html` itself or by `raw` for text the dashboard wrote).
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
  "`": "&#96;",
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`]/g, (c) => ESCAPES[c] ?? c);
}

function render(value: unknown): string {
  if (value === null || value === undefined || value === false) return "";
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join("");
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? "";
  for (let i = 0; i < values.length; i++) out += render(values[i]) + (strings[i + 1] ?? "");
  return new Html(out);
}

/** Trusted markup the dashboard produced itself (never user or job data). */
export function raw(markup: string): Html {
  return new Html(markup);
}

/** JSON for a `<pre>` block: pretty, and escaped by `html` when interpolated. */
export function prettyJson(value: unknown): string {
  if (value === undefined) return "";
  try {
    return JSON.stringify(value, null, 2) ?? "";
  } catch {
    return String(value);
  }
}

export function formatDate(value: Date | string | number | null | undefined): string {
  if (value === null || value === undefined) return "—";
  const d = value instanceof Date ? value : new Date(value);
  return Number.isNaN(d.getTime())
    ? "—"
    : d
        .toISOString()
        .replace("T", " ")
        .replace(/\.\d+Z$/, "Z");
}

/** A row's `argsVersion`: the number, or "unversioned" (none stored: taken as current). */
export function formatArgsVersion(version: number | null | undefined): string {
  return version === null || version === undefined ? "unversioned" : String(version);
}

export function formatDuration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  const m = s / 60;
  if (m < 60) return `${m.toFixed(1)} min`;
  const h = m / 60;
  if (h < 48) return `${h.toFixed(1)} h`;
  return `${(h / 24).toFixed(1)} d`;
}

export function formatCount(n: number): string {
  return n.toLocaleString("en-US");
}

/** An estimated count, to two significant figures: "about 1.0M", "about 250k", "about 12k". */
export function formatEstimate(n: number): string {
  if (n >= 1_000_000) return `about ${(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1_000) return `about ${n >= 100_000 ? Math.round(n / 10_000) * 10 : Math.round(n / 1_000)}k`;
  return `about ${n}`;
}
