/** What the security tests share: the two keys, a keyed handler, a request to a URL itself. */
import type { DashboardHandler } from "../src/index.js";
import { dashboard } from "../src/index.js";
import { READ_KEY, type Seeded, WRITE_KEY } from "./support.js";

export type ErrorBody = { error: { code: string; message: string } };

export const KEYS = [
  { key: WRITE_KEY, label: "ops", scope: "write" as const },
  { key: READ_KEY, label: "viewer" },
];

/** A dashboard on `app` with both keys, answering the Host `dash.test`. */
export function keyedOn(app: Seeded, extra: Record<string, unknown> = {}): DashboardHandler {
  return dashboard({ soniq: app.soniq, apiKeys: KEYS, allowedHosts: ["dash.test"], ...extra });
}

/** A request to `url` itself (its host is the Host the handler sees). */
export function send(handler: DashboardHandler, url: string, init: RequestInit = {}): Promise<Response> {
  return handler(new Request(url, init));
}

/** A body of `total` bytes made on demand; `pulled()` says how much the server read. */
export function streamedBody(
  total: number,
  chunk = 64 * 1024,
): { body: ReadableStream<Uint8Array>; pulled(): number } {
  let sent = 0;
  const block = new Uint8Array(chunk).fill(0x61);
  return {
    body: new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= total) return controller.close();
        sent += chunk;
        controller.enqueue(block);
      },
    }),
    pulled: () => sent,
  };
}
