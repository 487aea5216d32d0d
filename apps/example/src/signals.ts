/**
 * Graceful shutdown on SIGINT / SIGTERM (the library installs no signal handlers; applications do).
 * The first signal runs `shutdown` once and exits 0 when it succeeds; a second signal exits at once.
 */
export function exitOnSignals(
  shutdown: () => Promise<void>,
  print: (line: string) => void = console.log,
): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) {
      print(`${signal} again: exiting without waiting`);
      process.exit(1);
    }
    stopping = true;
    print(`${signal}: shutting down gracefully (running jobs finish first; ${signal} again to force)`);
    shutdown().then(
      () => {
        print("stopped cleanly");
        process.exit(0);
      },
      (err: unknown) => {
        console.error("shutdown failed:", err);
        process.exit(1);
      },
    );
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
}
