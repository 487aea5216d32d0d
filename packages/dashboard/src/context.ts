/** What every route handler gets: the resolved options, the auth state, and Hono's typed variables. */
import type { Auth, Principal } from "./auth.js";
import type { ResolvedDashboardOptions } from "./options.js";

export interface AppState {
  readonly options: ResolvedDashboardOptions;
  readonly auth: Auth;
}

export interface Env {
  Variables: {
    principal: Principal;
    /** A write's JSON body, read with its cap and checked against its route's keys (api/bodies.ts). */
    body: Record<string, unknown>;
  };
}
