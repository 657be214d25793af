import { randomUUID } from "node:crypto";
import OpenAI from "openai";
import { canonicalDestination } from "@/lib/canonical";
import { AuthenticationError, CeilingsError, createCeilingsClient, ForbiddenError, InvalidRequestError } from "@/lib/client/index";
import { CeilingsRefusedError } from "@/lib/client/wrappers/guard";
import { withCeilings } from "@/lib/client/wrappers/openai";
import { startFakeModel } from "@/lib/demo/fake-model";
import { inboxAliases, visitorAddress, visitorIp } from "./aliases";
import type { TrafficArgs } from "./args";

// Traffic against a running dashboard: every loop is bounded by the deadline and by one shared
// request budget, every request by a timeout, and concurrency by a small pool.

const REQUEST_TIMEOUT_MS = 10_000;
const MAX_IN_FLIGHT = 16;

export type Tally = {
  subscribe: { sent: number; accepted: number; invalid: number; failed: number };
  abusive: { sent: number; accepted: number; aliases: number; key: string };
  api: {
    skipped: string | null;
    sent: number;
    granted: number;
    settled: number;
    released: number;
    refusedByGate: Record<string, number>;
    errors: Record<string, number>;
  };
};

type Ctx = { args: TrafficArgs; deadline: number; budget: { left: number }; inFlight: number; waiters: Array<() => void>; tally: Tally; runTag: string };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

async function request(ctx: Ctx, path: string, init: { body: unknown; headers?: Record<string, string> }): Promise<{ status: number; json: unknown } | null> {
  if (ctx.budget.left <= 0 || Date.now() >= ctx.deadline) return null;
  ctx.budget.left -= 1;
  while (ctx.inFlight >= MAX_IN_FLIGHT) await new Promise<void>((resolve) => ctx.waiters.push(resolve));
  ctx.inFlight += 1;
  try {
    const response = await fetch(new URL(path, ctx.args.baseUrl), {
      method: "POST",
      headers: { "content-type": "application/json", ...init.headers },
      body: JSON.stringify(init.body),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      redirect: "manual",
    });
    const text = await response.text();
    let json: unknown = null;
    try {
      json = text ? (JSON.parse(text) as unknown) : null;
    } catch {
      json = null;
    }
    return { status: response.status, json };
  } catch {
    return { status: 0, json: null };
  } finally {
    ctx.inFlight -= 1;
    ctx.waiters.shift()?.();
  }
}

async function subscribeOnce(ctx: Ctx, email: string, ip: string, into: { sent: number; accepted: number }): Promise<void> {
  const answer = await request(ctx, "/api/demo/subscribe", { body: { email }, headers: { "x-forwarded-for": ip } });
  if (!answer) return;
  into.sent += 1;
  if (answer.status === 202) into.accepted += 1;
  else if (answer.status === 400) ctx.tally.subscribe.invalid += 1;
  else ctx.tally.subscribe.failed += 1;
}

/** Steady visitors, one in five a returning one (their inbox is cooling down). */
async function steady(ctx: Ctx): Promise<void> {
  const pending: Promise<void>[] = [];
  for (let n = 0; Date.now() < ctx.deadline && ctx.budget.left > 0; n++) {
    const visitor = n % 5 === 4 ? Math.max(0, n - 7) : n;
    pending.push(subscribeOnce(ctx, visitorAddress(visitor, ctx.runTag), visitorIp(visitor), ctx.tally.subscribe));
    await sleep(1000 / ctx.args.rate);
  }
  await Promise.all(pending);
}

/** A launch-day burst: many new visitors at once, enough to cross the daily ceiling's alerts. */
async function burst(ctx: Ctx, at: number, size: number): Promise<void> {
  await sleep(Math.max(0, at - Date.now()));
  await Promise.all(
    Array.from({ length: size }, (_, i) => subscribeOnce(ctx, visitorAddress(10_000 + i, ctx.runTag), visitorIp(500 + i), ctx.tally.subscribe)),
  );
}

/** One caller, one inbox, many spellings: the cooldown must let at most one through. */
async function abusive(ctx: Ctx, at: number): Promise<void> {
  await sleep(Math.max(0, at - Date.now()));
  const aliases = inboxAliases(`victim${ctx.runTag}`, 60);
  ctx.tally.abusive.aliases = aliases.length;
  ctx.tally.abusive.key = canonicalDestination(aliases[0] ?? "").key;
  for (let i = 0; i < aliases.length; i += 10) {
    await Promise.all(aliases.slice(i, i + 10).map((email) => subscribeOnce(ctx, email, "203.0.113.66", ctx.tally.abusive)));
  }
}

/**
 * llm.chat as a service calls it: the `openai` SDK wrapped by Ceilings (reserve the worst case,
 * call the model, settle from its usage, release when it fails), against a local fake model. A
 * chat every so often, then a flood that the throttle turns away.
 */
async function api(ctx: Ctx): Promise<void> {
  const key = ctx.args.apiKey;
  const t = ctx.tally.api;
  if (!key) return;
  const model = await startFakeModel();
  const ceilings = createCeilingsClient({ baseUrl: ctx.args.baseUrl.origin, apiKey: key, deadlineMs: REQUEST_TIMEOUT_MS });
  // llm.chat has one price a token: the wrapper charges input and output tokens as its amount.
  const openai = withCeilings(new OpenAI({ baseURL: `${model.url}/v1`, apiKey: "demo", maxRetries: 0 }), { ceilings, endpoint: "llm.chat", parts: "amount" });
  // A key bound to an account charges that account; a trusted-service key must name the caller.
  let caller: string | undefined;
  let stopped = false;

  const chat = async (i: number): Promise<void> => {
    if (ctx.budget.left <= 0 || Date.now() >= ctx.deadline) return;
    ctx.budget.left -= 1;
    // Mostly ordinary chats; now and then one whose output bound is over the per-call max; one in
    // ten fails at the model (the wrapper releases it).
    const maxTokens = i % 40 === 39 ? 9000 : 200 + ((i * 379) % 2800);
    const content = i % 10 === 7 ? "Please fail this one." : `Summarise ticket ${i} in one line.`;
    const call = async () => {
      const client = openai.withCall({ idempotencyKey: `demo-${ctx.runTag}-${i}`, ...(caller === undefined ? {} : { caller }) });
      return client.chat.completions.create({ model: "demo-chat", messages: [{ role: "user", content }], max_completion_tokens: maxTokens });
    };
    t.sent += 1;
    try {
      try {
        await call();
      } catch (error) {
        if (!(error instanceof InvalidRequestError && error.code === "caller_required")) throw error;
        caller = "acct_demo_traffic";
        await call();
      }
      t.granted += 1;
      t.settled += 1;
    } catch (error) {
      if (error instanceof CeilingsRefusedError) {
        t.refusedByGate[error.gate] = (t.refusedByGate[error.gate] ?? 0) + 1;
      } else if (error instanceof OpenAI.APIError) {
        t.granted += 1;
        t.released += 1;
      } else {
        const code = error instanceof CeilingsError ? `${error.status} ${error.code}` : error instanceof Error ? error.name : "unknown";
        t.errors[code] = (t.errors[code] ?? 0) + 1;
        // A bad key or a key for another endpoint will not get better by retrying.
        if (error instanceof AuthenticationError || error instanceof ForbiddenError) stopped = true;
      }
    }
  };

  let i = 0;
  const floodAt = Date.now() + (ctx.deadline - Date.now()) * 0.6;
  const pending: Promise<void>[] = [];
  try {
    while (!stopped && Date.now() < ctx.deadline && ctx.budget.left > 0) {
      if (Date.now() >= floodAt && i < 1000) {
        // 90 calls in a few seconds: over llm.chat's throttle of 60 a minute for one caller.
        await Promise.all(Array.from({ length: 90 }, () => chat(i++)));
        i = Math.max(i, 1000);
      } else {
        pending.push(chat(i++));
      }
      await sleep(500);
    }
    await Promise.all(pending);
  } finally {
    await model.close();
  }
}

export async function runTraffic(args: TrafficArgs): Promise<Tally> {
  const start = Date.now();
  const ctx: Ctx = {
    args,
    deadline: start + args.seconds * 1000,
    budget: { left: args.maxRequests },
    inFlight: 0,
    waiters: [],
    runTag: randomUUID().slice(0, 6),
    tally: {
      subscribe: { sent: 0, accepted: 0, invalid: 0, failed: 0 },
      abusive: { sent: 0, accepted: 0, aliases: 0, key: "" },
      api: { skipped: args.apiKey ? null : "no --api-key given", sent: 0, granted: 0, settled: 0, released: 0, refusedByGate: {}, errors: {} },
    },
  };
  const span = args.seconds * 1000;
  // The abusive caller comes early, while the day's budget lasts, so the refusal log shows the
  // cooldown folding its aliases; the burst later pushes the day's ceiling through its alerts.
  await Promise.all([steady(ctx), abusive(ctx, start + span * 0.1), burst(ctx, start + span * 0.4, 60), api(ctx)]);
  return ctx.tally;
}
