/**
 * Progress reports of a long operation (`deadLetters.replayWhere` / `purgeWhere`, `jobs.upgrade`): the caller's
 * `onProgress(done, total)`, called first with 0, then as rows are handled. What it throws or rejects with is
 * ignored: a progress display must not decide whether the rest of the operation runs.
 */
export type OnProgress = (done: number, total: number) => void;

/** Reports 0 of `total` now; the returned tick reports `n` more rows handled (never past `total`). */
export function progressReporter(onProgress: OnProgress, total: number): (n?: number) => void {
  const report = (done: number) => {
    try {
      const returned: unknown = onProgress(done, total);
      if (returned instanceof Promise) returned.catch(() => {});
    } catch {}
  };
  report(0);
  let done = 0;
  return (n = 1) => {
    done = Math.min(total, done + n);
    report(done);
  };
}
