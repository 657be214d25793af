import { sql } from "drizzle-orm";
import { type Db, resultRows } from "@/db/client";

/** The SQL contract this library speaks: ceilings.contract_version() (db/functions/contract_version.sql). */
export const CONTRACT_VERSION = 14;

/** The database holds another version of the enforcement functions than this library needs. */
export class ContractVersionError extends Error {
  override name = "ContractVersionError";
  readonly code = "CONTRACT_VERSION";
  constructor(readonly found: number | null) {
    super(
      `the database's enforcement functions are ${found === null ? "from before contract versions (no contract_version())" : `version ${found}`}, ` +
        `this library needs version ${CONTRACT_VERSION}: run npm run db:migrate`,
    );
  }
}

// A failed check is repeated at most this often, so a database migrated while the process runs
// is picked up without a restart, and a broken one is not asked on every batch.
const RECHECK_MS = 1000;

/** Checks once per handle that the database speaks CONTRACT_VERSION; throws until it does. */
export class ContractCheck {
  private ok = false;
  private last: { at: number; error: unknown } | undefined;
  private pending: Promise<void> | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  async ensure(db: Db): Promise<void> {
    if (this.ok) return;
    if (this.last && this.now() - this.last.at < RECHECK_MS) throw this.last.error;
    this.pending ??= this.check(db).finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  private async check(db: Db): Promise<void> {
    try {
      const rows = resultRows<{ v: number | string | null }>(await db.execute(sql`select ceilings.contract_version() as v`));
      const found = rows[0]?.v === undefined || rows[0]?.v === null ? null : Number(rows[0].v);
      if (found !== CONTRACT_VERSION) throw new ContractVersionError(found);
      this.ok = true;
      this.last = undefined;
    } catch (error) {
      // 42883: no contract_version() at all, a database migrated before it existed.
      const missing = typeof error === "object" && error !== null && codeOf(error) === "42883";
      const reported = missing ? new ContractVersionError(null) : error;
      this.last = { at: this.now(), error: reported };
      throw reported;
    }
  }
}

function codeOf(error: object): unknown {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current && typeof current === "object"; depth++) {
    if ("code" in current) return current.code;
    current = "cause" in current ? current.cause : undefined;
  }
  return undefined;
}
