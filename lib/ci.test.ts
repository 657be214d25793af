import { expect, it } from "vitest";
import { isCi } from "./ci";

it("reads CI the way CI services set it", () => {
  expect(isCi("true")).toBe(true);
  expect(isCi("1")).toBe(true);
  expect(isCi("0")).toBe(false);
  expect(isCi("")).toBe(false);
  expect(isCi("FALSE")).toBe(false);
  expect(isCi(undefined)).toBe(false);
});
