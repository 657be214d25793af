import { randomUUID } from "node:crypto";
import { env } from "@/lib/env";

// A stand-in for a paid email API: it takes time, sometimes fails, and never sends anything. The
// demo service goes through it exactly as it would through a real provider.

export type EmailMessage = { to: string; subject: string; text: string };

export type SendResult = { ok: true; messageId: string } | { ok: false; error: string };

export type EmailProvider = { send: (message: EmailMessage) => Promise<SendResult> };

export type FakeProviderOptions = {
  /** How long every send takes, in milliseconds. */
  latencyMs: number;
  /** Share of sends that fail, from 0 to 1. */
  failureRate: number;
  /** Source of randomness for failures; tests pass a fixed one. */
  random?: () => number;
};

export type ProviderStats = { attempts: number; delivered: number; failed: number; recent: ReadonlyArray<EmailMessage & { messageId: string; at: string }> };

/** Recent deliveries kept for inspection; bounded so a flood cannot grow memory. */
const RECENT_MAX = 50;

export type FakeProvider = EmailProvider & { stats: () => ProviderStats };

export function createFakeProvider(options: FakeProviderOptions): FakeProvider {
  if (!Number.isInteger(options.latencyMs) || options.latencyMs < 0) throw new RangeError("latencyMs must be a whole number, 0 or more");
  if (!(options.failureRate >= 0 && options.failureRate <= 1)) throw new RangeError("failureRate must be from 0 to 1");
  const random = options.random ?? Math.random;
  const stats = { attempts: 0, delivered: 0, failed: 0 };
  const recent: Array<EmailMessage & { messageId: string; at: string }> = [];

  return {
    async send(message) {
      stats.attempts += 1;
      if (options.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, options.latencyMs));
      if (random() < options.failureRate) {
        stats.failed += 1;
        return { ok: false, error: "provider answered 503 (simulated)" };
      }
      stats.delivered += 1;
      const messageId = randomUUID();
      recent.push({ ...message, messageId, at: new Date().toISOString() });
      if (recent.length > RECENT_MAX) recent.shift();
      return { ok: true, messageId };
    },
    stats: () => ({ ...stats, recent: [...recent] }),
  };
}

const holder = globalThis as typeof globalThis & { __ceilingsDemoProvider?: FakeProvider };

/** The demo service's provider, configured by DEMO_PROVIDER_LATENCY_MS and DEMO_PROVIDER_FAILURE_RATE. */
export function demoProvider(): FakeProvider {
  const e = env();
  holder.__ceilingsDemoProvider ??= createFakeProvider({ latencyMs: e.DEMO_PROVIDER_LATENCY_MS, failureRate: e.DEMO_PROVIDER_FAILURE_RATE });
  return holder.__ceilingsDemoProvider;
}
