/** The flows list (filter by state and name) and one flow's page: its graph, its steps, cancel and replay. */
import { FLOW_STATES, type Flow, type FlowStep, type FlowSummary } from "@soniq/core";
import { shortId } from "@soniq/core/ops";
import { heldParents, isTerminalFlow, stepHref } from "../data/flows.js";
import { formatDate, type Html, html } from "../html.js";
import { flowGraph } from "./flow-graph.js";
import { canWrite, type PageFrame, statusBadge, writeHint } from "./layout.js";

function counts(f: FlowSummary): string {
  const { total, done, held, failed } = f.counts;
  return [`${done}/${total} done`, held ? `${held} held` : "", failed ? `${failed} failed` : ""]
    .filter(Boolean)
    .join(", ");
}

export function flowsPage(
  frame: PageFrame,
  p: Record<string, string | undefined>,
  flows: FlowSummary[] | null,
  error: string | null,
): Html {
  const base = frame.base;
  const form = html`<form class="filters" method="get" action="${base}/flows" role="search">
<label>State<select name="state"><option value="">any</option>${FLOW_STATES.map(
    (s) => html`<option value="${s}"${p.state === s ? html` selected` : ""}>${s}</option>`,
  )}</select></label>
<label>Name<input name="name" value="${p.name ?? ""}" placeholder="orders.fulfil" size="22"></label>
<button type="submit">Filter</button> <a href="${base}/flows">Clear</a></form>`;
  if (error || !flows) {
    return html`<h1>Flows</h1>${form}<div class="banner bad" role="alert">${error ?? "Invalid filter"}</div>`;
  }
  const rows = flows.map(
    (
      f,
    ) => html`<tr data-flow-id="${f.id}"><td><a href="${base}/flows/${f.id}"><code>${shortId(f.id)}</code></a></td>
<td>${f.name ?? html`<span class="muted">—</span>`}</td><td>${statusBadge(f.state)}</td><td>${counts(f)}</td>
<td class="small">${formatDate(f.createdAt)}</td><td class="small">${formatDate(f.finishedAt)}</td></tr>`,
  );
  return html`<h1>Flows</h1>${form}
<table data-testid="flows"><thead><tr><th scope="col">Id</th><th scope="col">Name</th><th scope="col">State</th><th scope="col">Steps</th><th scope="col">Created</th><th scope="col">Finished</th></tr></thead>
<tbody>${rows.length ? rows : html`<tr><td colspan="6" class="muted">No flows match.</td></tr>`}</tbody></table>
<p class="muted small">Newest first, at most ${flows.length >= 100 ? "the 100 newest shown; narrow the filter" : "100"}.</p>`;
}

function actions(frame: PageFrame, flow: Flow): Html {
  if (isTerminalFlow(flow)) return html``;
  if (!canWrite(frame)) return writeHint(frame);
  const base = frame.base;
  const replays = heldParents(flow).map(
    (s) =>
      html`<button type="button" data-post="${base}/api/flows/${flow.id}/steps/${encodeURIComponent(s.ref)}/replay" data-done="Replayed ${s.ref}: the held steps run when it is done." data-testid="replay-${s.ref}">Replay ${s.ref}</button>`,
  );
  return html`<div class="actions">${replays}<button type="button" class="danger" data-post="${base}/api/flows/${flow.id}/cancel" data-confirm="Click again to cancel the flow" data-done="Flow cancelled." data-testid="cancel-flow">Cancel flow</button></div>`;
}

const LEGEND = ["waiting", "queued", "processing", "done", "held", "dead_lettered", "cancelled"];

function stepRow(base: string, s: FlowStep): Html {
  const href = stepHref(base, s);
  const id = html`<code>${shortId(s.jobId)}</code>`;
  return html`<tr data-step="${s.ref}"><td><strong>${s.ref}</strong></td><td>${s.jobName}</td><td>${statusBadge(s.state)}</td>
<td>${s.dependsOn.length ? s.dependsOn.join(", ") : html`<span class="muted">—</span>`}</td><td>${s.onParentFailure}</td>
<td>${href ? html`<a href="${href}">${id}</a>` : id}${s.jobIds && s.jobIds.length > 1 ? html` <span class="muted small">(${s.jobIds.length - 1} earlier)</span>` : ""}</td>
<td class="small">${s.reason ?? ""}</td></tr>`;
}

export function flowDetailPage(frame: PageFrame, flow: Flow): Html {
  const base = frame.base;
  const graph = flowGraph(flow.steps.map((s) => ({ ...s, href: stepHref(base, s) })));
  const waitingOnReplay = flow.state === "held" && heldParents(flow).length === 0;
  const held =
    flow.state !== "held"
      ? ""
      : waitingOnReplay
        ? html`<div class="banner" role="status" data-testid="flow-banner">Held steps wait for a replayed parent: they run when it is done.</div>`
        : html`<div class="banner warn" role="status" data-testid="flow-banner">Held: a parent was dead-lettered. Replay it to resume the flow, or purge its dead letter to cancel the held steps.</div>`;
  return html`<h1>Flow <code>${flow.id}</code></h1>
<div class="actions">${statusBadge(flow.state)}</div>${held}${actions(frame, flow)}
<div class="panel"><dl class="kv" data-testid="flow-fields">
<dt>Name</dt><dd>${flow.name ?? "—"}</dd><dt>State</dt><dd>${flow.state}</dd><dt>Steps</dt><dd>${counts(flow)}</dd>
<dt>Created</dt><dd>${formatDate(flow.createdAt)}</dd><dt>Finished</dt><dd>${formatDate(flow.finishedAt)}</dd></dl></div>
<h2>Graph</h2><p class="legend small">${LEGEND.map((s) => html`<span class="swatch ${s}"></span>${s} `)}<span class="muted">· click a step for its job or dead letter</span></p>
${graph}
<h2>Steps</h2>
<table data-testid="flow-steps"><thead><tr><th scope="col">Ref</th><th scope="col">Job</th><th scope="col">State</th><th scope="col">After</th><th scope="col">On parent failure</th><th scope="col">Job id</th><th scope="col">Reason</th></tr></thead>
<tbody>${flow.steps.map((s) => stepRow(base, s))}</tbody></table>`;
}
