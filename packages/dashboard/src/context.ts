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
  };
}
