/** The few errors the memory backend raises itself (inputs are validated by core's guard). */
import { SoniqError } from "@soniq/core/backend";

export function transactionUnsupported(): SoniqError {
  return new SoniqError(
    "SONIQ_TRANSACTION_UNSUPPORTED",
    "The memory backend cannot enqueue inside a caller's transaction: omit `tx`, or use the Postgres or SQLite backend.",
    { context: { backend: "memory" } },
  );
}

export function duplicateJobId(index: number, id: string): SoniqError {
  return new SoniqError("SONIQ_INVALID_ARGUMENT", `Job ${index}: a job with id ${id} already exists.`, {
    context: { index, id },
  });
}

/** The injected fault of `memoryBackendWithFaults()` (`interruptDeadLetterMove`): the settle failed half way and was undone. */
export function deadLetterMoveInterrupted(id: string): SoniqError {
  return new SoniqError(
    "SONIQ_BACKEND_ERROR",
    `Moving job ${id} to the dead-letter table was interrupted; nothing of the settle was applied.`,
    { context: { id } },
  );
}
