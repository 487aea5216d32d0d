import type { Backend } from "@soniq/core/backend";

declare const backend: Backend;

// #region snippet
import { Soniq } from "@soniq/core";
import { startMcpServer } from "@soniq/mcp";

const soniq = new Soniq({ backend, redact: ["password", "**.token"] }); // what the agent may not read
const server = await startMcpServer(soniq, { allowWrites: false }); // stdio by default
await server.closed; // the client went away (or server.close() was called)
await soniq.close(); // the server never closes the instance it was given
// #endregion snippet
