import { describe, expect, it } from "vitest";
import { canonicalDestination } from "@/lib/canonical";
import { inboxAliases, visitorAddress, visitorIp } from "./aliases";
import { isLoopback, parseTrafficArgs } from "./args";

describe("demo traffic: the abusive caller's aliases", () => {
  it("are all different strings that fold into one canonical inbox", () => {
    const aliases = inboxAliases("victiminbox", 60);
    expect(aliases).toHaveLength(60);
    expect(new Set(aliases).size).toBe(60);
    expect(new Set(aliases.map((a) => canonicalDestination(a).key))).toEqual(new Set(["victiminbox@gmail.com"]));
    expect(aliases.some((a) => a.includes("googlemail"))).toBe(true);
    expect(aliases.some((a) => a.includes("+"))).toBe(true);
  });

  it("visitors get valid, distinct addresses on reserved domains", () => {
    const addresses = Array.from({ length: 100 }, (_, i) => visitorAddress(i, "r1"));
    expect(new Set(addresses.map((a) => canonicalDestination(a).key)).size).toBe(100);
    expect(addresses.every((a) => /@example\.(com|org|net)$/.test(a))).toBe(true);
    expect(visitorIp(5)).toMatch(/^(192\.0\.2|198\.51\.100|203\.0\.113)\.\d+$/);
  });
});

describe("demo traffic: arguments", () => {
  it.each([
    ["localhost", true],
    ["127.0.0.1", true],
    ["127.8.9.10", true],
    ["[::1]", true],
    ["app.localhost", true],
    ["10.0.0.1", false],
    ["example.com", false],
    ["localhost.example.com", false],
    ["0.0.0.0", false],
  ])("%s is loopback: %s", (host, expected) => {
    expect(isLoopback(host)).toBe(expected);
  });

  it("defaults to one minute against localhost:3000 without the API part", () => {
    const args = parseTrafficArgs([]);
    expect([args.baseUrl.href, args.seconds, args.rate, args.apiKey, args.maxRequests]).toEqual(["http://localhost:3000/", 60, 3, null, 5000]);
  });

  it.each([
    [["--base-url", "http://example.com"], /loopback/],
    [["--base-url", "ftp://127.0.0.1"], /http/],
    [["--seconds", "1e3"], /whole number/],
    [["--seconds", "601"], /from 5 to 600/],
    [["--rate", "0"], /from 1 to 20/],
    [["--max-requests", "99999"], /from 10 to 20000/],
    [["--unknown"], /Unknown option/],
  ])("refuses %j", (argv, message) => {
    expect(() => parseTrafficArgs(argv)).toThrow(message);
  });
});
