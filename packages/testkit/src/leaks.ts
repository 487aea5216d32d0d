/**
 * Leak check: timers, sockets and servers a case created and left alive after its backend was closed
 * and its harness cleaned up. An async hook records every such resource created while the case runs
 * (harness, backend and case body) and forgets it when it is destroyed (a timer fired or cleared, a
 * handle closed). Counting live handles instead would be fooled by the test runner's own timers coming
 * and going; tracking creation names exactly what the case's code made, and where.
 */
import { createHook } from "node:async_hooks";

const WATCHED = new Set([
  "Timeout",
  "TCPWRAP",
  "TCPSERVERWRAP",
  "PIPEWRAP",
  "PIPESERVERWRAP",
  "UDPWRAP",
  "PROCESSWRAP",
  "FSEVENTWRAP",
  "STATWATCHER",
]);

interface Tracked {
  type: string;
  resource: object;
  /** Captured at creation; its stack is formatted only when the resource is reported. */
  site: Error;
}

export interface LeakTracker {
  /** Stop recording new resources, wait up to `settleMs` for the recorded ones to go, and describe the rest. */
  finish(settleMs?: number): Promise<string[]>;
}

export function trackResources(): LeakTracker {
  const live = new Map<number, Tracked>();
  let recording = true;
  const hook = createHook({
    init(asyncId, type, _trigger, resource) {
      if (recording && WATCHED.has(type)) live.set(asyncId, { type, resource, site: new Error() });
    },
    destroy(asyncId) {
      live.delete(asyncId);
    },
  });
  hook.enable();
  return {
    // Five seconds: a socket's destroy arrives after the peer's close, which a pooler on a loaded 2-core machine
    // took more than the former one second to send (a false "leak" in CI); a clean case still finishes at once.
    async finish(settleMs = 5000) {
      recording = false;
      const deadline = Date.now() + settleMs;
      // Closing handles report their destruction a little later, and a pending one-shot timer may still
      // fire: wait for those. An interval never ends by itself, so it is reported at once.
      while ([...live.values()].some((t) => alive(t) && !isInterval(t)) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      hook.disable();
      return describe([...live.values()].filter(alive));
    },
  };
}

interface TimerFields {
  _repeat?: unknown;
  _destroyed?: unknown;
  hasRef?: () => boolean;
}

/** A timer that fired or was cleared is done even before its destroy event arrives. */
function alive(t: Tracked): boolean {
  return t.type !== "Timeout" || (t.resource as TimerFields)._destroyed !== true;
}

function isInterval(t: Tracked): boolean {
  return t.type === "Timeout" && typeof (t.resource as TimerFields)._repeat === "number";
}

function describe(leaked: readonly Tracked[]): string[] {
  const groups = new Map<string, { count: number; sites: Set<string> }>();
  for (const t of leaked) {
    const kind = t.type === "Timeout" ? timerKind(t.resource) : t.type;
    const group = groups.get(kind) ?? { count: 0, sites: new Set<string>() };
    group.count++;
    group.sites.add(siteOf(t.site));
    groups.set(kind, group);
  }
  return [...groups].map(
    ([kind, { count, sites }]) => `${count} x ${kind} (created at ${[...sites].join("; ")})`,
  );
}

/** "Timeout" plus what made it, e.g. "Timeout from setInterval, ref'ed". */
function timerKind(resource: object): string {
  const timer = resource as TimerFields;
  const from = typeof timer._repeat === "number" ? "setInterval" : "setTimeout";
  const ref = typeof timer.hasRef === "function" && !timer.hasRef() ? "unref'ed" : "ref'ed";
  return `Timeout from ${from}, ${ref}`;
}

/** The first stack frame outside Node's internals and this file: the code that created the resource. */
function siteOf(site: Error): string {
  const frames = (site.stack ?? "").split("\n").slice(1);
  const own = frames.find((f) => !f.includes("node:") && !/leaks\.[jt]s:/.test(f));
  return (own ?? frames[0] ?? "unknown").trim().replace(/^at /, "");
}
