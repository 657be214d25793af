import { describe, expect, it } from "vitest";
import { describeDatabaseUrl, multiHostOptions, urlHosts } from "./multi-host";

const three = "postgres://postgres:pw@127.0.0.1:5441,127.0.0.1:5442,127.0.0.1:5443/ceilings";

describe("multi-host URLs", () => {
  it("lists every host of the URL", () => {
    expect(urlHosts(three)).toEqual(["127.0.0.1:5441", "127.0.0.1:5442", "127.0.0.1:5443"]);
    expect(urlHosts("postgres://u@db.example:5432/x?sslmode=require")).toEqual(["db.example:5432"]);
  });

  // postgres.js's read-write accepts a hot standby (it reads default_transaction_read_only only):
  // a multi-host pool must ask for "primary" instead, whatever the URL says.
  it("opens a multi-host URL asking for read-write, or for nothing, as primary", () => {
    expect(multiHostOptions(three)).toEqual({ target_session_attrs: "primary" });
    expect(multiHostOptions(`${three}?target_session_attrs=read-write`)).toEqual({ target_session_attrs: "primary" });
  });

  it("leaves other attributes and single-host URLs alone", () => {
    expect(multiHostOptions(`${three}?target_session_attrs=prefer-standby`)).toEqual({});
    expect(multiHostOptions("postgres://postgres@127.0.0.1:5432/postgres")).toEqual({});
  });

  it("describes a URL without credentials, which new URL cannot parse", () => {
    expect(describeDatabaseUrl(`${three}?target_session_attrs=primary`)).toBe("127.0.0.1:5441,127.0.0.1:5442,127.0.0.1:5443/ceilings");
    expect(describeDatabaseUrl("postgres://u:p@localhost/db")).toBe("localhost:5432/db");
  });
});
