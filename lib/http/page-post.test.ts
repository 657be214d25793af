import { describe, expect, it } from "vitest";
import { isCrossOriginRequest, pagePostRefusal } from "./page-post";

const HOST = "127.0.0.1:3000";
const post = (headers: Record<string, string>, method = "POST") => new Request(`http://${HOST}/endpoints/x`, { method, headers: { host: HOST, ...headers } });
const FORM = { "content-type": "application/x-www-form-urlencoded" };
const MULTIPART = { "content-type": "multipart/form-data; boundary=----x" };
const ACTION = { "next-action": "7f0123456789abcdef0123456789abcdef01234567" };

describe("a POST to a page", () => {
  // [what, headers, status]: null lets it through to Next.
  const cases: [string, Record<string, string>, 400 | 403 | null][] = [
    ["a form on another origin (Origin only)", { origin: "http://evil.example", ...FORM }, 403],
    ["a multipart form on another origin", { origin: "http://evil.example", ...MULTIPART }, 403],
    ["another origin with a Next-Action header", { origin: "http://evil.example", ...ACTION, ...MULTIPART }, 403],
    ["another port of this host (same site, another origin)", { origin: "http://127.0.0.1:4000", ...FORM }, 403],
    ["a browser that says cross-site", { "sec-fetch-site": "cross-site", origin: `http://${HOST}`, ...FORM }, 403],
    ["a browser that says same-site", { "sec-fetch-site": "same-site", ...ACTION, ...MULTIPART }, 403],
    ["an opaque origin", { origin: "null", ...FORM }, 403],
    ["a plain form of this origin", { origin: `http://${HOST}`, ...FORM }, 400],
    ["a plain multipart form of this origin", { "sec-fetch-site": "same-origin", ...MULTIPART }, 400],
    ["a text/plain form of this origin", { "sec-fetch-site": "same-origin", "content-type": "text/plain" }, 400],
    ["a form from a script without Origin (curl)", { ...FORM }, 400],
    ["a server action of our own page", { "sec-fetch-site": "same-origin", origin: `http://${HOST}`, ...ACTION, ...MULTIPART }, null],
    [
      "a server action behind a proxy (X-Forwarded-Host)",
      { origin: "https://ceilings.example", "x-forwarded-host": "ceilings.example", ...ACTION, "content-type": "text/plain;charset=UTF-8" },
      null,
    ],
    ["a POST with no form body and no origin", {}, null],
  ];
  it.each(cases)("%s", (_what, headers, status) => {
    expect(pagePostRefusal(post(headers))?.status ?? null).toBe(status);
  });

  it("leaves every other method to the method table", () => {
    for (const method of ["GET", "HEAD", "PUT", "DELETE"]) expect(pagePostRefusal(post({ origin: "http://evil.example" }, method))).toBeNull();
  });

  it("reads Sec-Fetch-Site before Origin, and a request that says neither is not cross-origin", () => {
    expect(isCrossOriginRequest(post({ "sec-fetch-site": "same-origin", origin: "http://evil.example" }))).toBe(false);
    expect(isCrossOriginRequest(post({ "sec-fetch-site": "none" }))).toBe(false);
    expect(isCrossOriginRequest(post({}))).toBe(false);
    expect(isCrossOriginRequest(post({ origin: "not a url" }))).toBe(true);
  });
});
