/** `soniq flows list | show <id> | cancel <id>`: workflows (DESIGN.md section 15). */
import { FLOW_STATES, type Flow, type FlowState, type FlowSummary, isJobId } from "@soniq/core";
import { TERMINAL_FLOW_STATES } from "@soniq/core/ops";
import type { Command } from "commander";
import { Context } from "../context.js";
import { CliError, usage } from "../errors.js";
import { flowTree } from "../flow-tree.js";
import type { Io, Printer } from "../output.js";
import { positiveInt } from "../parse.js";
import { record, stamp } from "../views.js";

const notFound = (id: string) =>
  new CliError("SONIQ_CLI_NOT_FOUND", `no flow with id ${id}. List them with soniq flows list.`);

const TERMINAL: readonly string[] = TERMINAL_FLOW_STATES;
/** Core mints flow ids as UUIDs: anything else names no flow (and is never sent to a uuid column). */

function flowState(value: string): FlowState {
  if (!(FLOW_STATES as readonly string[]).includes(value))
    throw usage(`--state takes one of ${FLOW_STATES.join(", ")} (got "${value}").`);
  return value as FlowState;
}

/** "1/4 done, 1 held, 1 failed": from the steps when the flow carries them, else from its counts. */
export function stepCounts(flow: FlowSummary | Flow): string {
  if (!("steps" in flow)) {
    const { total, done, held, failed } = flow.counts;
    const rest = [held ? `${held} held` : "", failed ? `${failed} failed` : ""].filter(Boolean);
    return [`${done}/${total} done`, ...rest].join(", ");
  }
  const by = new Map<string, number>();
  for (const s of flow.steps) by.set(s.state, (by.get(s.state) ?? 0) + 1);
  const rest = [...by].filter(([state]) => state !== "done").map(([state, n]) => `${n} ${state}`);
  return [`${by.get("done") ?? 0}/${flow.steps.length} done`, ...rest].join(", ");
}

export function registerFlows(program: Command, io: Io): void {
  const flows = program
    .command("flows")
    .description("list, draw and cancel workflows (flows of jobs that depend on each other)")
    .addHelpText(
      "after",
      "\nFlow states: running, held (a parent is dead-lettered: replay it to resume, purge it to cancel the\n" +
        "dependents), succeeded, failed, cancelled. Step states: waiting, queued, processing, done,\n" +
        "dead_lettered, held, cancelled.\n\n" +
        "Examples:\n  soniq flows list --state held\n  soniq flows show 0193c6e2-...\n  soniq flows cancel 0193c6e2-...",
    );
  listCommand(flows, io);
  showCommand(flows, io);
  cancelCommand(flows, io);
}

function flowsTable(p: Printer, rows: FlowSummary[]): void {
  if (rows.length === 0) {
    p.line("no flows match.");
    return;
  }
  p.table(
    ["ID", "NAME", "STATE", "STEPS", "CREATED", "FINISHED"],
    rows.map((f) => [
      f.id,
      f.name ?? "-",
      p.status(f.state),
      stepCounts(f),
      p.ago(f.createdAt),
      p.ago(f.finishedAt),
    ]),
  );
}

function listCommand(flows: Command, io: Io): void {
  flows
    .command("list")
    .description("flows, newest first")
    .option("--state <state>", `only flows in this state: ${FLOW_STATES.join(", ")}`, flowState)
    .option("--name <name>", "only flows with this name")
    .option("--limit <n>", "at most n rows (default 100)", positiveInt("--limit"))
    .addHelpText(
      "after",
      "\nJSON (--json): an array of flows { id, name, state, counts: { total, open, done, failed, held },\ncreatedAt, finishedAt }.\n\n" +
        "Examples:\n  soniq flows list\n  soniq flows list --state held --json\n  soniq flows list --name orders.fulfil --limit 20",
    )
    .action(async (o: { state?: FlowState; name?: string; limit?: number }, command: Command) => {
      const ctx = Context.of(command, io);
      const rows = await ctx.withApp((soniq) =>
        soniq.flows.list({
          ...(o.state ? { state: o.state } : {}),
          ...(o.name ? { name: o.name } : {}),
          limit: o.limit ?? 100,
        }),
      );
      if (ctx.json) return ctx.printer.json(rows);
      flowsTable(ctx.printer, rows);
    });
}

function showCommand(flows: Command, io: Io): void {
  flows
    .command("show")
    .description("one flow: its state, and its steps drawn as a tree with their states")
    .argument("<id>", "flow id")
    .addHelpText(
      "after",
      "\nEach step with no parents starts a tree; a dependent sits under its first parent, names its other\n" +
        'parents ("also after ..."), and appears under them again as "(see above)". Each line: ref, state,\n' +
        "job name, job id (a dead-lettered step's id is its dead letter's: soniq dead-letter show <id>).\n" +
        "JSON (--json): the flow { id, name, state, counts, createdAt, finishedAt, steps: [{ ref, jobId, jobIds,\n" +
        "jobName, state, dependsOn, onParentFailure, pendingParents, reason, addedBy, createdAt, finishedAt }] }.\n\nExamples:\n  soniq flows show 0193c6e2-...\n  soniq flows show 0193c6e2-... --json",
    )
    .action(async (id: string, _o, command: Command) => {
      const ctx = Context.of(command, io);
      const flow = isJobId(id) ? await ctx.withApp((soniq) => soniq.flows.get(id)) : null;
      if (!flow) throw notFound(id);
      if (ctx.json) return ctx.printer.json(flow);
      const p = ctx.printer;
      record(p, [
        ["id", flow.id],
        ["name", flow.name ?? "-"],
        ["state", p.status(flow.state)],
        ["steps", stepCounts(flow)],
        ["created", stamp(p, flow.createdAt)],
        ["finished", flow.finishedAt ? stamp(p, flow.finishedAt) : "-"],
      ]);
      p.line();
      for (const line of flowTree(flow.steps, {
        state: (w) => p.status(w),
        dim: (t) => p.paint("dim", t),
      }))
        p.line(line);
      if (flow.state === "held")
        p.line(
          `\n${p.paint("yellow", "held")}: replay the dead-lettered parent to resume (soniq dead-letter replay <id>), or purge it to cancel its dependents.`,
        );
    });
}

function cancelCommand(flows: Command, io: Io): void {
  flows
    .command("cancel")
    .description("cancel a flow: its waiting, held and queued steps are cancelled, running ones aborted")
    .argument("<id>", "flow id")
    .addHelpText(
      "after",
      "\nAudited as flow.cancel with the actor cli:<user>@<host>. Exits 1 when no flow has this id or the flow\n" +
        "has finished (succeeded, failed or cancelled already).\n" +
        "JSON (--json): { id, cancelled, state }.\n\nExamples:\n  soniq flows cancel 0193c6e2-...",
    )
    .action(async (id: string, _o, command: Command) => {
      const ctx = Context.of(command, io);
      if (!isJobId(id)) throw notFound(id);
      const result = await ctx.withApp(async (soniq) => {
        const before = await soniq.flows.get(id);
        if (!before) throw notFound(id);
        if (TERMINAL.includes(before.state)) return { id, cancelled: false, state: before.state };
        const cancelled = await soniq.flows.cancel(id, { actor: ctx.actor });
        const after = await soniq.flows.get(id);
        return { id, cancelled, state: after?.state ?? before.state };
      });
      if (ctx.json) ctx.printer.json(result);
      else
        ctx.printer.line(
          result.cancelled ? `cancelled flow ${id}` : `not cancelled ${id}: the flow is ${result.state}`,
        );
      if (!result.cancelled) process.exitCode = 1;
    });
}
