// A direct edit from the command line that turns out to be a raise (lib/changes answers
// approval_required with the request it would be): with the personal token in CEILINGS_STAFF_TOKEN
// it is asked for as the token's owner (an operator or admin), its id printed for a second admin to
// approve; without a token it is refused, saying how to ask. A bare --as is refused (cliStaff): a
// name is not a proof, and a raise asked as someone else could be "approved" by its real asker.
// Lowering goes through at once, as the direct verb decides.
import type { Db } from "@/db/client";
import { ChangeControlError, requestChange } from "@/lib/changes";
import { STAFF_TOKEN_ENV } from "@/lib/staff-tokens";
import { cliStaff, type Credential } from "./ceilings-changes";

export type AskOnRaise = { who: Credential; reason: string; confirm?: string; out?: (line: string) => void };

/** Runs the direct edit; a raise is asked for (the token's owner) or refused with how to ask. Returns the direct result, or null when asked. */
export async function askOnRaise<T>(db: Db, o: AskOnRaise, work: () => Promise<T>): Promise<T | null> {
  const out = o.out ?? console.log;
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ChangeControlError) || error.code !== "approval_required" || !error.ask) throw error;
    if (o.who.token === undefined && o.who.as === undefined) {
      throw new ChangeControlError(
        "approval_required",
        `${error.message}: to ask for it, run again with your personal token in ${STAFF_TOKEN_ENV}=cst_… (made on the dashboard's Personal tokens page, /tokens); nothing was changed`,
        error.ask,
      );
    }
    const requester = await cliStaff(db, o.who, "asking for a raise");
    const r = await requestChange(db, {
      kind: error.ask.kind,
      change: error.ask.change,
      requester,
      reason: o.reason,
      ...(o.confirm === undefined ? {} : { confirm: o.confirm }),
    });
    out(`asked for approval: request #${r.id} ${r.summary}; approvers alerted`);
    out(
      `a second admin approves it with their own token: ${STAFF_TOKEN_ENV}=cst_… npm run ceilings -- approve ${r.id} (or rejects it: reject ${r.id} --reason "why"); it expires in 24 hours`,
    );
    return null;
  }
}
