/** `serveDashboard()`: the dashboard on node:http (via @hono/node-server), on 127.0.0.1:6161 by default. */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener, serve } from "@hono/node-server";
import { SoniqError } from "@soniq/core";
import { type DashboardHandler, dashboard } from "./app.js";
import type { DashboardOptions } from "./options.js";

export interface ServeDashboardOptions extends DashboardOptions {
  /**
   * Default "127.0.0.1": only this machine can connect. Bind elsewhere only behind keys and TLS. A concrete
   * address is added to `allowedHosts`; behind "0.0.0.0" name the hosts clients use in `allowedHosts`.
   */
  host?: string;
  /** Default 6161; 0 picks a free port. */
  port?: number;
}

export interface DashboardServer extends AsyncDisposable {
  /** e.g. "http://127.0.0.1:6161" (plus the basePath). */
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections and closes open ones. Memoised. Does not close the Soniq instance. */
  close(): Promise<void>;
}

/** A node:http listener `(req, res)` for a dashboard handler: for node:http, Express and Fastify. */
export function nodeListener(
  handler: DashboardHandler,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return getRequestListener(handler);
}

export async function serveDashboard(options: ServeDashboardOptions): Promise<DashboardServer> {
  const { host = "127.0.0.1", port = 6161, ...rest } = options;
  if (typeof host !== "string" || host === "") {
    throw new SoniqError("SONIQ_INVALID_OPTIONS", "serveDashboard: host must be a non-empty string.", {
      context: { problems: ["host"] },
    });
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new SoniqError(
      "SONIQ_INVALID_OPTIONS",
      "serveDashboard: port must be an integer from 0 to 65535.",
      { context: { problems: ["port"] } },
    );
  }
  // A concrete address we listen on is a name clients use to reach us (wildcards name no host).
  const bound = host === "0.0.0.0" || host === "::" ? [] : [host.includes(":") ? `[${host}]` : host];
  const fetch = dashboard({ ...rest, allowedHosts: [...(rest.allowedHosts ?? []), ...bound] });
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch, hostname: host, port }, () => resolve(s));
    s.once("error", reject);
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  let closing: Promise<void> | null = null;
  const close = () => {
    closing ??= new Promise<void>((resolve, reject) => {
      server.close((err) => (err ? reject(err) : resolve()));
      if ("closeAllConnections" in server) server.closeAllConnections();
    });
    return closing;
  };
  return {
    url: `http://${shownHost}:${address.port}${rest.basePath ?? ""}`,
    port: address.port,
    close,
    [Symbol.asyncDispose]: close,
  };
}
