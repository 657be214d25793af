import { InputError } from "@/lib/errors";
import { describe, expect, it } from "vitest";
import { AccountError } from "./errors";
import { parseAssignmentFile } from "./file";

function failure(work: () => unknown): AccountError | InputError {
  try {
    work();
  } catch (error) {
    if (error instanceof AccountError || error instanceof InputError) return error;
    throw error;
  }
  throw new Error("expected an AccountError or an InputError");
}

/** A bulk refusal names its rows: an AccountError invalid_rows. */
function rowsOf(error: AccountError | InputError): AccountError {
  if (!(error instanceof AccountError)) throw new Error(`expected the rows refused, got ${error.message}`);
  return error;
}

describe("assignment files", () => {
  it("reads CSV with an optional header, CRLF, blank lines and RFC 4180 quotes, keeping each row's line", () => {
    const text = '\ufeffaccount,plan\r\nacct_1,pro\r\n\r\n"acct,with comma",free\n"say ""hi""",pro\n  acct_2  , pro \n';
    expect(parseAssignmentFile("up.csv", text)).toEqual({
      rows: [
        { account: "acct_1", plan: "pro" },
        { account: "acct,with comma", plan: "free" },
        { account: 'say "hi"', plan: "pro" },
        { account: "  acct_2  ", plan: " pro " },
      ],
      lines: [2, 4, 5, 6],
    });
    // A header is only the first line: "account,plan" later is an account named "account".
    expect(parseAssignmentFile("a.csv", "acct_1,pro\naccount,plan").rows).toHaveLength(2);
  });

  it("names every CSV line that is not account,plan", () => {
    const error = rowsOf(failure(() => parseAssignmentFile("a.csv", 'acct_1,pro\nacct_2\nacct_3,pro,extra\n"open,pro\nac"ct,pro')));
    expect(error.rowCount).toBe(4);
    expect(error.rows.map((r) => r.message)).toEqual([
      "line 2: expected 2 fields (account,plan), got 1",
      "line 3: expected 2 fields (account,plan), got 3",
      "line 4: a quoted field is not closed",
      'line 5: a quote inside an unquoted field (quote the whole field and double the quote: "a""b")',
    ]);
  });

  it("reads JSON as a list or as the API's body, and names rows of another shape", () => {
    const rows = [{ account: "acct_1", plan: "pro" }];
    expect(parseAssignmentFile("a.json", JSON.stringify(rows)).rows).toEqual(rows);
    expect(parseAssignmentFile("a.JSON", JSON.stringify({ accounts: rows })).rows).toEqual(rows);
    const error = rowsOf(
      failure(() => parseAssignmentFile("a.json", JSON.stringify([...rows, { account: 1, plan: "pro" }, { account: "a", plan: "b", x: 1 }, "acct"]))),
    );
    expect(error.rows.map((r) => r.index)).toEqual([1, 2, 3]);
    expect(failure(() => parseAssignmentFile("a.json", "{")).message).toMatch(/^the file is not valid JSON/);
    expect(failure(() => parseAssignmentFile("a.json", '{"rows":[]}')).code).toBe("invalid_input");
    expect(failure(() => parseAssignmentFile("a.txt", "")).message).toBe("a.txt: the file must be .csv (account,plan per line) or .json");
  });
});
