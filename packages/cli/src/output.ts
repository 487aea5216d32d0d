/**
 * Output for people and for scripts. People get aligned tables, relative times and colour (only on a TTY,
 * never with NO_COLOR); scripts get `--json`: one JSON document on stdout, dates as ISO strings.
 * Stored text (last errors, names, args) may carry control characters: every human line goes through
 * `terminalSafe` (only the Printer's own colour codes pass), and JSON escapes DEL and C1 as well (issue 43).
 */
import { inspect, styleText } from "node:util";
import { shortId as coreShortId, durationWords } from "@soniq/core/ops";

export interface Io {
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  env: NodeJS.ProcessEnv;
  now: () => number;
}

export const processIo = (): Io => ({
  out: process.stdout,
  err: process.stderr,
  env: process.env,
  now: Date.now,
});

type Style = "bold" | "dim" | "red" | "green" | "yellow" | "cyan";
const STYLES: readonly Style[] = ["bold", "dim", "red", "green", "yellow", "cyan"];

// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters made visible
const CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters made visible
const LINE_CONTROLS = /[\u0000-\u001f\u007f-\u009f]/g;

/**
 * `text` safe to write to a terminal: C0 controls (but newline and tab, unless `newlines` is false), DEL and
 * C1 controls become visible `\u{1b}` escapes, so stored text cannot move the cursor, set the title or hide text.
 */
export function terminalSafe(text: string, options: { newlines?: boolean } = {}): string {
  const pattern = options.newlines === false ? LINE_CONTROLS : CONTROLS;
  return text.replace(pattern, (c) => `\\u{${(c.codePointAt(0) ?? 0).toString(16)}}`);
}

/** JSON text with DEL and C1 escaped too (JSON.stringify escapes only C0); they occur only inside strings. */
export function jsonText(value: unknown, indent?: number): string {
  return String(JSON.stringify(value, null, indent)).replace(
    /[\u007f-\u009f]/g,
    (c) => `\\u${(c.codePointAt(0) ?? 0).toString(16).padStart(4, "0")}`,
  );
}

/** The SGR sequences `paint` writes (open and close of each style): the only escapes a human line keeps. */
const OWN_SGR = new RegExp(
  `(${[
    ...new Set(STYLES.flatMap((style) => (inspect.colors[style] ?? []).map((code) => `\\u001b\\[${code}m`))),
  ].join("|")})`,
);

export class Printer {
  readonly color: boolean;

  constructor(readonly io: Io) {
    const noColor = io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== "";
    this.color = !noColor && io.out.isTTY === true && io.env.TERM !== "dumb";
  }

  paint(style: Style, text: string): string {
    // The Printer decided (NO_COLOR, a terminal, TERM): node must not re-decide from CI or the stream.
    return this.color ? styleText(style, text, { validateStream: false }) : text;
  }

  /** Writes a line for people: control characters escaped, the Printer's own colour codes kept. */
  line(text = ""): void {
    this.io.out.write(`${this.#safe(text)}\n`);
  }

  /** `text` with control characters escaped, but the colour codes `paint` wrote (idempotent). */
  #safe(text: string): string {
    if (!this.color) return terminalSafe(text);
    return text
      .split(OWN_SGR)
      .map((part, i) => (i % 2 === 1 ? part : terminalSafe(part)))
      .join("");
  }

  /** One JSON document (`compact`: on one line, for JSON lines). */
  json(value: unknown, compact = false): void {
    this.io.out.write(`${jsonText(value, compact ? undefined : 2)}\n`);
  }

  /** Status words coloured by what they mean. */
  status(word: string): string {
    if (["done", "active", "live", "fired", "ok", "succeeded", "delivered"].includes(word))
      return this.paint("green", word);
    if (["dead_letter", "dead_lettered", "failed", "stopped", "cancelled", "missed"].includes(word))
      return this.paint("red", word);
    if (["processing", "stopping", "stale", "paused", "skipped", "held", "running", "pending"].includes(word))
      return this.paint("yellow", word);
    return word;
  }

  /** An aligned table; `rows` are already formatted strings (colour codes do not count toward width). */
  table(headers: string[], rows: string[][]): void {
    // Escaped before measuring, so a cell with control characters keeps its column aligned.
    rows = rows.map((r) => r.map((c) => this.#safe(c)));
    const width = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => visible(r[i] ?? "").length)));
    const pad = (cells: string[]) =>
      cells
        .map((c, i) => (i === cells.length - 1 ? c : c + " ".repeat((width[i] ?? 0) - visible(c).length)))
        .join("  ")
        .trimEnd();
    this.line(this.paint("bold", pad(headers)));
    for (const row of rows) this.line(pad(row));
  }

  ago(date: Date | null | undefined): string {
    return relativeTime(date, this.io.now());
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: strips ANSI colour codes to measure widths
const ANSI = /\u001b\[[0-9;]*m/g;
const visible = (s: string): string => s.replace(ANSI, "");

/** "3 min ago", "in 12 s", "just now"; "-" for none. */
export function relativeTime(date: Date | null | undefined, now: number): string {
  if (!date) return "-";
  const ms = date.getTime() - now;
  const abs = Math.abs(ms);
  if (abs < 1000) return "just now";
  const text = duration(abs);
  return ms < 0 ? `${text} ago` : `in ${text}`;
}

/** 950 ms, 12 s, 3 min, 2 h, 4 d. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${Math.floor(ms / 1000)} s`;
  if (ms < 3_600_000) return `${Math.floor(ms / 60_000)} min`;
  if (ms < 86_400_000) return `${Math.floor(ms / 3_600_000)} h`;
  return `${Math.floor(ms / 86_400_000)} d`;
}

/** The first line of an error text, cut to `max` characters. */
export function firstLine(text: string | null | undefined, max = 60): string {
  if (!text) return "-";
  const line = text.split("\n")[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** An id as tables and log lines show it (core's rule: its random tail), or "-". */
export const shortId = (id: string | null | undefined): string => (id ? coreShortId(id) : "-");

/** A progress bar on stderr for bulk work, drawn only when stderr is a TTY. */
export class Progress {
  #done = 0;
  #total: number;
  /** Whether the bar is drawn at all (only on a terminal). */
  readonly drawn: boolean;

  constructor(
    private readonly io: Io,
    total: number,
    private readonly label: string,
  ) {
    this.#total = total;
    this.drawn = io.err.isTTY === true;
  }

  tick(): void {
    this.set(this.#done + 1, this.#total);
  }

  /** Redraws at `done` of `total` (for work that reports its own counts). */
  set(done: number, total: number): void {
    this.#done = done;
    this.#total = total;
    if (!this.drawn || total === 0) return;
    const width = 30;
    const filled = Math.round((Math.min(done, total) / total) * width);
    this.io.err.write(
      `\r${this.label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total}`,
    );
  }

  end(): void {
    if (this.drawn && this.#total > 0) this.io.err.write("\n");
  }
}

/** An interval in core's duration words: 1000 -> "1s", 5_400_000 -> "1h30m", 1500 -> "1s500ms". */
export const interval = durationWords;
