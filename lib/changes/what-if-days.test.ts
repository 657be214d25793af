import { describe, expect, it } from "vitest";
import { decodeColumn, encodeColumn } from "./what-if-days";

describe("what-if ledger columns", () => {
  it.each([
    [[0, 1, 255], 1],
    [[0, 256, 65_535], 2],
    [[65_536, 7, 2 ** 32 - 1], 4],
    [[2 ** 32, 0, Number.MAX_SAFE_INTEGER], 8],
  ])("holds %j at %i bytes a value and reads every one back", (values, width) => {
    const bytes = encodeColumn(values);
    expect(bytes[0]).toBe(width);
    expect(bytes.length).toBe(8 + values.length * width);
    expect([...decodeColumn(bytes, values.length)]).toEqual(values);
  });

  it("reads an empty column and a column that does not start aligned", () => {
    expect([...decodeColumn(encodeColumn([]), 0)]).toEqual([]);
    const values = [3, 70_000, 12];
    const shifted = new Uint8Array(1 + encodeColumn(values).length);
    shifted.set(encodeColumn(values), 1);
    expect([...decodeColumn(shifted.subarray(1), 3)]).toEqual(values);
  });

  it("refuses what it cannot hold exactly, and bytes that are not a column of that length", () => {
    expect(() => encodeColumn([-1])).toThrow(/whole numbers from 0/);
    expect(() => encodeColumn([1.5])).toThrow(/whole numbers from 0/);
    expect(() => encodeColumn([2 ** 53])).toThrow(/whole numbers from 0/);
    expect(() => decodeColumn(encodeColumn([1, 2]), 3)).toThrow(/does not hold 3 values/);
    const bad = encodeColumn([1]);
    bad[0] = 3;
    expect(() => decodeColumn(bad, 1)).toThrow(/does not hold/);
  });
});
