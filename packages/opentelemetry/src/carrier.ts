/**
 * The W3C Trace Context encoding of what core stores on a job (`{ traceparent, tracestate? }`), written here
 * rather than through the global propagator so that what is stored never depends on the application's
 * propagator setup (a B3-only app still stores a W3C carrier, which any process can read back).
 */
import {
  createTraceState,
  INVALID_SPANID,
  INVALID_TRACEID,
  isSpanContextValid,
  type SpanContext,
} from "@opentelemetry/api";
import type { TraceContext } from "@soniq/core/plugin";

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The carrier of a span context; null for an invalid one (a no-op tracer with no active trace). */
export function toCarrier(spanContext: SpanContext): TraceContext | null {
  if (!isSpanContextValid(spanContext)) return null;
  const flags = (spanContext.traceFlags & 0xff).toString(16).padStart(2, "0");
  const carrier: TraceContext = { traceparent: `00-${spanContext.traceId}-${spanContext.spanId}-${flags}` };
  const state = spanContext.traceState?.serialize();
  if (state) carrier.tracestate = state;
  return carrier;
}

/** The remote span context a stored carrier names, or null when it names none. */
export function fromCarrier(carrier: TraceContext | null | undefined): SpanContext | null {
  const match = carrier?.traceparent ? TRACEPARENT.exec(carrier.traceparent) : null;
  if (!match || match[1] === "ff") return null;
  const spanContext: SpanContext = {
    traceId: match[2] as string,
    spanId: match[3] as string,
    traceFlags: Number.parseInt(match[4] as string, 16),
    isRemote: true,
  };
  // The pattern has checked the hex; what `isSpanContextValid` adds is the all-zero ids, checked here directly.
  if (spanContext.traceId === INVALID_TRACEID || spanContext.spanId === INVALID_SPANID) return null;
  if (carrier?.tracestate) spanContext.traceState = createTraceState(carrier.tracestate);
  return spanContext;
}
