/**
 * Sidequest's job classes for the bench. Sidequest records each job's class and the file that exports it,
 * and its engine imports that file to run the job; with `runner: "inline"` and `fork: false` that is this
 * module in the worker's own process, so the classes reach the worker's start listener set here.
 */
import { Job } from "sidequest";
import { handle, type TaskKind, type WorkerSpec } from "./types.js";

let spec: WorkerSpec | null = null;

/** The running worker's spec (one Sidequest engine per process). */
export function setSidequestSpec(next: WorkerSpec | null): void {
  spec = next;
}

function run(kind: TaskKind, i: number): Promise<void> {
  if (!spec) throw new Error("sidequest job ran with no bench worker");
  return handle(spec, kind, i);
}

export class BenchNoopJob extends Job {
  async run(i: number): Promise<void> {
    await run("noop", i);
  }
}

export class BenchFailJob extends Job {
  async run(i: number): Promise<void> {
    await run("fail", i);
  }
}

export class BenchRetryJob extends Job {
  async run(i: number): Promise<void> {
    await run("retry", i);
  }
}
