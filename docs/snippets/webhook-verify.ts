import { verifyWebhookSignature } from "@soniq/core";

export function verified(rawBody: string, headers: Record<string, string | undefined>): boolean {
  return verifyWebhookSignature({
    payload: rawBody, // the exact bytes received
    signature: headers["x-webhook-signature"],
    timestamp: headers["x-webhook-timestamp"],
    deliveryId: headers["x-webhook-delivery"], // the id you deduplicate on: checked to be the one signed
    event: headers["x-webhook-event"],
    // While rotating, list the current secret and the next one: a signature by either is accepted.
    secret: [process.env.SONIQ_WEBHOOK_SECRET ?? "", process.env.SONIQ_WEBHOOK_NEXT_SECRET ?? ""],
    toleranceMs: 300_000, // default 5 min; 0 skips the time check; NaN, Infinity or < 0 throw SONIQ_INVALID_ARGUMENT
  });
}
