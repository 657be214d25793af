import { describe, expect, it } from "vitest";
import { connectionBound, maxConnectionsFor } from "./connection-bound";

describe("the connections one process may open", () => {
  it("adds up every pool and lane with the defaults, and sizes max_connections from the peak", () => {
    const defaults = { DB_POOL_MAX: 10, ENFORCEMENT_POOL_MAX: 8 };
    const bound = connectionBound(3, defaults);
    // 10 + 8 + (2 reservation + 2 settle/release + 2 key-lookup + 1 key-ping lanes) + 1 LISTEN.
    expect(bound.held).toBe(26);
    // + one cancel per lane + one probe per host.
    expect(bound.peak).toBe(36);
    expect(connectionBound(1, defaults).peak).toBe(33);
    expect(maxConnectionsFor(6, 3, defaults)).toBe(6 * 36 + 20);
  });

  it("never counts more lanes than the enforcement pool allows", () => {
    expect(connectionBound(1, { DB_POOL_MAX: 1, ENFORCEMENT_POOL_MAX: 1 }).held).toBe(1 + 1 + (1 + 1 + 2 + 1) + 1);
  });
});
