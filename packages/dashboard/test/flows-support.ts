/**
 * Flows for the dashboard tests: a `flows` facet, shaped as DESIGN.md section 15 gives `soniq.flows`,
 * answering from fixed flows whose steps point at the seeded app's real rows (the held order's `charge` is
 * a real dead letter, `reserve` a real done job), so links and the replay act on real data. `cancel`
 * records its id and actor and turns the flow's open steps `cancelled`, as core's cancel does.
 */
import type { Soniq } from "@soniq/core";
import type { Seeded } from "./support.js";

export const HELD_FLOW = "0193c6e2-aaaa-7000-8000-000000000001";
export const RUNNING_FLOW = "0193c6e2-aaaa-7000-8000-000000000002";
export const DONE_FLOW = "0193c6e2-aaaa-7000-8000-000000000003";

export interface FakeFlows {
  cancels: { id: string; actor: string | undefined }[];
}

const waitingId = (n: number) => `0193c6e2-bbbb-7000-8000-${String(n).padStart(12, "0")}`;

export function withFlows(app: Seeded): FakeFlows {
  const at = new Date("2026-12-01T09:00:00Z");
  const step = (
    ref: string,
    jobId: string,
    state: string,
    dependsOn: string[] = [],
    onParentFailure = "hold",
  ) => ({
    ref,
    jobId,
    jobIds: [jobId],
    jobName: `orders.${ref}`,
    state,
    dependsOn,
    onParentFailure,
    pendingParents: dependsOn.length,
    reason: state === "held" ? "parent_dead_lettered" : null,
    addedBy: null,
    createdAt: at,
    finishedAt: null,
  });
  const flows = [
    {
      id: HELD_FLOW,
      name: "orders.fulfil",
      state: "held",
      createdAt: at,
      finishedAt: null,
      steps: [
        step("charge", app.dead[0] as string, "dead_lettered"),
        step("reserve", app.done[0] as string, "done"),
        step("ship", waitingId(1), "held", ["charge", "reserve"]),
        step("notify", waitingId(2), "waiting", ["ship"], "run"),
      ],
    },
    {
      id: RUNNING_FLOW,
      name: "reports.build",
      state: "running",
      createdAt: new Date(at.getTime() + 60_000),
      finishedAt: null,
      steps: [step("build", app.reports[0] as string, "queued")],
    },
    {
      id: DONE_FLOW,
      name: "orders.fulfil",
      state: "succeeded",
      createdAt: new Date(at.getTime() + 120_000),
      finishedAt: new Date(at.getTime() + 180_000),
      steps: [step("charge", app.done[1] as string, "done")],
    },
  ];
  const withCounts = <T extends (typeof flows)[number]>(f: T) => {
    const n = (...of: string[]) => f.steps.filter((s) => of.includes(s.state)).length;
    const total = f.steps.length;
    return {
      ...f,
      counts: {
        total,
        open: total - n("done", "dead_lettered", "cancelled"),
        done: n("done"),
        failed: n("dead_lettered", "cancelled"),
        held: n("held"),
      },
    };
  };
  const fake: FakeFlows = { cancels: [] };
  Object.assign(app.soniq as Soniq, {
    flows: {
      get: async (id: string) => {
        const f = flows.find((x) => x.id === id);
        return f ? withCounts(f) : null;
      },
      list: async (filter: { state?: string; name?: string; limit?: number } = {}) =>
        flows
          .filter(
            (f) => (!filter.state || f.state === filter.state) && (!filter.name || f.name === filter.name),
          )
          .map((f) => {
            const { steps: _steps, ...summary } = withCounts(f);
            return summary;
          })
          .reverse()
          .slice(0, filter.limit ?? 100),
      cancel: async (id: string, options: { actor?: string } = {}) => {
        fake.cancels.push({ id, actor: options.actor });
        const f = flows.find((x) => x.id === id);
        if (!f) return { cancelled: false, cancelledJobIds: [] };
        f.state = "cancelled";
        f.finishedAt = new Date();
        for (const s of f.steps) if (s.state !== "done" && s.state !== "dead_lettered") s.state = "cancelled";
        return { cancelled: true, cancelledJobIds: [] };
      },
    },
  });
  return fake;
}
