import { createHmac, timingSafeEqual } from "node:crypto";
import { alertKindLabels, alertLinks, isAlertKind, type AlertLinks } from "./kinds";

// What a destination receives. Pure: the worker builds the request here and sends it elsewhere.

export type OutgoingAlert = {
  id: number;
  kind: string;
  message: string;
  endpointKey: string | null;
  ceilingId: number | null;
  windowStart: Date | null;
  createdAt: Date;
  details: Record<string, unknown> | null;
};

export type OutgoingRequest = { body: string; headers: Record<string, string> };

export const SIGNATURE_HEADER = "X-Ceilings-Signature";
export const TIMESTAMP_HEADER = "X-Ceilings-Timestamp";
export const DELIVERY_HEADER = "X-Ceilings-Delivery";

function label(kind: string): string {
  return isAlertKind(kind) ? alertKindLabels[kind] : kind;
}

export function absoluteLinks(a: OutgoingAlert, baseUrl: string | undefined): AlertLinks {
  const links = alertLinks(a);
  if (!links || !baseUrl) return links;
  const base = baseUrl.replace(/\/+$/, "");
  if (links.mapIt !== undefined) return { mapIt: `${base}${links.mapIt}` };
  return { chart: `${base}${links.chart}`, refusals: `${base}${links.refusals}` };
}

// Slack treats &, < and > as markup in mrkdwn text.
function slackEscape(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** A Slack-compatible incoming-webhook body: `text` for notifications, blocks for the message. */
export function slackBody(a: OutgoingAlert, baseUrl?: string): string {
  const text = `${label(a.kind)}: ${a.message}`;
  const links = absoluteLinks(a, baseUrl);
  const context = [`Ceilings alert #${a.id}`, a.createdAt.toISOString()];
  if (links && links?.mapIt !== undefined && links.mapIt.startsWith("http")) context.push(`<${links.mapIt}|map the items>`);
  else if (links?.chart !== undefined && links.chart.startsWith("http")) {
    context.push(`<${links.chart}|spend chart>`, `<${links.refusals}|refusals>`);
  }
  return JSON.stringify({
    text,
    blocks: [
      { type: "section", text: { type: "mrkdwn", text: `*${slackEscape(label(a.kind))}*\n${slackEscape(a.message)}` } },
      { type: "context", elements: [{ type: "mrkdwn", text: context.join(" · ") }] },
    ],
  });
}

/** The generic JSON body: the same on every attempt, so a receiver can deduplicate on `id`. */
export function webhookBody(a: OutgoingAlert, baseUrl?: string): string {
  return JSON.stringify({
    id: a.id,
    kind: a.kind,
    title: label(a.kind),
    message: a.message,
    endpoint: a.endpointKey,
    ceilingId: a.ceilingId,
    windowStart: a.windowStart?.toISOString() ?? null,
    createdAt: a.createdAt.toISOString(),
    details: a.details ?? {},
    links: absoluteLinks(a, baseUrl),
  });
}

/** HMAC-SHA256 over `<timestamp>.<raw body>`: the timestamp is signed so a capture cannot be replayed later. */
export function signPayload(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex")}`;
}

/** What a receiver does: recompute and compare in constant time, and refuse old timestamps. */
export function verifySignature(p: {
  secret: string;
  timestamp: string | null;
  signature: string | null;
  body: string;
  nowSeconds: number;
  toleranceSeconds?: number;
}): boolean {
  if (!p.timestamp || !p.signature || !/^\d{1,12}$/.test(p.timestamp)) return false;
  const ts = Number(p.timestamp);
  if (Math.abs(p.nowSeconds - ts) > (p.toleranceSeconds ?? 300)) return false;
  const expected = Buffer.from(signPayload(p.secret, ts, p.body));
  const given = Buffer.from(p.signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}

export function buildRequest(p: {
  kind: "slack" | "webhook";
  alert: OutgoingAlert;
  destinationId: number;
  signingSecret: string | null;
  nowSeconds: number;
  baseUrl?: string;
}): OutgoingRequest {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "User-Agent": "Ceilings-Alerts/1",
    [DELIVERY_HEADER]: `${p.alert.id}.${p.destinationId}`,
  };
  if (p.kind === "slack") return { body: slackBody(p.alert, p.baseUrl), headers };
  const body = webhookBody(p.alert, p.baseUrl);
  if (p.signingSecret) {
    headers[TIMESTAMP_HEADER] = String(p.nowSeconds);
    headers[SIGNATURE_HEADER] = signPayload(p.signingSecret, p.nowSeconds, body);
  }
  return { body, headers };
}

/**
 * Exponential backoff with jitter: base × 2^(attempts − 1), capped, then a random factor in
 * [0.5, 1] so a fleet of failed deliveries does not retry in lockstep. In milliseconds.
 */
export function retryDelayMs(p: { attempts: number; baseMs: number; capMs: number; random?: () => number }): number {
  const exp = Math.min(p.capMs, p.baseMs * 2 ** Math.max(0, Math.min(p.attempts - 1, 30)));
  const r = (p.random ?? Math.random)();
  return Math.round(exp * (0.5 + 0.5 * Math.min(1, Math.max(0, r))));
}
