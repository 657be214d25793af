import { describe, expect, it } from "vitest";
import { clientAddress } from "./client-address";

describe("clientAddress", () => {
  it("takes the hop nearest the server from X-Forwarded-For", () => {
    expect(clientAddress({ "x-forwarded-for": "203.0.113.9" })).toBe("203.0.113.9");
    expect(clientAddress({ "x-forwarded-for": "1.2.3.4, 198.51.100.7" })).toBe("198.51.100.7");
    expect(clientAddress({ "x-forwarded-for": ["1.2.3.4", "198.51.100.7"] })).toBe("198.51.100.7");
  });

  it("falls back to X-Real-IP, then to unknown", () => {
    expect(clientAddress({ "x-real-ip": " 192.0.2.1 " })).toBe("192.0.2.1");
    expect(clientAddress({ "x-forwarded-for": " , " })).toBeNull();
    expect(clientAddress({})).toBeNull();
  });
});
