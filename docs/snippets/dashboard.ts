import { sqliteBackend } from "@soniq/backend-sqlite";
import { Soniq } from "@soniq/core";
import { serveDashboard } from "@soniq/dashboard";

const soniq = new Soniq({ backend: sqliteBackend({ filename: "./soniq.db" }), redact: ["**.password"] });
await soniq.setup();

// Read-only until it has keys; a "write" key may replay, purge, cancel and pause (audited with its label).
const server = await serveDashboard({
  soniq,
  port: 0, // 0 picks a free port; the default is 6161, on 127.0.0.1 only
  apiKeys: [{ key: "a-long-random-secret-for-tina", label: "ops-tina", scope: "write" }],
});
console.log(server.url.replace(/:\d+$/, ":<port>"));
// -> http://127.0.0.1:<port>
const page = await fetch(`${server.url}/`); // without a key: the login form
console.log(page.status, (await page.text()).includes('type="password"'));
// -> 200 true
await server.close(); // stops the server; the Soniq instance stays open
await soniq.close();
