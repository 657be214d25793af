import { describe, expect, it } from "vitest";
import { readJsonBody } from "./body";
import { exceedsJsonDepth, MAX_JSON_DEPTH } from "./strict-json";

const request = (body: BodyInit | null, headers: Record<string, string> = {}) =>
  new Request("http://x.test/", { method: "POST", body, headers, duplex: "half" } as RequestInit);

function streamOf(chunks: number, size: number): ReadableStream<Uint8Array> {
  let sent = 0;
  return new ReadableStream({
    pull(controller) {
      if (sent >= chunks) return controller.close();
      sent += 1;
      controller.enqueue(new Uint8Array(size).fill(32));
    },
  });
}

describe("readJsonBody", () => {
  it("parses JSON and reads an empty body as an empty object", async () => {
    expect(await readJsonBody(request('{"a":1}'))).toEqual({ ok: true, value: { a: 1 }, empty: false });
    expect(await readJsonBody(request(""))).toEqual({ ok: true, value: {}, empty: true });
    expect(await readJsonBody(request(null))).toEqual({ ok: true, value: {}, empty: true });
  });

  it("refuses malformed JSON and invalid UTF-8 with 400", async () => {
    expect(await readJsonBody(request("{"))).toMatchObject({ ok: false, status: 400, code: "invalid_json" });
    expect(await readJsonBody(request(new Uint8Array([0x7b, 0xff, 0x7d])))).toMatchObject({ ok: false, status: 400, code: "invalid_json" });
  });

  it("refuses a control character or a lone surrogate in any string, key or value, with invalid_characters", async () => {
    expect(await readJsonBody(request('{"a":"x\\u0000"}'))).toMatchObject({
      status: 400,
      code: "invalid_characters",
      message: "a must not contain control characters",
    });
    expect(await readJsonBody(request('{"a":["x\\ud800"]}'))).toMatchObject({
      status: 400,
      code: "invalid_characters",
      message: expect.stringContaining("a[0] must not contain a lone surrogate"),
    });
    expect(await readJsonBody(request('{"\\udc00":1}'))).toMatchObject({ status: 400, code: "invalid_characters" });
    // A pair is one character (U+1F600), whether escaped or sent as UTF-8.
    expect(await readJsonBody(request('{"a":"\\ud83d\\ude00"}'))).toEqual({ ok: true, value: { a: "\u{1f600}" }, empty: false });
    expect(await readJsonBody(request('{"a":"\u{1f600}"}'))).toEqual({ ok: true, value: { a: "\u{1f600}" }, empty: false });
  });

  it("refuses a body over the limit with 413, by its declared length or by counting a stream without one", async () => {
    expect(await readJsonBody(request("{}", { "content-length": "999999" }), 100)).toMatchObject({ status: 413, code: "body_too_large" });
    expect(await readJsonBody(request(`"${"x".repeat(200)}"`), 100)).toMatchObject({ status: 413 });
    let pulled = 0;
    const counting = streamOf(1000, 64).pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          pulled += 1;
          controller.enqueue(chunk);
        },
      }),
    );
    expect(await readJsonBody(request(counting), 1024)).toMatchObject({ status: 413 });
    // It stopped reading soon after the limit instead of buffering the whole stream.
    expect(pulled).toBeLessThan(40);
    expect(await readJsonBody(request(`"${"x".repeat(98)}"`), 100)).toEqual({ ok: true, value: "x".repeat(98), empty: false });
  });

  // 8,000 levels of "[" used to overflow the stack in the control-character walk: a 500 with an
  // empty body. Any depth is now a 400 naming the limit; the size cap is raised here so that
  // 100,000 levels reach the parser instead of the 16 KiB limit.
  const arrays = (n: number) => "[".repeat(n) + "]".repeat(n);
  const objects = (n: number) => '{"a":'.repeat(n) + "1" + "}".repeat(n);
  const mixed = (n: number) => '[{"a":'.repeat(n) + "1" + "}]".repeat(n);
  it.each([
    ["arrays", arrays],
    ["objects", objects],
    ["arrays of objects", mixed],
  ])("refuses %s nested 8,000 and 100,000 levels deep with a clean 400 nesting_too_deep", async (_name, nest) => {
    for (const depth of [MAX_JSON_DEPTH + 1, 8_000, 100_000]) {
      const text = nest(depth);
      expect(await readJsonBody(request(text), text.length + 1)).toEqual({
        ok: false,
        status: 400,
        code: "nesting_too_deep",
        message: `the request body nests arrays and objects more than ${MAX_JSON_DEPTH} levels deep`,
      });
    }
  });

  it("accepts nesting up to the limit, and does not count brackets inside strings", async () => {
    expect(await readJsonBody(request(arrays(MAX_JSON_DEPTH)))).toMatchObject({ ok: true });
    expect(await readJsonBody(request(objects(MAX_JSON_DEPTH)))).toMatchObject({ ok: true });
    const brackets = JSON.stringify({ a: "[".repeat(5_000), b: '\\"{{{' });
    expect(await readJsonBody(request(brackets))).toMatchObject({ ok: true, value: JSON.parse(brackets) });
    // A string ending in an escaped backslash ends there; an escaped quote does not end it.
    expect(exceedsJsonDepth(String.raw`["\\", ` + arrays(MAX_JSON_DEPTH) + "]")).toBe(true);
    expect(exceedsJsonDepth(String.raw`["\"[[[[", ` + arrays(MAX_JSON_DEPTH - 1) + "]")).toBe(false);
  });
});
