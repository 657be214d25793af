import { InputError } from "@/lib/errors";
// `npm run ceilings -- plan <file>` and `apply <file>`: a catalog file compared with the database and
// applied, under change control (docs/change-control.md, "Command line"). What needs no approval is
// applied at once in one transaction, as before; each raise becomes a change request asked by the
// owner of CEILINGS_STAFF_TOKEN (a proof, not a name: a bare --as is refused) in that same
// transaction, or with --break-glass is applied at once as break glass. Nothing is
// half-done: if any request cannot be made (a viewer asking, a short break-glass reason, a request
// lib/changes refuses), the whole file is rolled back, its changes that need no approval too.
import { readFileSync } from "node:fs";
import type { Db } from "@/db/client";
import { applyCatalog, type EndpointPlan, planCatalog } from "@/lib/catalog";
import type { AskedRaise, RaiseHandler } from "@/lib/catalog/file";
import { ChangeControlError, type Requester } from "@/lib/changes";
import { recordRefusal } from "@/lib/changes/who";
import { askRaises, ChangesUsageError, cliStaff, credentialOf, needsToken, parseDuration, parseUntil, tokenFrom } from "./ceilings-changes";

type Print = (line: string) => void;
const stdout: Print = (line) => console.log(line);

/** An invalid catalog file: every problem with its path in the file. */
export class FileError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`${file} is invalid: nothing was changed`);
  }
}

function printPlan(print: Print, endpoints: EndpointPlan[], count: number, verb: string): void {
  if (count === 0) {
    print("no changes: the database already matches the file");
    return;
  }
  for (const e of endpoints) {
    print(e.key);
    for (const c of e.changes) {
      for (const line of c.lines) print(`  ${line}`);
      for (const line of c.needsApproval ?? []) print(`    NEEDS APPROVAL: ${line}`);
      if (c.needsConfirmation) print("    (a raise of 5x or more: apply needs --confirm-raise)");
    }
    for (const line of e.worstCase) print(`  ${line}`);
  }
  print(`${count} change(s) ${verb}`);
}

/** Change control in `plan`: the raises apply will ask for, counted, and what apply does with them. */
function printApprovals(print: Print, endpoints: EndpointPlan[], raises: number): void {
  const changes = endpoints.flatMap((e) => e.changes).filter((c) => c.needsApproval).length;
  if (raises === 0) {
    print("0 need approval: apply makes every change at once");
    return;
  }
  print(
    `${changes} change(s) need approval (${raises} change request(s)): apply makes the rest at once and asks for these as the owner of CEILINGS_STAFF_TOKEN (your personal token: an operator or admin); a second admin approves each (npm run ceilings -- approve <id>), or an admin applies them at once with --break-glass`,
  );
}

/** What apply did with the file's raises: the request ids to approve, or the break-glass ids to acknowledge. */
function printAsked(print: Print, asked: AskedRaise[]): void {
  if (asked.length === 0) return;
  const glass = asked.filter((a) => a.outcome === "break_glass");
  const waiting = asked.filter((a) => a.outcome !== "break_glass");
  if (glass.length > 0) {
    print(`applied by break glass (${glass.length}), alerted to every destination:`);
    for (const a of glass) print(`  #${a.requestId} ${a.summary}`);
    print("an independent admin acknowledges each with their personal token: CEILINGS_STAFF_TOKEN=cst_… npm run ceilings -- acknowledge <id>");
  }
  if (waiting.length > 0) {
    print(`asked for approval (${waiting.length}); approvers alerted:`);
    for (const a of waiting) print(`  #${a.requestId} ${a.summary}${a.outcome === "already_pending" ? " — already pending, not asked again" : ""}`);
    print(
      'an independent admin approves each with their personal token: CEILINGS_STAFF_TOKEN=cst_… npm run ceilings -- approve <id> (or reject <id> --reason "why"); then apply the file again: nothing is left to change',
    );
  }
}

/** A file with raises and no token: refused inside apply's transaction, so nothing of the file is made. */
const noRequester: RaiseHandler = async (_tx, raises) => {
  throw new ChangeControlError(
    "approval_required",
    `${raises.length} change(s) in the file are raises and need a second admin:\n${raises.map((r) => `  ${r.line}`).join("\n")}\nrun again with your personal token in CEILINGS_STAFF_TOKEN=cst_… (made on the dashboard's Personal tokens page, /tokens) to ask for them (and apply the rest), or as an admin with it and --break-glass; nothing was changed`,
  );
};

export async function runPlanFile(db: Db, file: string, print: Print = stdout): Promise<void> {
  const plan = await planCatalog(db, readFileSync(file, "utf8"));
  if (!plan.ok) throw new FileError(file, plan.errors);
  printPlan(print, plan.endpoints, plan.changeCount, "would change");
  if (plan.changeCount > 0) printApprovals(print, plan.endpoints, plan.raises.length);
}

/** apply's change-control flags, checked before the database starts (a typo costs nothing). */
export function parseApplyOptions(
  v: { reason?: string; as?: string; "break-glass"?: boolean; for?: string; until?: string },
  env: Readonly<Record<string, string | undefined>> = process.env,
): { breakGlass: boolean; endsAfterSeconds?: number; endsAt?: Date; token?: string } {
  const token = tokenFrom(env);
  if (v["break-glass"] && !v.reason?.trim())
    throw new ChangesUsageError('--break-glass needs --reason "why": a break-glass change is audited and alerted with it');
  if (v["break-glass"] && !token) throw needsToken("--break-glass");
  if (v.for !== undefined && v.until !== undefined) throw new ChangesUsageError("give --for or --until, not both");
  if ((v.for !== undefined || v.until !== undefined) && !token) throw needsToken("--for and --until (ending a raise asked for)");
  // A bare --as: a name is not a proof (cliStaff refuses it again when the file is applied).
  credentialOf(v.as, env, "apply --as (asking for a raise)");
  return {
    ...(token ? { token } : {}),
    breakGlass: v["break-glass"] === true,
    ...(v.for === undefined ? {} : { endsAfterSeconds: parseDuration(v.for) }),
    ...(v.until === undefined ? {} : { endsAt: parseUntil(v.until) }),
  };
}

export type ApplyFileOptions = {
  file: string;
  reason: string;
  confirmRaise: boolean;
  /** Must name the token's owner when given; alone it is refused (a name is not a proof). */
  as?: string;
  /** The personal token of who asks for the raises (an operator or admin), whose name the file's other changes carry. */
  token?: string;
  breakGlass: boolean;
  endsAfterSeconds?: number;
  endsAt?: Date;
  /** Without a token the file's changes are logged as the operating-system user, as before. */
  osUser: string;
};

export async function runApplyFile(db: Db, o: ApplyFileOptions, print: Print = stdout): Promise<void> {
  const text = readFileSync(o.file, "utf8");
  // Break glass applies alone: a name is not enough, the token proves who (parseApplyOptions says so first).
  if (o.breakGlass && o.token === undefined) throw needsToken("--break-glass");
  // A bare --as reaches cliStaff and is refused there: asking needs the token, the one proof of who.
  const requester: Requester | null =
    o.token !== undefined || o.as !== undefined
      ? await cliStaff(
          db,
          { ...(o.token !== undefined ? { token: o.token } : {}), ...(o.as !== undefined ? { as: o.as } : {}) },
          "apply --as (asking for a raise)",
        )
      : null;
  const onRaises = requester
    ? askRaises({ requester, reason: o.reason, breakGlass: o.breakGlass, endsAfterSeconds: o.endsAfterSeconds, endsAt: o.endsAt, confirmRaise: o.confirmRaise })
    : noRequester;
  try {
    const actor = { type: "config", name: requester?.email ?? o.osUser } as const;
    const result = await applyCatalog(db, { text, actor, reason: o.reason, confirmRaise: o.confirmRaise, onRaises });
    // Only raises: nothing was made at once, but the database does not match the file yet.
    if (result.changeCount === 0 && result.raises.length > 0) print("nothing to change at once: every change in the file is a raise");
    else printPlan(print, result.endpoints, result.changeCount, "changed");
    if (result.changeCount > 0) print(`applied ${o.file} (sha256 ${result.sha256})`);
    printAsked(print, result.raises);
  } catch (error) {
    // A problem of the file's content; one of the command's own reason is said as it is.
    if (error instanceof InputError && error.problems.every((p) => p.path !== "reason")) throw new FileError(o.file, error.issues);
    // lib/changes logs a refusal (a viewer asking, a short break-glass reason) in the transaction
    // the file just rolled back: logged again here, after it, so the refusal stays in the audit log.
    if (requester && ((error instanceof ChangeControlError && error.code !== "stale") || error instanceof InputError)) {
      await recordRefusal(db, requester, o.breakGlass ? "break glass (catalog file)" : "request (catalog file)", error, { file: o.file }).catch(
        () => undefined,
      );
    }
    throw error;
  }
}
