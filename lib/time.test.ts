import { expect, it } from "vitest";
import { DAY_MS, utcDay } from "./time";

it("names the UTC calendar day of an instant, whatever the viewer's zone", () => {
  const midnight = Date.parse("2025-03-05T00:00:00Z");
  expect(utcDay(midnight)).toBe("2025-03-05");
  expect(utcDay(midnight - 1)).toBe("2025-03-04");
  expect(utcDay(midnight + DAY_MS - 1)).toBe("2025-03-05");
});
