import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { ScheduleView } from "@/lib/changes";
import { countdownText, RaiseCountdown } from "./raise-countdown";
import { SchedulesSection } from "./schedules-section";

// The endpoint's schedules as the server first sends them: one row each with what, when, state and
// who; cancel and the new-schedule form only for operators and admins; a raise's end as a time
// (the ticking countdown joins once the page is hydrated).

const base: ScheduleView = {
  id: 7,
  endpointId: 1,
  ceilingId: 3,
  action: "value",
  value: 50,
  repeat: "daily",
  runAt: new Date("2030-01-10T22:00:00Z"),
  state: "scheduled",
  requestId: null,
  reason: "nights",
  createdById: 1,
  createdBy: "admin@example.com",
  createdAt: new Date("2030-01-01T00:00:00Z"),
  runs: 2,
  lastRunAt: new Date("2030-01-09T22:00:01Z"),
  lastOutcome: "lower: 100 → 50",
  cancelledBy: null,
  cancelledAt: null,
  endpointKey: "email.subscribe",
  ceiling: { metric: "units", scope: "global", window: "utc_day", windowSeconds: null },
  requestState: null,
};
const raise: ScheduleView = {
  ...base,
  id: 8,
  action: "value",
  value: 5000,
  repeat: "once",
  runAt: new Date("2030-01-11T06:00:00Z"),
  state: "awaiting_approval",
  requestId: 12,
  requestState: "pending",
  runs: 0,
  lastOutcome: null,
};
const ceilings = [{ id: 3, label: "at most 100 emails per UTC day" }];

describe("the schedules section", () => {
  it("lists each schedule with its next run, repeat, change, state and who, and lets operators cancel", () => {
    const html = renderToStaticMarkup(
      <SchedulesSection endpointKey="email.subscribe" schedules={[base, raise]} ceilings={ceilings} canSchedule isAdmin={false} />,
    );
    expect(html.match(/data-testid="schedule-row"/g)).toHaveLength(2);
    expect(html.match(/data-testid="cancel-schedule"/g)).toHaveLength(2);
    expect(html).toContain('data-testid="new-schedule"');
    expect(html).toContain("2030-01-10 22:00 UTC");
    expect(html).toContain("every day at 22:00 UTC");
    expect(html).toContain("set at most 100 emails per UTC day to 50");
    expect(html).toContain("last run: lower: 100 → 50");
    expect(html).toContain('href="/changes/12"');
    expect(html).toContain("awaiting approval");
  });

  it("shows a viewer the list without cancel or the form", () => {
    const html = renderToStaticMarkup(
      <SchedulesSection endpointKey="email.subscribe" schedules={[base]} ceilings={ceilings} canSchedule={false} isAdmin={false} />,
    );
    expect(html).toContain('data-testid="schedule-row"');
    expect(html).not.toContain('data-testid="cancel-schedule"');
    expect(html).not.toContain('data-testid="new-schedule"');
  });

  it("says when nothing is scheduled", () => {
    expect(renderToStaticMarkup(<SchedulesSection endpointKey="x" schedules={[]} ceilings={[]} canSchedule isAdmin />)).toContain(
      "Nothing is scheduled for this endpoint.",
    );
  });

  it("renders a raise's end as a time first; the countdown ticks once hydrated", () => {
    const html = renderToStaticMarkup(<RaiseCountdown endsAt="2030-01-10T18:00:00.000Z" endsAtText="2030-01-10 18:00 UTC" />);
    expect(html).toContain('data-testid="raise-countdown"');
    expect(html).toContain("until 2030-01-10 18:00 UTC");
    expect(html).not.toContain("ends in");
  });

  it("counts down in days, hours, minutes and seconds", () => {
    expect(countdownText(0)).toBe("ending now");
    expect(countdownText(59_000)).toBe("ends in 00m 59s");
    expect(countdownText(2 * 3600_000 + 5 * 60_000 + 3_000)).toBe("ends in 2h 05m 03s");
    expect(countdownText(86_400_000 + 61_000)).toBe("ends in 1d 0h 01m 01s");
  });
});
