// Run inside a scratch project that installed the packed @ceilings/client and the real SDKs
// (wrappers.int.test.ts makes it): `node scenarios.mjs <name>...` runs each scenario once and
// prints one JSON line per scenario, { name, ok, error? }. Every call is made for the account
// named like its scenario, so the test finds its reservations by caller.
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import Anthropic from "@anthropic-ai/sdk";
import { generateText, streamText, wrapLanguageModel } from "ai";
import nodemailer from "nodemailer";
import OpenAI from "openai";
import twilio from "twilio";
import { createCeilingsClient } from "@ceilings/client";
import { ceilingsMiddleware } from "@ceilings/client/ai";
import { withCeilings as withAnthropic } from "@ceilings/client/anthropic";
import { withCeilings as withMailer } from "@ceilings/client/email";
import { withCeilings as withOpenAI } from "@ceilings/client/openai";
import { withCeilings as withTwilio } from "@ceilings/client/twilio";

// A service outside this repository: its own environment, not lib/env.ts.
// eslint-disable-next-line no-restricted-syntax
const env = process.env;
const P = env.PROVIDER_URL;
const ceilings = createCeilingsClient({ baseUrl: env.CEILINGS_URL, apiKey: env.API_KEY, deadlineMs: 15000 });
const openai = withOpenAI(new OpenAI({ baseURL: `${P}/openai/v1`, apiKey: "sk-fake", maxRetries: 1 }), { ceilings, endpoint: env.E_OAI });
const anthropic = withAnthropic(new Anthropic({ baseURL: `${P}/anthropic`, apiKey: "sk-ant-fake", maxRetries: 1 }), { ceilings, endpoint: env.E_ANT });
const compatible = createOpenAICompatible({ name: "fake", baseURL: `${P}/openai/v1`, apiKey: "sk-fake", includeUsage: true });
const aiModel = (id) => wrapLanguageModel({ model: compatible.chatModel(id), middleware: ceilingsMiddleware({ ceilings, endpoint: env.E_AI }) });
const twilioClient = twilio(`AC${"0".repeat(32)}`, "fake-token");
twilioClient.api.baseUrl = `${P}/twilio`;
const sms = withTwilio(twilioClient, { ceilings, endpoint: env.E_SMS });
const mailer = withMailer(nodemailer.createTransport({ host: "127.0.0.1", port: Number(env.SMTP_PORT), secure: false, ignoreTLS: true }), {
  ceilings,
  endpoint: env.E_MAIL,
});
const conc = withOpenAI(new OpenAI({ baseURL: `${P}/openai/v1`, apiKey: "sk-fake", maxRetries: 0 }), { ceilings, endpoint: env.E_CONC, maxInputTokens: 100 });

const prompt = (name) => [{ role: "user", content: `[${name}] Write a haiku about a ceiling that holds.` }];
const drain = async (stream) => {
  for await (const _ of stream) void _;
};

const scenarios = {
  "oai-chat": (c, n) => c.chat.completions.create({ model: "gpt-4o", messages: prompt(n), max_completion_tokens: 64 }),
  "oai-chat-cached": (c, n) => c.chat.completions.create({ model: "gpt-4o:cached", messages: prompt(n), max_tokens: 64 }),
  "oai-chat-stream": async (c, n) => drain(await c.chat.completions.create({ model: "gpt-4o", messages: prompt(n), max_completion_tokens: 64, stream: true })),
  "oai-chat-stream-break": async (c, n) =>
    drain(await c.chat.completions.create({ model: "gpt-4o:break", messages: prompt(n), max_completion_tokens: 64, stream: true })),
  "oai-chat-stream-abandon": async (c, n) => {
    let seen = 0;
    for await (const _ of await c.chat.completions.create({ model: "gpt-4o", messages: prompt(n), max_completion_tokens: 64, stream: true }))
      if (++seen === 3) break;
  },
  "oai-chat-stream-error": async (c, n) =>
    drain(await c.chat.completions.create({ model: "gpt-4o:error", messages: prompt(n), max_completion_tokens: 64, stream: true })),
  // The same call retried with its idempotency key: the second is never charged again.
  "oai-idem": async (_, n) => {
    const c = openai.withCall({ caller: n, idempotencyKey: `${n}-key-1` });
    await c.chat.completions.create({ model: "gpt-4o", messages: prompt(n), max_completion_tokens: 64 });
    return c.chat.completions.create({ model: "gpt-4o", messages: prompt(n), max_completion_tokens: 64 });
  },
  "oai-chat-429": (c, n) => c.chat.completions.create({ model: "gpt-4o:429", messages: prompt(n), max_completion_tokens: 64 }),
  "oai-chat-429once": (c, n) => c.chat.completions.create({ model: "gpt-4o:429once", messages: prompt(n), max_completion_tokens: 64 }),
  "oai-no-max": (c, n) => c.chat.completions.create({ model: "gpt-4o", messages: prompt(n) }),
  "oai-responses": (c, n) => c.responses.create({ model: "gpt-4o", input: prompt(n), max_output_tokens: 64 }),
  "oai-responses-stream": async (c, n) => drain(await c.responses.create({ model: "gpt-4o:cached", input: prompt(n), max_output_tokens: 64, stream: true })),
  "ant-create": (a, n) => a.messages.create({ model: "claude-sonnet-4-5", max_tokens: 64, messages: prompt(n) }),
  "ant-create-cachewrite": (a, n) =>
    a.messages.create({
      model: "claude-sonnet-4-5:cachewrite",
      max_tokens: 64,
      system: [{ type: "text", text: "You are terse.", cache_control: { type: "ephemeral" } }],
      messages: prompt(n),
    }),
  "ant-create-cacheread": (a, n) => a.messages.create({ model: "claude-sonnet-4-5:cacheread", max_tokens: 64, messages: prompt(n) }),
  "ant-create-stream": async (a, n) => drain(await a.messages.create({ model: "claude-sonnet-4-5", max_tokens: 64, messages: prompt(n), stream: true })),
  "ant-stream": async (a, n) => a.messages.stream({ model: "claude-sonnet-4-5:cacheread", max_tokens: 64, messages: prompt(n) }).finalMessage(),
  "ant-stream-break": async (a, n) => a.messages.stream({ model: "claude-sonnet-4-5:break", max_tokens: 64, messages: prompt(n) }).finalMessage(),
  "ant-stream-error": async (a, n) => drain(await a.messages.create({ model: "claude-sonnet-4-5:error", max_tokens: 64, messages: prompt(n), stream: true })),
  "ant-429": (a, n) => a.messages.create({ model: "claude-sonnet-4-5:429", max_tokens: 64, messages: prompt(n) }),
  "ai-generate": (_, n) => generateText({ model: aiModel("gpt-4o"), messages: prompt(n), maxOutputTokens: 64, providerOptions: { ceilings: { caller: n } } }),
  "ai-stream": async (_, n) => {
    const result = streamText({ model: aiModel("gpt-4o:cached"), messages: prompt(n), maxOutputTokens: 64, providerOptions: { ceilings: { caller: n } } });
    await drain(result.textStream);
    return result.usage;
  },
  "ai-stream-break": async (_, n) => {
    const result = streamText({
      model: aiModel("gpt-4o:break"),
      messages: prompt(n),
      maxOutputTokens: 64,
      providerOptions: { ceilings: { caller: n } },
      onError: () => undefined,
    });
    await drain(result.textStream);
  },
  "sms-gsm": (t, n) => t.messages.create({ to: "+14155550101", from: "+14155552671", body: `[${n}] Your code is 123456` }),
  "sms-long": (t, n) => t.messages.create({ to: "+14155550102", from: "+14155552671", body: `[${n}] ${"Your sign-in code is 123456. ".repeat(7)}` }),
  "sms-ucs2": (t, n) => t.messages.create({ to: "+14155550103", from: "+14155552671", body: `[${n}] ${"Ваш код 123456. ".repeat(5)}` }),
  "sms-smart": (t, n) =>
    t.messages.create({
      to: "+14155550104",
      from: "+14155552671",
      smartEncoded: true,
      body: `[${n}] It’s your code: 123456. ${"Use it within ten minutes. ".repeat(2)}`,
    }),
  "sms-cooldown": async (t, n) => {
    await t.messages.create({ to: "+14155550105", from: "+14155552671", body: `[${n}] first` });
    return t.messages.create({ to: "+14155550105", from: "+14155552671", body: `[${n}] second` });
  },
  "mail-many": (m, n) =>
    m.sendMail({
      from: "app@example.com",
      to: 'ada@example.com, "Grace, H" <grace@example.com>',
      cc: [{ name: "Lin", address: "lin@example.com" }],
      subject: `[${n}] hello`,
      text: "hi",
    }),
  "mail-all-or-none": async (m, n) => {
    await m.sendMail({ from: "app@example.com", to: "once@example.com", subject: `[${n}] first`, text: "hi" });
    return m.sendMail({ from: "app@example.com", to: ["fresh@example.com", "once@example.com"], subject: `[${n}] second`, text: "hi" });
  },
  conc: (c, n) => c.chat.completions.create({ model: "gpt-4o:hold", messages: prompt(n), max_completion_tokens: 50 }),
};

const clientFor = (name, caller) => {
  if (name === "conc") return conc.withCall({ caller });
  if (name.startsWith("oai")) return openai.withCall({ caller });
  if (name.startsWith("ant")) return anthropic.withCall({ caller });
  if (name.startsWith("sms")) return sms.withCall({ caller });
  if (name.startsWith("mail")) return mailer.withCall({ caller });
  return null;
};

async function run(name, caller = name) {
  try {
    await scenarios[name](clientFor(name, caller), caller);
    return { name, caller, ok: true };
  } catch (error) {
    const cause = error?.cause;
    return {
      name,
      caller,
      ok: false,
      error: { name: error?.name, message: String(error?.message), gate: error?.gate ?? cause?.gate, cause: cause?.name, retryAt: error?.retryAt },
    };
  }
}

const [first, ...rest] = process.argv.slice(2);
if (first === "--parallel") {
  // --parallel <scenario> <count> <caller prefix>: that many calls at once.
  const [name, count, prefix] = rest;
  const results = await Promise.all(Array.from({ length: Number(count) }, (_, i) => run(name, `${prefix}${i}`)));
  for (const r of results) console.log(JSON.stringify(r));
} else {
  for (const name of [first, ...rest]) console.log(JSON.stringify(await run(name)));
}
