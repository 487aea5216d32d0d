/** The page shell: navigation, theme and auto-refresh controls, the read-only or key banner. */
import { searchWords } from "@soniq/core/ops";
import type { Principal } from "../auth.js";
import { type Html, html } from "../html.js";

export const NAV = [
  ["", "Overview"],
  ["/jobs", "Jobs"],
  ["/dead-letters", "Dead letters"],
  ["/flows", "Flows"],
  ["/workers", "Workers"],
  ["/queues", "Queues"],
  ["/schedules", "Schedules"],
  ["/webhooks", "Webhooks"],
  ["/audit", "Audit log"],
] as const;

export interface PageFrame {
  base: string;
  principal: Principal;
  keysConfigured: boolean;
  refreshMs: number;
  /** Whether the app's `redact` is active: the search then matches an id or a job name exactly. */
  redacting: boolean;
}

/** The search box of the jobs and dead-letter lists, labelled with what it matches. */
export function searchField(frame: PageFrame, value: string | undefined, size: number): Html {
  const label = frame.redacting ? "Search id or exact job name" : "Search id, name, error";
  return html`<label title="${searchWords(frame.redacting)}">${label}<input type="search" name="q" value="${value ?? ""}" size="${String(size)}"></label>`;
}

export interface PageContent {
  title: string;
  active: string;
  body: Html;
  /** false for pages that must not refresh under the user (forms). */
  refresh?: boolean;
}

function who(frame: PageFrame): Html {
  if (!frame.keysConfigured) {
    return html`<span class="small">read-only (no API keys configured)</span>`;
  }
  const logout =
    frame.principal.via === "session"
      ? html`<form method="post" action="${frame.base}/logout"><input type="hidden" name="csrf" value="${frame.principal.csrf ?? ""}"><button class="secondary" type="submit">Log out</button></form>`
      : "";
  return html`<span class="small">${frame.principal.label} (${frame.principal.scope})</span>${logout}`;
}

export function layout(frame: PageFrame, page: PageContent): Html {
  const nav = NAV.map(
    ([path, label]) =>
      html`<a href="${frame.base}${path || "/"}"${page.active === path ? html` aria-current="page"` : ""}>${label}</a>`,
  );
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${frame.principal.csrf ? html`<meta name="csrf-token" content="${frame.principal.csrf}">` : ""}
<title>${page.title} · Soniq</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${frame.base}/assets/app.css">
<script src="${frame.base}/assets/app.js"></script>
</head>
<body data-base="${frame.base}" data-refresh-ms="${frame.refreshMs}">
<a class="skip" href="#main">Skip to content</a>
<header class="top">
<a class="brand" href="${frame.base}/">Soniq</a>
<nav class="main" aria-label="Sections">${nav}</nav>
<div class="tools">
<span id="refresh-status" aria-live="polite">auto-refresh every ${Math.round(frame.refreshMs / 1000)} s</span>
<button type="button" class="secondary" id="refresh-toggle" aria-pressed="false">Pause auto-refresh</button>
<button type="button" class="secondary" id="theme-toggle">Theme: auto</button>
${who(frame)}
</div>
</header>
<div id="flash" role="status" aria-live="polite"></div>
<main id="main" tabindex="-1"${page.refresh === false ? html` data-refresh="off"` : ""}>
${page.body}
</main>
</body>
</html>`;
}

export function statusBadge(status: string): Html {
  return html`<span class="status ${status.replace(/[^a-z_]/g, "")}">${status}</span>`;
}

export function writeHint(frame: PageFrame): Html {
  if (!frame.keysConfigured) {
    return html`<p class="muted small">Actions are disabled: configure <code>apiKeys</code> with a write key to enable them.</p>`;
  }
  if (frame.principal.scope !== "write") return html`<p class="muted small">Your key is read-only.</p>`;
  return html``;
}

export function canWrite(frame: PageFrame): boolean {
  return frame.keysConfigured && frame.principal.scope === "write";
}

/** First, previous and next links; each keeps the filters and swaps the cursor. */
export function pagerLinks(
  base: string,
  path: string,
  params: Record<string, string | undefined>,
  page: { nextCursor: string | null; prevCursor: string | null },
): Html {
  const keep = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v && k !== "cursor") keep.set(k, v);
  const at = (cursor: string | null) => {
    const q = new URLSearchParams(keep);
    if (cursor) q.set("cursor", cursor);
    return `${base}${path}?${q.toString()}`;
  };
  return html`<nav class="pager" aria-label="Pages">${
    page.prevCursor
      ? html`<a href="${at(null)}">« First page</a><a href="${at(page.prevCursor)}" rel="prev" data-testid="prev-page">‹ Previous page</a>`
      : ""
  }${
    page.nextCursor
      ? html`<a href="${at(page.nextCursor)}" rel="next" data-testid="next-page">Next page ›</a>`
      : html`<span class="muted small">End of list</span>`
  }</nav>`;
}
