import type { IncomingMessage, ServerResponse } from "node:http";
import type { Soniq } from "@soniq/core";
import { type DashboardApiKey, dashboard, nodeListener } from "@soniq/dashboard";

declare const soniq: Soniq;
declare const apiKeys: DashboardApiKey[];
interface FastifyLike {
  addHook(
    name: "onRequest",
    hook: (
      req: { url: string; raw: IncomingMessage },
      reply: { hijack(): void; raw: ServerResponse },
      done: () => void,
    ) => void,
  ): void;
}
declare const fastify: FastifyLike;

// #region snippet
const soniqDashboard = nodeListener(dashboard({ soniq, basePath: "/soniq", apiKeys }));
fastify.addHook("onRequest", (req, reply, done) => {
  if (!req.url.startsWith("/soniq")) return done();
  reply.hijack();
  void soniqDashboard(req.raw, reply.raw);
});
// #endregion snippet
