/**
 * Replays by a surface that defines no handlers (the CLI, the MCP server): core checks a replayed job's name
 * against the instance's own definitions, and such an instance has none, so the surface checks the task
 * registry instead (the job names the workers registered). A name no worker registered would make a job
 * that waits until some worker defines it, so the surface refuses unless told to go on (`--force`,
 * `force: true`). The rule and its wording live here; each surface throws the text as its own error.
 */
import type { WorkerService } from "../worker/service.js";

/**
 * Why a replay of rows with these job names should be refused (the names no worker has registered, sorted,
 * and how to go on: `override`, e.g. "pass --force"), or null when every name is registered.
 */
export async function replayRefusal(
  workers: Pick<WorkerService, "list">,
  names: Iterable<string>,
  override: string,
): Promise<string | null> {
  const wanted = [...new Set(names)];
  if (wanted.length === 0) return null;
  const known = new Set((await workers.list()).flatMap((w) => w.jobNames));
  const unknown = wanted.filter((name) => !known.has(name)).sort();
  if (unknown.length === 0) return null;
  return (
    `no worker has registered ${unknown.join(", ")} (the task registry), so a replayed job would wait until one does. ` +
    `Start a worker that defines it, or ${override}. Nothing was changed.`
  );
}
