/**
 * Statements composed from CTE fragments, and the effects that ride on a write (the audit row, the webhook
 * outbox) as fragments. A fragment writes its SQL and binds its own parameters through `Bind`, so fragments
 * compose in any order and number their `$n` as they go: a statement is a list of fragments, never a finished
 * statement's text edited afterwards.
 */
import type { AuditRecord, NewWebhookDelivery } from "@soniq/core/backend";
import { auditCte, auditValues } from "./audit-rows.js";
import { deliveriesParam, outboxCte } from "./webhook-rows.js";

/** The parameters of a statement being composed. */
export class Bind {
  readonly values: unknown[] = [];

  /** `$n` bound to `value`. */
  param(value: unknown): string {
    this.values.push(value);
    return `$${this.values.length}`;
  }

  /** The number of the first of `values`, bound in order (for SQL written with `$first + i`). */
  params(values: readonly unknown[]): number {
    const first = this.values.length + 1;
    this.values.push(...values);
    return first;
  }
}

/** One or more CTEs (`name AS (...)`, comma-separated), or a final statement, with their parameters. */
export type Fragment = (bind: Bind) => string;

/** `WITH <ctes> <final>`: the CTEs in order (null ones left out), then the final statement. */
export function compose(
  ctes: readonly (Fragment | null)[],
  final: Fragment,
): { text: string; values: unknown[] } {
  const bind = new Bind();
  const written = ctes.flatMap((cte) => (cte === null ? [] : [cte(bind)]));
  const tail = final(bind);
  const text = written.length === 0 ? tail : `WITH ${written.join(",\n")}\n${tail}`;
  return { text, values: bind.values };
}

/** What rides on a write: written in the write's statement, only when its `source` CTE returned a row. */
export interface WriteEffects {
  audit?: AuditRecord | undefined;
  deliveries?: readonly NewWebhookDelivery[] | undefined;
}

/** The CTEs of `effects` (an `audited` row, an `outbox` of deliveries) that follow `source`'s write. */
export function effectCtes(effects: WriteEffects, source: string): Fragment[] {
  const ctes: Fragment[] = [];
  const { audit, deliveries } = effects;
  if (audit !== undefined) ctes.push((bind) => auditCte(source, bind.params(auditValues(audit))));
  if (deliveries !== undefined && deliveries.length > 0) {
    ctes.push((bind) =>
      outboxCte(bind.param(deliveriesParam(deliveries)), `EXISTS (SELECT 1 FROM ${source})`),
    );
  }
  return ctes;
}

/** True when `effects` writes nothing (the statement can be a named, prepared one). */
export function noEffects(effects: WriteEffects): boolean {
  return effects.audit === undefined && (effects.deliveries === undefined || effects.deliveries.length === 0);
}
