import { describe, expect, it } from "vitest";
import { clientAddress } from "./client-address";

describe("clientAddress", () => {
  it("believes no X-Forwarded-For by default: a client rotating it gets no fresh bucket", () => {
    expect(clientAddress({ "x-forwarded-for": "203.0.113.9" })).toBeNull();
    expect(clientAddress({ "x-forwarded-for": "203.0.113.9" }, 0)).toBeNull();
    expect(clientAddress({ "x-real-ip": "192.0.2.1" }, 0)).toBeNull();
  });

  it("takes the entry the outermost trusted proxy appended", () => {
    expect(clientAddress({ "x-forwarded-for": "203.0.113.9" }, 1)).toBe("203.0.113.9");
    expect(clientAddress({ "x-forwarded-for": "6.6.6.6, 198.51.100.7" }, 1)).toBe("198.51.100.7");
    expect(clientAddress({ "x-forwarded-for": ["1.2.3.4", "198.51.100.7", "10.0.0.2"] }, 2)).toBe("198.51.100.7");
  });

  it("is unknown when fewer hops arrived than are trusted, or the header is empty", () => {
    expect(clientAddress({ "x-forwarded-for": "198.51.100.7" }, 2)).toBeNull();
    expect(clientAddress({ "x-forwarded-for": " , " }, 1)).toBeNull();
    expect(clientAddress({}, 1)).toBeNull();
  });
});
