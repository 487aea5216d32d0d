/** The webhooks facet (work in progress: implemented in the next commits). */
import { SoniqError, type WebhooksFacet } from "@soniq/core/backend";

const notYet = () => Promise.reject(new SoniqError("SONIQ_INVALID_STATE", "webhooks: not implemented yet"));

export function webhooksFacet(_ctx: unknown): WebhooksFacet {
  return {
    createEndpoint: notYet,
    updateEndpoint: notYet,
    removeEndpoint: notYet,
    getEndpoint: notYet,
    listEndpoints: async () => [],
    enqueue: notYet,
    listDeliveries: notYet,
    getDelivery: notYet,
    claimDue: async () => [],
    recordAttempt: notYet,
    redeliver: notYet,
  };
}
