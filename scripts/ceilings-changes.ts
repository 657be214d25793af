// `npm run ceilings -- requests | approve | reject | cancel | acknowledge`, and the change control of
// `apply`: the same lib/changes verbs as the dashboard, acting as the staff member a personal token
// proves (CEILINGS_STAFF_TOKEN, made on the dashboard's Personal tokens page). Every verb that acts
// as a staff member needs that token: approve, reject, acknowledge, cancel, apply --break-glass, and
// asking for a raise (apply, plans, accounts). --as alone is a name anyone with the database URL
// could type: asked as someone else, a raise would then be "approved by a second person" who is
// the asker. lib checks role and independence by staff id, so the CLI is no way round them.
// docs/change-control.md.
import { parseArgs } from "node:util";
import { and, eq, gt, sql } from "drizzle-orm";
import type { Db } from "@/db/client";
import { changeRequests } from "@/db/schema";
import { moneyInputText } from "@/lib/limits/parse";
import type { AskedRaise, RaiseHandler } from "@/lib/catalog/file";
import type { FileRaise } from "@/lib/catalog/file-raises";
import { readCatalog } from "@/lib/catalog/read";
import { ceilingIdentity } from "@/lib/catalog/spec";
import {
  acknowledgeBreakGlass,
  approveChange,
  breakGlass,
  cancelChange,
  ChangeControlError,
  type ChangeKind,
  type ChangeRequest,
  listChangeRequests,
  rejectChange,
  type Requester,
  requestChange,
} from "@/lib/changes";
import { calendarTextIsReal } from "@/lib/changes/schedule-time";
import { authenticateStaffToken, STAFF_TOKEN_ENV, StaffTokenError } from "@/lib/staff-tokens";
import { raiseChange } from "@/lib/catalog/file-plans";

export const CHANGES_USAGE = `  requests [--state pending|all] [--json]
                                       change requests, newest first (pending by default)
  approve <id> [--note "…"]            apply a pending request: an admin independent of its
                                       requester, proven by ${STAFF_TOKEN_ENV} (a personal token
                                       from the dashboard's Personal tokens page, /tokens)
  reject <id> --reason "why"           refuse it (an independent admin, by ${STAFF_TOKEN_ENV})
  cancel <id>                          withdraw your own pending request (by ${STAFF_TOKEN_ENV})
  acknowledge <id>                     an admin independent of the one who broke glass has seen
                                       it (by ${STAFF_TOKEN_ENV})`;

export class ChangesUsageError extends Error {}

/** Who runs a verb: a personal token (the proof), and --as (a name, which must match it; never enough alone). */
export type Credential = { token?: string; as?: string };

export type ChangesCommand =
  | { verb: "requests"; state: "pending" | "all"; json: boolean }
  | { verb: "approve"; id: number; note?: string; who: Credential }
  | { verb: "reject"; id: number; reason: string; who: Credential }
  | { verb: "cancel"; id: number; who: Credential }
  | { verb: "acknowledge"; id: number; who: Credential };

/** The personal token in the environment, if any. */
export function tokenFrom(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const token = env[STAFF_TOKEN_ENV]?.trim();
  return token ? token : undefined;
}

/** The refusal of a bare --as (or nothing) where a proof is needed: how to get one. */
export function needsToken(doing: string): ChangesUsageError {
  return new ChangesUsageError(
    `${doing} needs your own credential, not a name: --as alone is refused. Sign in to the dashboard, create a personal token ` +
      `on Personal tokens (/tokens), and run with ${STAFF_TOKEN_ENV}=cst_… in the environment (--as may stay, and must then name the token's owner)`,
  );
}

/**
 * The credential of a verb that acts as a staff member, read before the database starts: the token
 * in the environment, and --as if given. A bare --as is refused here, saying how to get a token;
 * cliStaff checks the token itself (and refuses again without one).
 */
export function credentialOf(as: string | undefined, env: Readonly<Record<string, string | undefined>>, doing: string): Credential {
  const token = tokenFrom(env);
  if (as !== undefined && token === undefined) throw needsToken(doing);
  return { ...(token ? { token } : {}), ...(as !== undefined ? { as } : {}) };
}

export const CHANGE_VERBS = new Set(["requests", "approve", "reject", "cancel", "acknowledge"]);

/** A request id: a whole number, as printed by `apply` and `requests`; "#12" reads as 12. */
function parseId(text: string | undefined, verb: string): number {
  const digits = (text ?? "").replace(/^#/, "");
  if (!/^[1-9][0-9]{0,9}$/.test(digits) || Number(digits) > 2_147_483_647)
    throw new ChangesUsageError(`${verb} needs a request id (a whole number, e.g. ${verb} 12), got '${text ?? ""}'`);
  return Number(digits);
}

/** Reads the command line of a change-control verb before the database starts: a typo costs nothing. */
export function parseChangesArgs(argv: string[], env: Readonly<Record<string, string | undefined>> = process.env): ChangesCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        as: { type: "string" },
        note: { type: "string" },
        reason: { type: "string" },
        state: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    // An unknown option or one without its value: the usage, not a stack trace.
    throw new ChangesUsageError(error instanceof Error ? error.message : String(error));
  }
  const { positionals, values } = parsed;
  if (values.help) throw new ChangesUsageError("");
  const [verb, id, ...extra] = positionals;
  if (extra.length > 0) throw new ChangesUsageError(`unexpected arguments: ${extra.join(" ")}`);
  if (verb === "requests") {
    if (id !== undefined) throw new ChangesUsageError(`requests takes no argument (got '${id}'): npm run ceilings -- requests [--state pending|all] [--json]`);
    const state = values.state ?? "pending";
    if (state !== "pending" && state !== "all") throw new ChangesUsageError(`--state must be pending or all, got '${state}'`);
    return { verb, state, json: values.json === true };
  }
  if (values.state !== undefined || values.json !== undefined) throw new ChangesUsageError("--state and --json are options of requests only");
  /** Every verb here acts as a staff member: the token proves who, --as alone is refused. */
  const credential = (doing: string): Credential => {
    const who = credentialOf(values.as, env, doing);
    if (who.token === undefined) throw needsToken(doing);
    return who;
  };
  switch (verb) {
    case "approve": {
      const requestId = parseId(id, verb);
      if (values.reason !== undefined) throw new ChangesUsageError('approve takes --note "…", not --reason');
      return { verb, id: requestId, who: credential(verb), ...(values.note !== undefined ? { note: values.note } : {}) };
    }
    case "reject": {
      const requestId = parseId(id, verb);
      const reason = values.reason ?? values.note;
      if (!reason) throw new ChangesUsageError('reject needs --reason "why": the requester reads it');
      return { verb, id: requestId, reason, who: credential(verb) };
    }
    case "cancel":
    case "acknowledge": {
      const requestId = parseId(id, verb);
      if (values.note !== undefined || values.reason !== undefined) throw new ChangesUsageError(`${verb} takes no --note or --reason`);
      return { verb, id: requestId, who: credential(verb) };
    }
    default:
      throw new ChangesUsageError(`unknown command '${verb ?? ""}'`);
  }
}

/**
 * Who runs the verb, as lib/changes takes a person: the owner of the personal token, the one way
 * the command line acts as a staff member (--as, if also given, must name them). No token is
 * refused whatever --as says: a name is not a proof. A refused token (unknown, revoked, its owner
 * disabled or their password or role changed) is a forbidden.
 */
export async function cliStaff(db: Db, who: Credential, doing: string): Promise<Requester> {
  if (who.token === undefined) throw needsToken(doing);
  let owner;
  try {
    owner = await authenticateStaffToken(db, who.token);
  } catch (error) {
    if (error instanceof StaffTokenError) throw new ChangeControlError("forbidden", error.message);
    throw error;
  }
  if (who.as !== undefined && who.as.trim().toLowerCase() !== owner.email.toLowerCase()) {
    throw new ChangeControlError("forbidden", `--as ${who.as} is not who ${STAFF_TOKEN_ENV} proves (${owner.email}): drop --as, or use your own token`);
  }
  return { ...owner, via: "cli" };
}

/** "2h", "90m", "45s", "1d", "1h30m": a temporary raise's length in seconds. */
export function parseDuration(text: string): number {
  const t = text.trim();
  const parts = [...t.matchAll(/([0-9]+)\s*([dhms])/g)];
  if (
    parts.length === 0 ||
    parts
      .map((m) => m[0])
      .join("")
      .replace(/\s/g, "") !== t.replace(/\s/g, "")
  ) {
    throw new ChangesUsageError(`--for must be a length such as 2h, 90m or 1h30m, got '${text}'`);
  }
  const unit = { d: 86_400, h: 3_600, m: 60, s: 1 } as const;
  const seconds = parts.reduce((n, m) => n + Number(m[1]) * unit[m[2] as keyof typeof unit], 0);
  if (seconds <= 0) throw new ChangesUsageError(`--for must be longer than 0, got '${text}'`);
  return seconds;
}

/** "2026-12-02T18:00:00Z": a temporary raise's end; a time zone is required, so it is never read as local by surprise. */
export function parseUntil(text: string): Date {
  if (!/(Z|[+-][0-9]{2}:?[0-9]{2})$/.test(text.trim()))
    throw new ChangesUsageError(`--until needs a time with its zone, e.g. 2026-12-02T18:00:00Z, got '${text}'`);
  const at = new Date(text.trim());
  // 2027-02-30 or 24:00 would roll over to another day: a date must read back as typed.
  if (Number.isNaN(at.getTime()) || calendarTextIsReal(text) === false) throw new ChangesUsageError(`--until is not a time: '${text}'`);
  return at;
}

/** A raise the file asks for as lib/changes takes it: ids of what the file just made are read in its transaction. */
async function kindAndChange(tx: Db, raise: FileRaise): Promise<{ kind: ChangeKind; change: Record<string, unknown> }> {
  switch (raise.kind) {
    case "ceiling.value":
    case "ceiling.bounds": {
      const endpoint = (await readCatalog(tx)).find((c) => c.endpoint.key === raise.endpointKey);
      const ceiling = endpoint?.ceilings.find((c) => ceilingIdentity(c) === raise.identity);
      if (!ceiling) throw new Error(`no ceiling ${raise.identity} on ${raise.endpointKey} after apply`);
      return raise.kind === "ceiling.value"
        ? { kind: raise.kind, change: { ceilingId: ceiling.id, value: raise.value } }
        : { kind: raise.kind, change: { ceilingId: ceiling.id, min: raise.min, max: raise.max } };
    }
    case "ceiling.add":
      return { kind: raise.kind, change: { endpointKey: raise.endpointKey, ceiling: raise.ceiling } };
    case "endpoint.per_call_max":
      return { kind: raise.kind, change: { endpointKey: raise.endpointKey, perCallMax: raise.perCallMax } };
    case "endpoint.unarchive":
      return { kind: raise.kind, change: { endpointKey: raise.endpointKey } };
    case "budget.value":
      return { kind: raise.kind, change: { budgetKey: raise.budgetKey, value: raise.value } };
    case "budget.bounds":
      return { kind: raise.kind, change: { budgetKey: raise.budgetKey, min: raise.min, max: raise.max } };
    case "budget.unarchive":
      return { kind: raise.kind, change: { budgetKey: raise.budgetKey } };
    case "budget.create":
      return { kind: raise.kind, change: { spec: raise.spec } };
    case "plan.value":
    case "plan.default":
      return { kind: raise.kind, change: raiseChange(raise) };
    case "budget.members":
      return { kind: raise.kind, change: { budgetKey: raise.budgetKey, members: raise.members } };
    case "budget.archive":
      return { kind: raise.kind, change: { budgetKey: raise.budgetKey } };
    case "endpoint.prices":
      return { kind: raise.kind, change: { endpointKey: raise.endpointKey, parts: raise.parts } };
    case "endpoint.billing_day":
      return { kind: raise.kind, change: { endpointKey: raise.endpointKey, billingDay: raise.billingDay } };
  }
}

/**
 * The same change already waiting (asked before, by anyone, not yet expired): applying a file twice
 * asks once. The same means its end too: a raise for 2 hours and the same raise for good are two
 * different requests (an approver of one has not agreed to the other).
 */
async function pendingTwin(
  tx: Db,
  kind: ChangeKind,
  change: Record<string, unknown>,
  end: { endsAfterSeconds?: number | undefined; endsAt?: Date | undefined },
  now: Date,
): Promise<ChangeRequest | undefined> {
  const [row] = await tx
    .select()
    .from(changeRequests)
    .where(
      and(
        eq(changeRequests.state, "pending"),
        eq(changeRequests.kind, kind),
        sql`${changeRequests.change} = ${JSON.stringify(change)}::jsonb`,
        // No end on either side counts as equal (null is not distinct from null).
        sql`${changeRequests.endsAfterSeconds} is not distinct from ${end.endsAfterSeconds ?? null}::integer`,
        sql`${changeRequests.endsAt} is not distinct from ${end.endsAt?.toISOString() ?? null}::timestamptz`,
        gt(changeRequests.expiresAt, now),
      ),
    )
    .limit(1);
  return row;
}

/** Only a value has an end: the raise of a bound, a per-call max or an unarchive stays until changed. */
const ENDS: ReadonlySet<ChangeKind> = new Set(["ceiling.value", "budget.value"]);

/**
 * --confirm-raise as lib/changes reads the 5x retype: the new value typed again (money as a person
 * types it, "12.5"). The file's plan already asked for --confirm-raise on exactly these raises.
 */
function confirmText(kind: ChangeKind, change: Record<string, unknown>): string {
  const n = (v: unknown) => (typeof v === "number" ? v : 0);
  switch (kind) {
    case "budget.value":
      return moneyInputText(n(change.value));
    case "plan.value":
      return change.budgetKey !== undefined ? moneyInputText(n(change.value)) : String(n(change.value));
    case "endpoint.per_call_max":
      return String(n(change.perCallMax));
    case "ceiling.add":
      return String(n((change.ceiling as { value?: unknown } | undefined)?.value));
    default:
      return String(n(change.value));
  }
}

export type AskOptions = {
  requester: Requester;
  reason: string;
  breakGlass: boolean;
  endsAfterSeconds?: number;
  endsAt?: Date;
  /** --confirm-raise: the 5x retype, passed on as the value typed twice. */
  confirmRaise: boolean;
};

/**
 * `apply`'s change control: each raise in the file becomes a change request (or, with
 * --break-glass, is applied at once as break glass), in the file's transaction, after its other
 * changes. Any refusal (a viewer asking, a short break-glass reason) throws and undoes the file.
 */
export function askRaises(o: AskOptions): RaiseHandler {
  return async (tx, raises) => {
    const out: AskedRaise[] = [];
    const now = new Date();
    for (const raise of raises) {
      const { kind, change } = await kindAndChange(tx, raise);
      const end = ENDS.has(kind) ? { endsAfterSeconds: o.endsAfterSeconds, endsAt: o.endsAt } : {};
      const confirm = o.confirmRaise ? { confirm: confirmText(kind, change) } : {};
      if (o.breakGlass) {
        const r = await breakGlass(tx, { kind, change, requester: o.requester, reason: o.reason, ...end, ...confirm });
        out.push({ raise, requestId: r.id, outcome: "break_glass", summary: r.summary });
        continue;
      }
      const twin = await pendingTwin(tx, kind, change, end, now);
      if (twin) {
        out.push({ raise, requestId: twin.id, outcome: "already_pending", summary: `${twin.summary} (asked by ${twin.requestedBy})` });
        continue;
      }
      const r = await requestChange(tx, { kind, change, requester: o.requester, reason: o.reason, ...end, ...confirm });
      out.push({ raise, requestId: r.id, outcome: "asked", summary: r.summary });
    }
    return out;
  };
}

/** 7200 → "2h", 5400 → "1h30m": as --for takes it. */
export function lasting(seconds: number): string {
  const parts: [number, string][] = [
    [Math.floor(seconds / 86_400), "d"],
    [Math.floor((seconds % 86_400) / 3_600), "h"],
    [Math.floor((seconds % 3_600) / 60), "m"],
    [seconds % 60, "s"],
  ];
  return (
    parts
      .filter(([n]) => n > 0)
      .map(([n, u]) => `${n}${u}`)
      .join("") || "0s"
  );
}

const when = (d: Date | null | undefined) => (d ? d.toISOString().replace(/\.\d{3}Z$/, "Z") : "-");

/** One request as a line (two when decided): what, who asked and how, and where it stands. */
export function requestLines(r: ChangeRequest): string[] {
  const flags = [r.breakGlass ? "BREAK GLASS" : null, r.breakGlass && !r.acknowledgedAt ? "unacknowledged" : null].filter(Boolean).join(", ");
  const end = r.endsAt ? `, until ${when(r.endsAt)}` : r.endsAfterSeconds ? `, for ${lasting(r.endsAfterSeconds)} once applied` : "";
  const lines = [`#${r.id}  ${r.state}${flags ? ` (${flags})` : ""}  ${r.kind}  ${r.summary}${end}`];
  lines.push(
    `    asked by ${r.requestedBy} via ${r.requestedVia} at ${when(r.requestedAt)}${r.state === "pending" ? `, expires ${when(r.expiresAt)}` : ""}: ${r.reason}`,
  );
  if (r.decidedBy) lines.push(`    ${r.state} by ${r.decidedBy} at ${when(r.decidedAt)}${r.decisionNote ? `: ${r.decisionNote}` : ""}`);
  if (r.acknowledgedBy) lines.push(`    acknowledged by ${r.acknowledgedBy} at ${when(r.acknowledgedAt)}`);
  return lines;
}

export async function runChanges(db: Db, command: ChangesCommand, print: (line: string) => void = (l) => console.log(l)): Promise<void> {
  if (command.verb === "requests") {
    const listed = await listChangeRequests(db, command.state === "pending" ? { state: "pending", limit: 200 } : { limit: 200 });
    const rows: ChangeRequest[] = Array.isArray(listed) ? listed : listed.rows;
    if (command.json) {
      print(JSON.stringify(rows, null, 2));
      return;
    }
    if (rows.length === 0) print(command.state === "pending" ? "no pending change requests" : "no change requests");
    for (const r of rows) for (const line of requestLines(r)) print(line);
    return;
  }
  // cliStaff refuses a command without a token too: a caller building the command itself gets no way round.
  const who = await cliStaff(db, command.who, command.verb);
  switch (command.verb) {
    case "approve": {
      const r = await approveChange(db, { id: command.id, approver: who, ...(command.note !== undefined ? { note: command.note } : {}) });
      // Stale: nothing was applied. The shell sees a failure, so a script does not carry on as if raised.
      const said = r.message.startsWith(r.request.state) ? r.message : `${r.request.state}: ${r.message}`;
      if (!r.applied) throw new ChangeControlError("stale", `#${r.request.id} ${said}`);
      print(`#${r.request.id} ${said}`);
      return;
    }
    case "reject": {
      const r = await rejectChange(db, { id: command.id, approver: who, note: command.reason });
      print(`#${r.id} rejected: ${r.summary}`);
      return;
    }
    case "cancel": {
      const r = await cancelChange(db, { id: command.id, requester: who });
      print(`#${r.id} cancelled: ${r.summary}`);
      return;
    }
    case "acknowledge": {
      const r = await acknowledgeBreakGlass(db, { id: command.id, admin: who });
      print(`#${r.id} acknowledged: ${r.summary}`);
      return;
    }
  }
}
