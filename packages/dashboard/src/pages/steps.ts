/**
 * Durable steps on the job and dead-letter pages (DESIGN.md section 19): the timeline of a job's checkpoints,
 * the signal form of a queued or processing job, and the step options of a dead letter's replay. The steps
 * arrive redacted (security/views.ts `shownSteps`); every value is escaped by `html`.
 */
import type { Job, JobStep } from "@soniq/core";
import { formatDate, formatDuration, type Html, html, prettyJson } from "../html.js";
import { canWrite, type PageFrame, statusBadge } from "./layout.js";

/** The longest value shown inline; a longer one opens to its whole JSON. */
const PREVIEW_CHARS = 80;

function firstLine(text: string | null): string {
  return text ? (text.split("\n")[0] ?? "").slice(0, 200) : "";
}

/** A signal's name as `jobs.signal` takes it: the wait's occurrence name without its `#n` suffix. */
export function signalName(stepName: string): string {
  return stepName.split("#")[0] ?? stepName;
}

function valuePreview(value: unknown): Html {
  if (value === null || value === undefined) return html`<span class="muted">—</span>`;
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  if (text.length <= PREVIEW_CHARS) return html`<code>${text}</code>`;
  return html`<details><summary><code>${text.slice(0, PREVIEW_CHARS - 1)}…</code></summary><pre>${prettyJson(value)}</pre></details>`;
}

function attemptCell(step: JobStep): Html {
  return step.attempt === 0
    ? html`<span title="recorded done by an operator's resolve when the dead letter was replayed">resolved</span>`
    : html`${step.attempt}`;
}

function durationCell(step: JobStep, now: number): Html {
  if (step.startedAt && step.finishedAt) {
    return html`${formatDuration(step.finishedAt.getTime() - step.startedAt.getTime())}`;
  }
  if (step.state === "waiting" && step.startedAt) {
    return html`<span class="muted">${formatDuration(now - step.startedAt.getTime())} so far</span>`;
  }
  return html`<span class="muted">—</span>`;
}

function wakeCell(step: JobStep, now: number): Html {
  if (!step.wakeAt) return html`<span class="muted">—</span>`;
  if (step.state !== "waiting") return html`<span class="muted">${formatDate(step.wakeAt)}</span>`;
  const left = step.wakeAt.getTime() - now;
  const word = step.kind === "signal" ? "deadline" : "wakes";
  return html`<strong>${formatDate(step.wakeAt)}</strong> <span class="small">(${word} ${left > 0 ? `in ${formatDuration(left)}` : "now"})</span>`;
}

function stepRow(step: JobStep, index: number, now: number): Html {
  const error = firstLine(step.error);
  return html`<tr data-step-name="${step.name}" data-kind="${step.kind}" data-state="${step.state}">
<td class="num">${index + 1}</td><td><span class="kind ${step.kind}">${step.kind}</span></td><td><code>${step.name}</code></td>
<td>${statusBadge(step.state)}</td><td class="num">${attemptCell(step)}</td><td class="small">${formatDate(step.startedAt)}</td>
<td class="num">${durationCell(step, now)}</td><td class="small">${wakeCell(step, now)}</td>
<td class="value">${valuePreview(step.value)}</td><td class="err small" title="${error}">${error}</td></tr>`;
}

/**
 * The checkpoints in the order they were first written: kind, name, state, attempt, start, duration (a
 * waiting one: how long so far), wake time or deadline, the value (redacted) and a failed step's first error line.
 */
export function stepTimeline(steps: readonly JobStep[] | null, now = Date.now()): Html {
  if (steps === null) {
    return html`<p class="muted" data-testid="steps-none">This backend keeps no durable steps (it does not declare the <code>steps</code> capability).</p>`;
  }
  if (steps.length === 0) {
    return html`<p class="muted" data-testid="steps-none">None recorded: the handler has not reached a <code>ctx.step</code>, <code>ctx.sleep</code> or <code>ctx.waitForSignal</code>.</p>`;
  }
  return html`<table data-testid="steps" class="steps"><thead><tr><th class="num" scope="col">#</th><th scope="col">Kind</th><th scope="col">Name</th><th scope="col">State</th><th class="num" scope="col">Attempt</th><th scope="col">Started</th><th class="num" scope="col">Duration</th><th scope="col">Wakes / deadline</th><th scope="col">Value</th><th scope="col">Error</th></tr></thead>
<tbody>${steps.map((s, i) => stepRow(s, i, now))}</tbody></table>`;
}

/**
 * The signal form of a queued or processing job, for a write key on a backend with steps: a name (the signal
 * the job waits for, when it waits), a JSON payload and an optional key. The script posts it to
 * `/api/jobs/:id/signal` and says what happened (stored and woke the job, stored for later, or a duplicate key).
 */
export function signalForm(frame: PageFrame, job: Job, steps: readonly JobStep[] | null): Html {
  if (steps === null || !(job.status === "queued" || job.status === "processing") || !canWrite(frame)) {
    return html``;
  }
  const waiting = steps.find((s) => s.kind === "signal" && s.state === "waiting");
  const name = waiting ? signalName(waiting.name) : "";
  return html`<h3>Send a signal</h3>
<form class="stack" data-post="${frame.base}/api/jobs/${job.id}/signal" data-outcome="signal" data-testid="signal-form" aria-label="Send a signal to this job">
<label>Name<input name="name" value="${name}" placeholder="approval" size="28" required autocomplete="off"></label>
<label>Payload (JSON; empty sends null)<textarea name="payload" data-json data-label="The payload" rows="3" cols="48" placeholder='{ "by": "ops@example.com" }'></textarea></label>
<label>Key (optional: a resend with the same key changes nothing)<input name="key" placeholder="ticket-4711" size="28" autocomplete="off"></label>
<div><button type="submit">Send signal</button></div></form>
<p class="muted small">${
    waiting
      ? `The job waits for "${signalName(waiting.name)}" until ${formatDate(waiting.wakeAt)}: a signal of that name wakes it now.`
      : "A signal the job does not wait for yet is kept: its next wait on that name takes it."
  } Audited as job.signal.</p>`;
}

/**
 * A dead letter's replay: the Replay button, and with checkpoints to act on the step options: keep (resume at
 * the step that failed) or discard, and values to record as done (`resolve`, a JSON object of step names).
 */
export function replayForm(frame: PageFrame, id: string, steps: readonly JobStep[] | null): Html {
  const options =
    steps && steps.length > 0
      ? html`<fieldset><legend>Steps</legend>
<label><input type="radio" name="steps" value="keep" checked> Keep: the done steps stay done, the job resumes at the step that failed</label>
<label><input type="radio" name="steps" value="discard"> Discard: start clean, every step runs again</label></fieldset>
<label>Resolve (optional JSON object: steps to record done with these values)<textarea name="resolve" data-json data-label="Resolve" rows="2" cols="48" placeholder="${resolvePlaceholder(steps)}"></textarea></label>`
      : "";
  return html`<form class="stack" data-post="${frame.base}/api/dead-letters/${id}/replay" data-redirect="job" data-done="Replayed." data-testid="replay-form" aria-label="Replay this dead letter">
${options}<div><button type="submit">Replay</button></div></form>`;
}

function resolvePlaceholder(steps: readonly JobStep[]): string {
  const failed = steps.find((s) => s.state === "failed");
  return `{ "${failed ? failed.name : "step_name"}": { "paymentId": "manual-1" } }`;
}
