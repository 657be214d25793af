import { countTokens as cl100k } from "gpt-tokenizer/encoding/cl100k_base";
import { countTokens as o200k } from "gpt-tokenizer/encoding/o200k_base";
import { describe, expect, it } from "vitest";
import type { CeilingsClient } from "../index";
import type { Decision, Settled, Unavailable } from "../types";
import { recipients } from "./email";
import { charge, CeilingsRefusedError, hold, WorstCaseError } from "./guard";
import { smsSegments } from "./sms";
import { inputBound, openAiEncoding, textsOf, tokenizerFor, TOOLS_OVERHEAD } from "./tokens";

describe("SMS segments", () => {
  it("counts GSM-7 at 160 in one segment and 153 a segment after, extension characters as two", () => {
    expect(smsSegments("")).toEqual({ encoding: "GSM-7", segments: 1 });
    expect(smsSegments("a".repeat(160))).toEqual({ encoding: "GSM-7", segments: 1 });
    expect(smsSegments("a".repeat(161))).toEqual({ encoding: "GSM-7", segments: 2 });
    expect(smsSegments("a".repeat(306))).toEqual({ encoding: "GSM-7", segments: 2 });
    expect(smsSegments("a".repeat(307))).toEqual({ encoding: "GSM-7", segments: 3 });
    expect(smsSegments("€".repeat(80))).toEqual({ encoding: "GSM-7", segments: 1 });
    expect(smsSegments("€".repeat(81))).toEqual({ encoding: "GSM-7", segments: 2 });
    // 152 septets then an escape pair: the pair is not split, so it opens the second segment.
    expect(smsSegments(`${"a".repeat(152)}€${"a".repeat(152)}`)).toEqual({ encoding: "GSM-7", segments: 3 });
  });

  it("counts UCS-2 at 70 and 67 UTF-16 units, a surrogate pair never split", () => {
    expect(smsSegments("é ok")).toEqual({ encoding: "GSM-7", segments: 1 });
    expect(smsSegments("Привет".padEnd(70, "!"))).toEqual({ encoding: "UCS-2", segments: 1 });
    expect(smsSegments("Привет".padEnd(71, "!"))).toEqual({ encoding: "UCS-2", segments: 2 });
    expect(smsSegments("😀".repeat(35))).toEqual({ encoding: "UCS-2", segments: 1 });
    // 33 emoji fill 66 units of the first 67: the 34th does not fit its 1 unit left.
    expect(smsSegments("😀".repeat(36))).toEqual({ encoding: "UCS-2", segments: 2 });
    expect(smsSegments(`${"x".repeat(66)}😀${"x".repeat(10)}`)).toEqual({ encoding: "UCS-2", segments: 2 });
  });
});

describe("e-mail recipients", () => {
  it("reads to, cc and bcc in every form nodemailer takes, each address once", () => {
    expect(
      recipients({
        to: '"Doe, Jane" <Jane@Example.com>, bob@example.com',
        cc: [{ name: "Lin", address: "lin@example.com" }, "bob@example.com"],
        bcc: "audit@example.com",
      }),
    ).toEqual(["jane@example.com", "bob@example.com", "lin@example.com", "audit@example.com"]);
    expect(recipients({})).toEqual([]);
  });
});

describe("the input bound", () => {
  it("is never below gpt-tokenizer's count in either encoding, for texts of every script", () => {
    const samples = [
      "Hello, world!",
      "   many    spaces   ",
      "日本語のテキストです。",
      "Привет, как дела?",
      "🙂🙃😀 emoji",
      "a".repeat(5000),
      "x\u0000y\u200bz",
      JSON.stringify({ type: "object", properties: { city: { type: "string" } } }),
    ];
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 200; i++)
      samples.push(Array.from({ length: 1 + Math.floor(random() * 200) }, () => String.fromCodePoint(32 + Math.floor(random() * 0x2fff))).join(""));
    for (const text of samples) {
      const bound = inputBound({ messages: 1, texts: [text] });
      expect(bound).toBeGreaterThanOrEqual(o200k(text));
      expect(bound).toBeGreaterThanOrEqual(cl100k(text));
      expect(inputBound({ messages: 1, texts: [text] }, o200k)).toBeGreaterThan(o200k(text));
    }
  });

  it("adds the tokens a provider adds unseen for tool definitions", () => {
    const plain = inputBound({ messages: 1, texts: ["hi"] });
    expect(inputBound({ messages: 1, texts: ["hi"], tools: [{ name: "f" }] })).toBe(plain + TOOLS_OVERHEAD);
    expect(inputBound({ messages: 1, texts: ["hi"], tools: [] })).toBe(plain);
  });

  it("refuses media it cannot bound, and knows OpenAI's encodings by model family", async () => {
    expect(() => textsOf([{ role: "user", content: [{ type: "image_url", image_url: { url: "data:..." } }] }])).toThrow(WorstCaseError);
    expect(textsOf([{ role: "user", content: [{ type: "text", text: "hi" }] }])).toContain("hi");
    expect(openAiEncoding("gpt-4o-mini")).toBe("o200k_base");
    expect(openAiEncoding("gpt-4-turbo")).toBe("cl100k_base");
    expect(openAiEncoding("my-finetune")).toBeUndefined();
    expect(await tokenizerFor("o200k_base")).toBeTypeOf("function");
  });
});

describe("charges mapped onto an endpoint's parts", () => {
  it("names every part mapped, adds fields mapped to one part, and sums all for an amount", () => {
    expect(charge({ input: "input", cachedInput: "cached_input", output: "output" }, { input: 10, output: 5 })).toEqual({
      parts: { input: 10, cached_input: 0, output: 5 },
    });
    expect(charge({ input: "input", cachedInput: "input", output: "output" }, { input: 10, cachedInput: 4, output: 5 })).toEqual({
      parts: { input: 14, output: 5 },
    });
    expect(charge("amount", { input: 10, cachedInput: 4, output: 5 })).toEqual({ amount: 19 });
  });
});

// The protocol around a call, against a scripted client: what the server answered is the script.
function scripted(decision: Decision, settles: (Settled | Unavailable)[]) {
  const calls: string[] = [];
  const client = {
    reserve: async () => decision,
    settle: async (id: string, actual: unknown) => {
      calls.push(`settle ${id} ${JSON.stringify(actual)}`);
      return settles.shift() ?? { status: "settled", reservationId: id, actual: 0, overrun: false, replay: true };
    },
    release: async (id: string) => {
      calls.push(`release ${id}`);
      return { status: "released" as const, reservationId: id, replay: false };
    },
  } as unknown as CeilingsClient;
  return { client, calls };
}

describe("the reservation around a call", () => {
  const granted: Decision = { status: "granted", reservationId: "r1", expiresAt: "", replay: false, remaining: [], idempotencyKey: "k" };

  it("retries a settle that got no answer with the same reservation, and settles once", async () => {
    const lost: Unavailable = { status: "unavailable", reason: "network", message: "socket hang up", mayHaveApplied: true };
    const { client, calls } = scripted(granted, [lost, lost]);
    const held = await hold({ ceilings: client, endpoint: "e" }, undefined, { amount: 9 });
    await held.settle({ amount: 4 });
    await held.settle({ amount: 4 });
    await held.release();
    expect(calls).toEqual(["settle r1 4", "settle r1 4", "settle r1 4"]);
  }, 10_000);

  it("tells of a settle given up, and the reservation keeps its worst case until it expires", async () => {
    const lost: Unavailable = { status: "unavailable", reason: "deadline", message: "no answer" };
    const { client, calls } = scripted(granted, [lost, lost]);
    const failures: string[] = [];
    const held = await hold(
      { ceilings: client, endpoint: "e", resolveAttempts: 2, onResolveFailed: (f) => failures.push(`${f.verb} ${f.reservationId}`) },
      undefined,
      { amount: 9 },
    );
    await held.keepWorstCase();
    expect(calls).toEqual(["settle r1 9", "settle r1 9"]);
    expect(failures).toEqual(["settle r1"]);
  });

  it("refuses with a typed error carrying the gate, the limit and retryAt; unavailable fails closed unless told to fail open", async () => {
    const budget: Decision = { status: "refused", gate: "budget", message: "over", limit: 100, remaining: 3, retryAt: "2026-12-04T00:00:00Z" };
    const refused = await hold({ ceilings: scripted(budget, []).client, endpoint: "e" }, undefined, { amount: 9 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(CeilingsRefusedError);
    expect(refused).toMatchObject({ gate: "budget", limit: 100, remaining: 3, retryAt: "2026-12-04T00:00:00Z" });
    const down: Decision = { status: "refused", gate: "unavailable", reason: "network", message: "down" };
    await expect(hold({ ceilings: scripted(down, []).client, endpoint: "e" }, undefined, { amount: 1 })).rejects.toMatchObject({ gate: "unavailable" });
    const open = await hold({ ceilings: scripted(down, []).client, endpoint: "e", onUnavailable: "fail_open" }, undefined, { amount: 1 });
    expect(open.reservationId).toBeNull();
  });
});
