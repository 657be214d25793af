import { describe, expect, it } from "vitest";
import { parseStaffArgs, UsageError } from "./args";

describe("parseStaffArgs", () => {
  it("parses add with a role, generating the password by default", () => {
    expect(parseStaffArgs(["add", "Alice@Example.com", "--role", "admin"])).toEqual({
      command: "add",
      email: "alice@example.com",
      role: "admin",
      name: "",
      password: { kind: "generate" },
    });
    expect(parseStaffArgs(["add", "a@x.io", "--role=viewer", "--password", "long enough pass"])).toMatchObject({
      password: { kind: "given", value: "long enough pass" },
    });
  });

  it("parses the other verbs", () => {
    expect(parseStaffArgs(["role", "a@x.io", "operator"])).toEqual({ command: "role", email: "a@x.io", role: "operator" });
    expect(parseStaffArgs(["disable", "a@x.io"])).toEqual({ command: "disable", email: "a@x.io" });
    expect(parseStaffArgs(["enable", "a@x.io"])).toEqual({ command: "enable", email: "a@x.io" });
    expect(parseStaffArgs(["password", "a@x.io", "--password-stdin"])).toEqual({
      command: "password",
      email: "a@x.io",
      password: { kind: "stdin" },
    });
    expect(parseStaffArgs(["list"])).toEqual({ command: "list" });
    expect(parseStaffArgs([])).toEqual({ command: "help" });
  });

  it.each([
    [["add", "a@x.io"], "add needs --role"],
    [["add", "a@x.io", "--role", "root"], "role must be one of viewer, operator, admin, got 'root'"],
    [["add", "not-an-email", "--role", "admin"], "'not-an-email' is not an email address"],
    [["add", "a@x.io", "--role", "admin", "--password", "short"], "at least 12 characters"],
    [["add", "a@x.io", "--role", "admin", "--password", "long enough pass", "--password-stdin"], "not both"],
    [["role", "a@x.io"], "role takes 2 arguments, got 1"],
    [["disable", "a@x.io", "--role", "admin"], "disable does not take --role"],
    [["list", "--force"], "unknown option --force"],
    [["promote", "a@x.io"], "unknown command 'promote'"],
  ])("refuses %j with a clear message", (argv, message) => {
    expect(() => parseStaffArgs(argv)).toThrow(UsageError);
    expect(() => parseStaffArgs(argv)).toThrow(message);
  });
});
