import nodemailer from "nodemailer";
import type { AlertDestination } from "@/db/schema";
import { alertKindLabels, isAlertKind } from "./kinds";
import { absoluteLinks, type OutgoingAlert } from "./payload";

// E-mail delivery over SMTP (nodemailer). The message reads like the dashboard: the alert's own
// sentence ("llm.chat reached 80% of its ceiling ..."), when it fired, and links to the window's
// chart and refusals. The SMTP password is never in the database: the destination names an
// environment variable of the worker, and only names with SECRET_PREFIX may be read, so an admin
// cannot point a destination at, say, NEXTAUTH_SECRET and mail it to a server of their choosing.

export const SECRET_PREFIX = "CEILINGS_SECRET_";

export type SecretLookup = (name: string) => string | undefined;

export type EmailMessage = { subject: string; text: string; html: string };

const escapeHtml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

export function emailMessage(a: OutgoingAlert, baseUrl?: string): EmailMessage {
  const label = isAlertKind(a.kind) ? alertKindLabels[a.kind] : a.kind;
  const links = absoluteLinks(a, baseUrl);
  const subject = `[Ceilings] ${label}${a.endpointKey ? `: ${a.endpointKey}` : ""}`;
  const when = `${a.createdAt.toISOString().replace("T", " ").slice(0, 16)} UTC`;
  const lines = [a.message, "", `${label}, ${when} (alert #${a.id}).`];
  if (links?.mapIt !== undefined) lines.push("", `Map the items to endpoints: ${links.mapIt}`);
  else if (links?.chart !== undefined) lines.push("", `Spend chart for this window: ${links.chart}`, `Refusals in this window: ${links.refusals}`);
  lines.push("", "— Ceilings");
  const linkHtml = !links
    ? ""
    : links.mapIt !== undefined
      ? `<p><a href="${escapeHtml(links.mapIt)}">Map the items to endpoints</a></p>`
      : `<p><a href="${escapeHtml(links.chart)}">Spend chart for this window</a> · <a href="${escapeHtml(links.refusals)}">Refusals in this window</a></p>`;
  const html = `<p style="font-size:16px"><strong>${escapeHtml(a.message)}</strong></p><p>${escapeHtml(label)}, ${escapeHtml(when)} (alert #${a.id}).</p>${linkHtml}<p style="color:#71717a">— Ceilings</p>`;
  return { subject, text: lines.join("\n"), html };
}

/** The password a destination refers to, or an error sentence for the delivery's last_error. */
export function resolvePassword(ref: string | null, lookup: SecretLookup): { ok: true; password: string | undefined } | { ok: false; error: string } {
  if (ref === null || ref === "") return { ok: true, password: undefined };
  const name = ref.startsWith("env:") ? ref.slice(4) : ref;
  if (!name.startsWith(SECRET_PREFIX) || !/^[A-Z0-9_]+$/.test(name)) {
    return { ok: false, error: `the SMTP password reference must name an environment variable ${SECRET_PREFIX}..., got '${ref.slice(0, 60)}'` };
  }
  const value = lookup(name);
  if (value === undefined || value === "") return { ok: false, error: `${name} is not set in the worker's environment` };
  return { ok: true, password: value };
}

/** Sends one alert; null on success, else why it failed (retried by the outbox). */
export async function sendAlertEmail(
  destination: AlertDestination,
  alert: OutgoingAlert,
  s: { baseUrl?: string; timeoutMs?: number; secrets: SecretLookup },
): Promise<string | null> {
  if (!destination.smtpHost || !destination.smtpPort || !destination.smtpTls || !destination.emailFrom) {
    return "the e-mail destination has no SMTP settings";
  }
  const password = resolvePassword(destination.smtpPasswordRef, s.secrets);
  if (!password.ok) return password.error;
  const timeout = s.timeoutMs ?? 10_000;
  const transport = nodemailer.createTransport({
    host: destination.smtpHost,
    port: destination.smtpPort,
    // tls: TLS from the first byte (465); starttls: must upgrade (587), never falls back to clear text; none: loopback relays only.
    secure: destination.smtpTls === "tls",
    requireTLS: destination.smtpTls === "starttls",
    ignoreTLS: destination.smtpTls === "none",
    auth: destination.smtpUsername ? { user: destination.smtpUsername, pass: password.password } : undefined,
    connectionTimeout: timeout,
    greetingTimeout: timeout,
    socketTimeout: timeout,
  });
  const message = emailMessage(alert, s.baseUrl);
  try {
    await transport.sendMail({
      from: destination.emailFrom,
      to: destination.target,
      subject: message.subject,
      text: message.text,
      html: message.html,
      // Stable per alert and destination, so a receiver can see a resend after a worker crash.
      messageId: `<alert-${alert.id}.${destination.id}@ceilings>`,
    });
    return null;
  } catch (error) {
    return (error instanceof Error ? error.message : String(error)).slice(0, 500);
  } finally {
    transport.close();
  }
}
