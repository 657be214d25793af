import { describe, expect, it } from "vitest";
import { shouldRunInServer } from "./in-server";

describe("where the jobs run", () => {
  it("inside the server on the embedded database, in `npm run worker` on DATABASE_URL, unless told", () => {
    expect(shouldRunInServer({ WORKER_IN_SERVER: "auto", DATABASE_URL: undefined })).toBe(true);
    expect(shouldRunInServer({ WORKER_IN_SERVER: "auto", DATABASE_URL: "postgres://x/y" })).toBe(false);
    expect(shouldRunInServer({ WORKER_IN_SERVER: "true", DATABASE_URL: "postgres://x/y" })).toBe(true);
    expect(shouldRunInServer({ WORKER_IN_SERVER: "false", DATABASE_URL: undefined })).toBe(false);
  });
});
