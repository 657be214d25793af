import { describe, expect, it } from "vitest";
import { auditSubject } from "./audit-subject";

// The audit log's Subject column: every kind of event the code records, and what it is about.
const event = (action: string, fields: { endpointKey?: string; ceilingId?: number; target?: string; details?: Record<string, unknown> } = {}) => ({
  action,
  endpointKey: fields.endpointKey ?? null,
  ceilingId: fields.ceilingId ?? null,
  target: fields.target ?? null,
  details: fields.details ?? null,
});

describe("auditSubject", () => {
  it.each([
    ["endpoint.create", event("endpoint.create", { endpointKey: "sms.otp" }), { kind: "endpoint", name: "sms.otp" }],
    ["ceiling.adjust", event("ceiling.adjust", { endpointKey: "sms.otp", ceilingId: 3 }), { kind: "endpoint", name: "sms.otp · ceiling #3" }],
    ["ceiling.rejected", event("ceiling.rejected", { endpointKey: "sms.otp", ceilingId: 3 }), { kind: "endpoint", name: "sms.otp · ceiling #3" }],
    [
      "override.set",
      event("override.set", { endpointKey: "llm.chat", ceilingId: 5, target: "acct_9" }),
      { kind: "endpoint", name: "llm.chat · ceiling #5 · caller acct_9" },
    ],
    ["api_key.create", event("api_key.create", { target: "billing (ck_ab12cd34)" }), { kind: "API key", name: "billing (ck_ab12cd34)" }],
    ["api_key.revoke", event("api_key.revoke", { target: "billing (ck_ab12cd34)" }), { kind: "API key", name: "billing (ck_ab12cd34)" }],
    ["staff.role", event("staff.role", { target: "ops@team.example" }), { kind: "staff", name: "ops@team.example" }],
    ["staff_token.create", event("staff_token.create", { target: "laptop (cst_ab12cd34)" }), { kind: "staff token", name: "laptop (cst_ab12cd34)" }],
    ["alert.ack", event("alert.ack", { ceilingId: 4, target: "alert:12" }), { kind: "alert", name: "#12" }],
    [
      "alert_destination.create",
      event("alert_destination.create", { target: "alert_destination:2", details: { name: "pager" } }),
      { kind: "alert destination", name: "pager" },
    ],
    ["refusals.export", event("refusals.export", { target: "gate=ceiling" }), { kind: "refusal log", name: "gate=ceiling" }],
    ["account.plan", event("account.plan", { target: "acct_42" }), { kind: "account", name: "acct_42" }],
    ["account.block", event("account.block", { target: "acct_42" }), { kind: "account", name: "acct_42" }],
    ["a refused assignment", event("account.rejected", { target: "acct_42" }), { kind: "account", name: "acct_42" }],
    ["a refused bulk assignment", event("account.rejected"), null],
    ["a refused form field", event("api_key.create.rejected", { target: "name" }), { kind: "form field", name: "name" }],
    ["a refused form as a whole", event("endpoint.rejected"), null],
    ["the demo's seed", event("seed.demo"), null],
  ])("%s", (_what, e, subject) => {
    expect(auditSubject(e)).toEqual(subject);
  });

  it("never calls an e-mail address or an API key an endpoint", () => {
    for (const e of [event("staff.add", { target: "a@b.example" }), event("api_key.revoke", { target: "k (ck_x)" })])
      expect(auditSubject(e)?.kind).not.toBe("endpoint");
  });
});
