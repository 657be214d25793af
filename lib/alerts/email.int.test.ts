import { eq, sql } from "drizzle-orm";
import { SMTPServer, type SMTPServerOptions } from "smtp-server";
import { beforeEach, describe, expect, it } from "vitest";
import { alertDeliveries, alertDestinations, alerts } from "@/db/schema";
import { skipWithoutDatabase } from "@/db/testing";
import { useTestDatabase } from "@/db/testing-suite";
import { makeEndpoint } from "@/lib/enforcement/test-fixtures";
import { deliverDueAlerts, type DeliverySettings } from "./delivery";
import { createDestination, DestinationInput } from "./destinations";
import { emailMessage, resolvePassword } from "./email";
import { fireAlert } from "./fire";

// E-mail alerts against a real SMTP server (smtp-server) on loopback: the outbox retries after the
// server refused once, authenticates with the password the destination refers to, and the
// message reads like the dashboard with a link to the window's chart.

type Received = { from: string; to: string[]; raw: string; user: string | undefined };

async function startSmtp(opts: { refuseFirst: number; user?: string; pass?: string }) {
  const received: Received[] = [];
  let refusals = opts.refuseFirst;
  const options: SMTPServerOptions = {
    disabledCommands: opts.user ? ["STARTTLS"] : ["STARTTLS", "AUTH"],
    allowInsecureAuth: true,
    authOptional: !opts.user,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === opts.user && auth.password === opts.pass) return callback(null, { user: auth.username });
      return callback(new Error("Invalid username or password"));
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        if (refusals > 0) {
          refusals--;
          const error = Object.assign(new Error("mailbox busy, try again later"), { responseCode: 451 });
          return callback(error);
        }
        received.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw: Buffer.concat(chunks).toString("utf8"),
          user: typeof session.user === "string" ? session.user : undefined,
        });
        callback();
      });
    },
  };
  const server = new SMTPServer(options);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return { port, received, close: () => new Promise<void>((r) => server.close(() => r())) };
}

const settings = (secrets: Record<string, string> = {}): DeliverySettings => ({
  // A retry waits a minute: the test makes it due by hand, so the refusal is seen on its own.
  retryBaseMs: 60_000,
  retryCapMs: 60_000,
  maxAttempts: 5,
  egress: { allowHosts: [] },
  timeoutMs: 3000,
  leaseMs: 10_000,
  baseUrl: "https://ceilings.example.com",
  secrets: (name) => secrets[name],
});

describe.skipIf(skipWithoutDatabase())("e-mail alerts through a real SMTP server", () => {
  const t = useTestDatabase("alert_email", { max: 4 });
  beforeEach(async () => {
    await t.db.delete(alertDestinations);
  });

  async function fire(message: string): Promise<number> {
    const key = `email:${Date.now()}:${Math.random()}`;
    const e = await makeEndpoint(t.db, { ceilings: [{ metric: "units", scope: "global", window: "utc_day", value: 100 }] });
    const windowStart = new Date(new Date().toISOString().slice(0, 10));
    expect(
      await fireAlert(t.db, { kind: "threshold", dedupeKey: key, endpointId: e.endpointId, ceilingId: e.ceilingIds[0], windowStart, message, details: {} }),
    ).toBe(true);
    const [row] = await t.db.select({ id: alerts.id }).from(alerts).where(eq(alerts.dedupeKey, key));
    if (!row) throw new Error("alert not stored");
    return row.id;
  }
  async function delivery(alertId: number) {
    const [row] = await t.db.select().from(alertDeliveries).where(eq(alertDeliveries.alertId, alertId));
    return row;
  }

  it("retries after the server refused once, then delivers a message that reads like the dashboard", async () => {
    const smtp = await startSmtp({ refuseFirst: 1, user: "alerts", pass: "s3cret-pass" });
    try {
      // Through the same input the dashboard's form is parsed with.
      const input = DestinationInput.parse({
        name: "on-call inbox",
        kind: "email",
        target: "oncall@example.com, cfo@example.com",
        smtpHost: "127.0.0.1",
        smtpPort: String(smtp.port),
        smtpTls: "none",
        smtpUsername: "alerts",
        smtpPasswordRef: "env:CEILINGS_SECRET_SMTP",
        emailFrom: "Ceilings <ceilings@example.com>",
      });
      await createDestination(t.db, { input, actor: { type: "system", name: "test" } });
      const message = "llm.chat reached 80% of its ceiling: 80,000 of 100,000 tokens per UTC day";
      const alertId = await fire(message);
      const s = settings({ CEILINGS_SECRET_SMTP: "s3cret-pass" });

      expect(await deliverDueAlerts(t.db, s)).toMatchObject({ retried: 1, delivered: 0 });
      expect(await delivery(alertId)).toMatchObject({ state: "pending", attempts: 1, lastError: expect.stringContaining("mailbox busy") });
      expect(smtp.received).toHaveLength(0);

      await t.db
        .update(alertDeliveries)
        .set({ nextAttemptAt: sql`now()` })
        .where(eq(alertDeliveries.alertId, alertId));
      expect(await deliverDueAlerts(t.db, s)).toMatchObject({ delivered: 1 });
      expect(await delivery(alertId)).toMatchObject({ state: "delivered", attempts: 2, lastError: null });
      expect(smtp.received).toHaveLength(1);
      const mail = smtp.received[0];
      expect(mail?.user).toBe("alerts");
      expect(mail?.from).toBe("ceilings@example.com");
      expect(mail?.to).toEqual(["oncall@example.com", "cfo@example.com"]);
      const raw = (mail?.raw ?? "").replace(/=\r?\n/g, "");
      expect(raw).toMatch(/^Subject: \[Ceilings\] Threshold crossed/m);
      expect(raw).toContain(message);
      expect(raw).toContain("Spend chart for this window: https://ceilings.example.com/endpoints/");
    } finally {
      await smtp.close();
    }
  });

  it("does not send when the password reference is outside CEILINGS_SECRET_ or unset, and says why", async () => {
    const smtp = await startSmtp({ refuseFirst: 0, user: "alerts", pass: "x" });
    try {
      await t.db.insert(alertDestinations).values({
        name: "sneaky",
        kind: "email",
        target: "attacker@example.com",
        createdBy: "test",
        smtpHost: "127.0.0.1",
        smtpPort: smtp.port,
        smtpTls: "none",
        smtpUsername: "alerts",
        smtpPasswordRef: "env:NEXTAUTH_SECRET",
        emailFrom: "ceilings@example.com",
      });
      const alertId = await fire("email.subscribe reached 50% of its ceiling");
      await deliverDueAlerts(t.db, settings({ NEXTAUTH_SECRET: "x" }));
      expect(await delivery(alertId)).toMatchObject({ lastError: expect.stringContaining("CEILINGS_SECRET_") });
      expect(smtp.received).toHaveLength(0);
    } finally {
      await smtp.close();
    }
  });
});

describe("e-mail message and secret references", () => {
  it("links to the window's chart and refusals, and escapes HTML", () => {
    const m = emailMessage(
      {
        id: 7,
        kind: "threshold",
        message: "a <b> reached 100%",
        endpointKey: "llm.chat",
        ceilingId: 1,
        windowStart: new Date("2026-12-01T00:00:00Z"),
        createdAt: new Date("2026-12-01T09:00:00Z"),
        details: {},
      },
      "https://c.example",
    );
    expect(m.subject).toBe("[Ceilings] Threshold crossed: llm.chat");
    expect(m.text).toContain("Spend chart for this window: https://c.example/endpoints/llm.chat#spend");
    expect(m.html).toContain("a &lt;b&gt; reached 100%");
  });

  it("refuses an e-mail destination without SMTP settings or with a password reference outside CEILINGS_SECRET_", () => {
    const base = { name: "x", kind: "email", target: "a@b.co", smtpHost: "smtp.b.co", smtpPort: "587", smtpTls: "starttls", emailFrom: "c@b.co" };
    expect(DestinationInput.safeParse(base).success).toBe(true);
    expect(DestinationInput.safeParse({ ...base, smtpPasswordRef: "env:DATABASE_URL" }).success).toBe(false);
    expect(DestinationInput.safeParse({ ...base, target: "a@b.co, nope" }).success).toBe(false);
    expect(DestinationInput.safeParse({ ...base, smtpHost: undefined }).success).toBe(false);
  });

  it("only reads CEILINGS_SECRET_ names", () => {
    const lookup = (n: string) => (n === "CEILINGS_SECRET_A" ? "pw" : "leak");
    expect(resolvePassword("env:CEILINGS_SECRET_A", lookup)).toEqual({ ok: true, password: "pw" });
    expect(resolvePassword("DATABASE_URL", lookup)).toMatchObject({ ok: false });
    expect(resolvePassword(null, lookup)).toEqual({ ok: true, password: undefined });
  });
});
