import { describe, expect, it } from "vitest";
import { isSameOriginRequest } from "./same-origin";

const req = (headers: Record<string, string>) => new Request("http://127.0.0.1:3000/x", { method: "POST", headers: { host: "127.0.0.1:3000", ...headers } });

describe("isSameOriginRequest", () => {
  it("trusts Sec-Fetch-Site first", () => {
    expect(isSameOriginRequest(req({ "sec-fetch-site": "same-origin" }))).toBe(true);
    expect(isSameOriginRequest(req({ "sec-fetch-site": "same-site", origin: "http://127.0.0.1:3000" }))).toBe(false);
    expect(isSameOriginRequest(req({ "sec-fetch-site": "cross-site" }))).toBe(false);
  });

  it("falls back to Origin against the Host header, and refuses neither", () => {
    expect(isSameOriginRequest(req({ origin: "http://127.0.0.1:3000" }))).toBe(true);
    expect(isSameOriginRequest(req({ origin: "http://127.0.0.1:4000" }))).toBe(false);
    expect(isSameOriginRequest(req({ origin: "null" }))).toBe(false);
    expect(isSameOriginRequest(req({}))).toBe(false);
  });
});
