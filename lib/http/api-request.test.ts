import { describe, expect, it } from "vitest";
import { apiRequestOf, responseOf } from "./api-request";

describe("the fetch adapters of the API's handlers (Next's routes)", () => {
  it("reads a Request's headers, query and body as the handlers take them", async () => {
    const request = new Request("http://x.test/api/v1/endpoints/a?caller=b%20c", {
      method: "POST",
      headers: { Authorization: "Bearer k", "x-request-id": "r1" },
      body: '{"a":1}',
    });
    const read = await apiRequestOf(request);
    expect([read.header("authorization"), read.header("X-Request-Id"), read.header("origin")]).toEqual(["Bearer k", "r1", null]);
    expect(read.search).toBe("?caller=b%20c");
    expect(new TextDecoder().decode(read.body)).toBe('{"a":1}');
    expect((await apiRequestOf(new Request("http://x.test/"))).body).toBeUndefined();
  });

  it("does not read a body whose Content-Length is over the limit", async () => {
    let pulled = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new Uint8Array(10));
      },
    });
    const request = new Request("http://x.test/", { method: "POST", body, headers: { "content-length": "101" }, duplex: "half" } as RequestInit);
    expect((await apiRequestOf(request, 100)).body).toBeUndefined();
    expect(pulled).toBeLessThan(2);
  });

  it("answers a Response with the answer's status, headers and body", async () => {
    const response = responseOf({ status: 429, headers: { "content-type": "application/json", "retry-after": "3" }, body: '{"error":{}}' });
    expect([response.status, response.headers.get("retry-after"), await response.text()]).toEqual([429, "3", '{"error":{}}']);
  });
});
