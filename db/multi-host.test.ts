import { describe, expect, it } from "vitest";
import { describeDatabaseUrl, multiHostOptions, PoolSockets, urlHosts } from "./multi-host";

const three = "postgres://postgres:pw@127.0.0.1:5441,127.0.0.1:5442,127.0.0.1:5443/ceilings";
const pick = () => ({ connectTimeoutSeconds: 2, probeTimeoutMs: 600, sockets: new PoolSockets() });

describe("multi-host URLs", () => {
  it("lists every host of the URL", () => {
    expect(urlHosts(three)).toEqual(["127.0.0.1:5441", "127.0.0.1:5442", "127.0.0.1:5443"]);
    expect(urlHosts("postgres://u@db.example:5432/x?sslmode=require")).toEqual(["db.example:5432"]);
  });

  // postgres.js's read-write accepts a hot standby, and its own host loop loses "primary" after a
  // connection loss: a multi-host pool chooses the primary itself and shows postgres.js one host.
  it("opens a multi-host URL asking for read-write, primary or nothing on the primary", () => {
    for (const url of [three, `${three}?target_session_attrs=read-write`, `${three}?target_session_attrs=primary`]) {
      const options = multiHostOptions(url, pick());
      expect(options.target_session_attrs).toBe("primary");
      expect(typeof options.socket).toBe("function");
      expect([options.host, options.port]).toEqual(["127.0.0.1", 5441]);
    }
  });

  it("leaves other attributes and single-host URLs alone", () => {
    expect(multiHostOptions(`${three}?target_session_attrs=prefer-standby`, pick())).toEqual({});
    expect(multiHostOptions("postgres://postgres@127.0.0.1:5432/postgres", pick())).toEqual({});
  });

  it("describes a URL without credentials, which new URL cannot parse", () => {
    expect(describeDatabaseUrl(`${three}?target_session_attrs=primary`)).toBe("127.0.0.1:5441,127.0.0.1:5442,127.0.0.1:5443/ceilings");
    expect(describeDatabaseUrl("postgres://u:p@localhost/db")).toBe("localhost:5432/db");
  });
});
