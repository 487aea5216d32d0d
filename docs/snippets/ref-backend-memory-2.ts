import { memoryBackendWithFaults } from "@soniq/backend-memory/testing";

let armed = false;
const backend = memoryBackendWithFaults(undefined, {
  interruptDeadLetterMove: (jobId) => {
    const fire = armed;
    armed = false;
    return fire;
  },
});
