// A direct edit from the command line that turns out to be a raise (lib/changes answers
// approval_required with the request it would be): with --as <email> it is asked for as that staff
// member (an operator or admin), its id printed for a second admin to approve; without --as it is
// refused, saying how to ask. Lowering goes through at once, as the direct verb decides.
import type { Db } from "@/db/client";
import { ChangeControlError, requestChange } from "@/lib/changes";
import { staffAs } from "./ceilings-changes";

export type AskOnRaise = { as?: string; reason: string; confirm?: string; out?: (line: string) => void };

/** Runs the direct edit; a raise is asked for (--as) or refused with how to ask. Returns the direct result, or null when asked. */
export async function askOnRaise<T>(db: Db, o: AskOnRaise, work: () => Promise<T>): Promise<T | null> {
  const out = o.out ?? console.log;
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof ChangeControlError) || error.code !== "approval_required" || !error.ask) throw error;
    if (!o.as) throw new ChangeControlError("approval_required", `${error.message}: run again with --as <your email> to ask for it; nothing was changed`, error.ask);
    const requester = await staffAs(db, o.as);
    const r = await requestChange(db, { kind: error.ask.kind, change: error.ask.change, requester, reason: o.reason, ...(o.confirm === undefined ? {} : { confirm: o.confirm }) });
    out(`asked for approval: request #${r.id} ${r.summary}; approvers alerted`);
    out(`a second admin approves it: npm run ceilings -- approve ${r.id} (or rejects it: reject ${r.id} --reason "why"); it expires in 24 hours`);
    return null;
  }
}
