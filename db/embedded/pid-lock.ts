import { readFileSync, rmSync, statSync, writeFileSync } from "node:fs";

/** A lock file without a pid is being written for this long at most; older, its writer crashed. */
const HALF_WRITTEN_MS = 5_000;

function createdWithin(file: string, ms: number): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs < ms;
  } catch {
    return false;
  }
}

// A lock file holding the pid of its owner. A lock whose owner died (kill -9) is stale and is taken
// over, so a crash never leaves the data folder locked for good.

export class LockHeldError extends Error {
  override name = "LockHeldError";
  constructor(
    message: string,
    readonly pid: number,
  ) {
    super(message);
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error instanceof Error && "code" in error && error.code === "EPERM";
  }
}

function holder(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Takes the lock or says who holds it. Returns a function that gives it back. */
export function tryPidLock(file: string): { release: () => void } | { heldBy: number } {
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: "wx", mode: 0o600 });
      return {
        release: () => {
          if (holder(file) === process.pid) rmSync(file, { force: true });
        },
      };
    } catch (error) {
      if (!(error instanceof Error && "code" in error && error.code === "EEXIST")) throw error;
    }
    const pid = holder(file);
    if (pid !== undefined && pid !== process.pid && alive(pid)) return { heldBy: pid };
    // Created a moment ago and its pid not written yet: another process is taking it. Removing it
    // then let two first starts both initialise the folder (EEXIST on its mkdir).
    if (pid === undefined && createdWithin(file, HALF_WRITTEN_MS)) return { heldBy: 0 };
    // Stale (its owner is gone) or left half-written by a crash: remove and try again.
    rmSync(file, { force: true });
  }
  throw new Error(`could not take the lock ${file}`);
}

/** Runs `work` holding the lock, waiting (up to `waitMs`) while another live process holds it. */
export async function withPidLock<T>(file: string, what: string, work: () => Promise<T>, waitMs = 180_000): Promise<T> {
  const until = Date.now() + waitMs;
  for (;;) {
    const lock = tryPidLock(file);
    if ("release" in lock) {
      try {
        return await work();
      } finally {
        lock.release();
      }
    }
    if (Date.now() > until) throw new LockHeldError(`timed out waiting for process ${lock.heldBy} (${what}, lock ${file})`, lock.heldBy);
    await new Promise((r) => setTimeout(r, 100));
  }
}
