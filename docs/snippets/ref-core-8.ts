import { memoryBackend } from "@soniq/backend-memory";
import { Soniq } from "@soniq/core";

// Field paths: dotted keys from the top of args, result and progress; `*` is any one key or array index,
// `**` any depth. Keys match whatever their case ("password" hides `Password` too). A matched value shows as
// "[redacted]", and error texts lose every string a path removed from the same row (4+ characters).
const soniq = new Soniq({ backend: memoryBackend(), redact: ["password", "card.number", "**.token"] });

// Or a function, called with field "args", "result", "progress" or "error" (the error text):
const strict = new Soniq({
  backend: memoryBackend(),
  redact: (value, { field, jobName }) =>
    jobName.startsWith("billing.") && field !== "error" ? "[hidden]" : value,
});
await soniq.close();
await strict.close();
