import { eq, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { accounts } from "@/db/schema";
import { auditActorFields, recordAudit, type AuditActor } from "@/lib/audit/record";
import { actorName } from "@/lib/audit/actor";
import { type ChangeControl, controlDetails, requireApproval } from "@/lib/control/context";
import { AccountError, requireReason } from "./errors";
import { parseAccountId } from "./parse";

// Block: every reservation naming the account is refused on every endpoint (gate blocked), also on
// endpoints and ceilings made after the block, and its overrides stay as they are, so an unblock
// puts back exactly what bound it before. Like an assignment, no endpoint lock: reserve_batch reads
// the flag without one, so a committed block binds every batch that starts after it.
//
// Roles (checked by the dashboard's actions, not here): blocking stops spend, like a kill, so an
// operator may do it, alone. Unblocking lets spend resume on every endpoint at once: it is a raise
// (docs/change-control.md), asked as `account.unblock` and applied when a second admin approves
// it (or by break glass). No API key may unblock: there is no route for it, and a key cannot ask.

export type BlockParams = { account: string; actor: AuditActor; reason: string };
export type UnblockParams = BlockParams & { changeControl?: ChangeControl };
export type BlockResult = { account: string; blockedAt: Date; blockedBy: string; reason: string };
export type UnblockResult = { account: string; wasBlockedAt: Date; wasBlockedBy: string | null; blockReason: string | null };

/**
 * Blocks the account everywhere; an account Ceilings has not seen yet is registered blocked, so a
 * block can come before its first call. Audited as account.block. Already blocked: `unchanged`.
 */
export async function blockAccount(db: Db, p: BlockParams): Promise<BlockResult> {
  const account = parseAccountId(p.account);
  const reason = requireReason(p.reason);
  const by = actorName(p.actor);
  return db.transaction(async (tx) => {
    const [row] = await tx
      .insert(accounts)
      .values({ account, blockedAt: sql`now()`, blockedBy: by, blockReason: reason })
      .onConflictDoUpdate({
        target: accounts.account,
        set: { blockedAt: sql`now()`, blockedBy: by, blockReason: reason },
        // A second block must not overwrite who blocked it first, and why.
        setWhere: sql`${accounts.blockedAt} is null`,
      })
      .returning({ blockedAt: accounts.blockedAt });
    if (!row?.blockedAt) {
      const [current] = await tx.select().from(accounts).where(eq(accounts.account, account));
      const since = current?.blockedAt ? ` since ${current.blockedAt.toISOString()} by ${current.blockedBy ?? "unknown"}` : "";
      throw new AccountError("unchanged", `${account} is already blocked${since}`);
    }
    await recordAudit(tx, { ...auditActorFields(p.actor), action: "account.block", target: account, reason, details: {} });
    return { account, blockedAt: row.blockedAt, blockedBy: by, reason };
  });
}

/** Lifts a block: the account's plan and overrides bind again from the next batch. Audited as account.unblock. */
export async function unblockAccount(db: Db, p: UnblockParams): Promise<UnblockResult> {
  const account = parseAccountId(p.account);
  const reason = requireReason(p.reason);
  return db.transaction(async (tx) => {
    const [current] = await tx.select().from(accounts).where(eq(accounts.account, account)).for("update");
    if (!current?.blockedAt) throw new AccountError("unchanged", `${account} is not blocked: nothing to unblock`);
    requireApproval(p.changeControl, `unblocking ${account} (blocked by ${current.blockedBy ?? "unknown"}: ${current.blockReason ?? "no reason"})`, {
      kind: "account.unblock",
      change: { account },
    });
    await tx.update(accounts).set({ blockedAt: null, blockedBy: null, blockReason: null }).where(eq(accounts.account, account));
    const was = { blockedAt: current.blockedAt.toISOString(), blockedBy: current.blockedBy, blockReason: current.blockReason };
    await recordAudit(tx, {
      ...auditActorFields(p.actor),
      action: "account.unblock",
      target: account,
      reason,
      details: { was, ...controlDetails(p.changeControl) },
    });
    return { account, wasBlockedAt: current.blockedAt, wasBlockedBy: current.blockedBy, blockReason: current.blockReason };
  });
}
