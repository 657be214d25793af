import { mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { tryPidLock } from "./pid-lock";

// A lock file another process created a moment ago, its pid not written yet, is held: taking it
// over let two first starts of the embedded server both initialise its folder. An empty one left
// long ago by a crash is stale and taken.

describe("the pid lock", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "ceilings-pid-lock-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("waits on a lock being written, and takes over one a crash left empty", () => {
    const file = path.join(dir, "postgres.lock");
    writeFileSync(file, "");
    expect(tryPidLock(file)).toEqual({ heldBy: 0 });
    const longAgo = new Date(Date.now() - 60_000);
    utimesSync(file, longAgo, longAgo);
    const taken = tryPidLock(file);
    expect("release" in taken).toBe(true);
    if ("release" in taken) taken.release();
  });
});
