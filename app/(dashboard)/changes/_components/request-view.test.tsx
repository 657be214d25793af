import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { ChangeRequestView as ChangeRequest } from "@/lib/changes";
import { ChangesPageView } from "./changes-view";
import { PendingRequests, UnacknowledgedBreakGlass } from "./pending-requests";
import { RequestPageView, requestControls, type Viewer } from "./request-view";

// A request's page renders from its prepared data: the approve and reject buttons are there for an
// admin who did not ask and absent for who asked (whatever their role), for operators and viewers;
// cancel is the requester's; a stale or expired request says so plainly. The actions check again.

const NOW = new Date("2026-03-10T12:00:00Z");
const ANN = 1;
const BEA = 2;
const OLA = 3;

function request(over: Partial<ChangeRequest> = {}): ChangeRequest {
  return {
    id: 42,
    kind: "ceiling.value",
    endpointId: 5,
    ceilingId: 9,
    budgetId: null,
    change: { ceilingId: 9, value: 1000 },
    before: { value: 100, valueBeforeKill: null },
    after: { value: 1000, valueBeforeKill: null },
    summary: "email.send units/day 100 → 1,000",
    worstCaseBefore: 100,
    worstCaseAfter: 1000,
    worstMoneyBefore: 1_000_000,
    worstMoneyAfter: 10_000_000,
    currency: "USD",
    endsAfterSeconds: 7200,
    endsAt: null,
    reason: "launch",
    requestedById: ANN,
    requestedBy: "ann@t",
    requestedVia: "dashboard",
    requestedAt: new Date("2026-03-10T11:00:00Z"),
    expiresAt: new Date("2026-03-11T11:00:00Z"),
    state: "pending",
    breakGlass: false,
    decidedById: null,
    decidedBy: null,
    decidedAt: null,
    decisionNote: null,
    acknowledgedById: null,
    acknowledgedBy: null,
    acknowledgedAt: null,
    endpointKey: "email.send",
    budgetKey: null,
    ...over,
  };
}

const render = (r: ChangeRequest, viewer: Viewer) => renderToStaticMarkup(<RequestPageView request={r} trail={[]} viewer={viewer} now={NOW} />);

describe("a change request's page", () => {
  it("offers approve and reject to another admin, never to who asked", () => {
    const other = render(request(), { staffId: BEA, role: "admin" });
    expect(other).toContain('data-testid="approve-request"');
    expect(other).toContain('data-testid="reject-request"');
    expect(other).not.toContain('data-testid="cancel-request"');
    const own = render(request(), { staffId: ANN, role: "admin" });
    expect(own).not.toContain('data-testid="approve-request"');
    expect(own).not.toContain('data-testid="reject-request"');
    expect(own).toContain('data-testid="cancel-request"');
    const operator = render(request({ requestedById: OLA, requestedBy: "ola@t" }), { staffId: BEA + 10, role: "operator" });
    expect(operator).not.toContain('data-testid="approve-request"');
  });

  it("offers neither decision nor acknowledgement to an admin not independent of who asked, and says why", () => {
    const made = render(request(), { staffId: BEA, role: "admin", independent: false });
    expect(made).not.toContain('data-testid="approve-request"');
    expect(made).toContain("You are not independent of ann@t");
    const glass = request({ state: "applied", breakGlass: true, decidedAt: NOW });
    expect(render(glass, { staffId: BEA, role: "admin", independent: false })).not.toContain('data-testid="acknowledge-break-glass"');
    expect(render(request(), { staffId: BEA, role: "admin", independent: true })).toContain('data-testid="approve-request"');
  });

  it("shows what moves, the worst case in units and money, the end and the time left", () => {
    const html = render(request(), { staffId: BEA, role: "viewer" });
    expect(html).toContain("100 → 1,000");
    expect(html.replace(/<[^>]+>/g, "")).toContain("$1.00 → $10.00");
    expect(html).toContain("for 2 h after it is applied");
    expect(html).toContain("asked 60 min ago, expires in 23 h");
    expect(html).toContain('data-state="pending"');
  });

  it("says plainly that a stale or expired request applied nothing, with what changed", () => {
    const stale = render(
      request({
        state: "stale",
        decidedById: BEA,
        decidedBy: "bea@t",
        decidedAt: NOW,
        decisionNote: "what was in force changed since it was asked (value 100 → 80): nothing was applied",
      }),
      { staffId: BEA, role: "admin" },
    );
    expect(stale).toContain("Stale: what was in force changed since it was asked (value 100 → 80)");
    expect(stale).not.toContain('data-testid="approve-request"');
    const expired = render(request({ state: "expired" }), { staffId: BEA, role: "admin" });
    expect(expired).toContain("Expired");
    expect(expired).not.toContain('data-testid="approve-request"');
    // Past its 24 hours but not yet marked by the worker: no button either.
    expect(requestControls(request({ expiresAt: new Date("2026-03-10T11:59:00Z") }), { staffId: BEA, role: "admin" }, NOW).decide).toBe(false);
  });

  it("offers Acknowledge on break glass to another admin only", () => {
    const glass = request({ state: "applied", breakGlass: true, decidedAt: NOW });
    expect(render(glass, { staffId: BEA, role: "admin" })).toContain('data-testid="acknowledge-break-glass"');
    expect(render(glass, { staffId: ANN, role: "admin" })).not.toContain('data-testid="acknowledge-break-glass"');
    expect(render(glass, { staffId: OLA, role: "operator" })).not.toContain('data-testid="acknowledge-break-glass"');
    expect(render(glass, { staffId: BEA, role: "admin" })).toContain('data-state="break_glass"');
  });
});

describe("the change requests page", () => {
  it("lists pending first, then decided, each a row", () => {
    const html = renderToStaticMarkup(
      <ChangesPageView
        view={{
          pending: [request()],
          decided: [request({ id: 7, state: "rejected", decidedBy: "bea@t", decisionNote: "too much" })],
          nextCursor: 7,
          cursor: null,
        }}
        now={NOW}
      />,
    );
    expect(html.split('data-testid="change-request-row"').length - 1).toBe(2);
    expect(html.indexOf("#42")).toBeLessThan(html.indexOf("#7"));
    expect(html).toContain('data-testid="changes-older"');
  });
});

describe("the overview's change control", () => {
  it("counts and links pending requests, and shows nothing when none wait", () => {
    const html = renderToStaticMarkup(<PendingRequests requests={[request(), request({ id: 43 })]} now={NOW} />);
    expect(html).toContain('data-testid="pending-requests"');
    expect(html).toContain('data-count="2"');
    expect(html).toContain('href="/changes/43"');
    expect(renderToStaticMarkup(<PendingRequests requests={[]} now={NOW} />)).toBe("");
  });

  it("lists every unacknowledged break glass, with Acknowledge for admins other than who broke it", () => {
    const glass = [request({ state: "applied", breakGlass: true, decidedAt: NOW })];
    const ack = (viewerId: number, isAdmin: boolean) =>
      renderToStaticMarkup(<UnacknowledgedBreakGlass requests={glass} viewerId={viewerId} isAdmin={isAdmin} />);
    expect(ack(BEA, true)).toContain('data-testid="acknowledge-break-glass"');
    expect(ack(ANN, true)).not.toContain('data-testid="acknowledge-break-glass"');
    expect(ack(OLA, false)).not.toContain('data-testid="acknowledge-break-glass"');
    expect(ack(OLA, false)).toContain("launch");
  });
});
