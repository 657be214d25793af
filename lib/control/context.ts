import { ChangeControlError, type AskInstead } from "./errors";

// The permission a write code needs to raise: the direct verbs (adjustCeiling, setBounds,
// updateEndpoint, addCeiling, setEndpointArchived, the budget verbs) refuse a raise with
// approval_required unless they are handed one of these. Only this module makes them, and only for
// an approved or break-glass request (lib/changes/apply.ts) or for setup code that builds data on
// purpose (the demo seed, test fixtures): a WeakSet holds the real ones, so a plain object from a
// form, JSON or a copy is never one.

export type ChangeControl = {
  /** The request approved (or broken glass on); null for setup. */
  readonly requestId: number | null;
  readonly requestedBy: string;
  readonly breakGlass: boolean;
  readonly setup: boolean;
};

const issued = new WeakSet<object>();

function issue(c: ChangeControl): ChangeControl {
  const frozen = Object.freeze({ ...c });
  issued.add(frozen);
  return frozen;
}

/** For the applier of an approved (or break-glass) request. */
export function approvalControl(r: { id: number; requestedBy: string; breakGlass: boolean }): ChangeControl {
  return issue({ requestId: r.id, requestedBy: r.requestedBy, breakGlass: r.breakGlass, setup: false });
}

/**
 * For the worker applying a scheduled value (lib/changes/schedule-run.ts), only when the value is a
 * raise on its day and the schedule's own request was approved: that approval is not asked again,
 * up to the value approved. A schedule with no approved request never gets one.
 */
export function scheduleControl(s: { requestId: number | null; createdBy: string }): ChangeControl {
  return issue({ requestId: s.requestId, requestedBy: s.createdBy, breakGlass: false, setup: false });
}

/**
 * For code that builds data on purpose, not a person's edit: the demo seed and test fixtures.
 * Audited as such (details.changeControl = "setup: <who>").
 */
export function setupControl(who: string): ChangeControl {
  return issue({ requestId: null, requestedBy: who, breakGlass: false, setup: true });
}

export function isChangeControl(c: unknown): c is ChangeControl {
  return typeof c === "object" && c !== null && issued.has(c);
}

/** A raise goes through only with a real ChangeControl; otherwise the person is told to ask. */
export function requireApproval(control: ChangeControl | undefined, what: string, ask?: AskInstead): void {
  if (isChangeControl(control)) return;
  throw new ChangeControlError(
    "approval_required",
    `${what} is a raise: it needs a second admin. Ask for approval (a change request), or break glass if no other admin can be reached`,
    ask,
  );
}

/** What the audit row of a change applied under change control adds to its details. */
export function controlDetails(control: ChangeControl | undefined): Record<string, unknown> {
  if (!isChangeControl(control)) return {};
  if (control.setup) return { changeControl: `setup: ${control.requestedBy}` };
  return { requestId: control.requestId, requestedBy: control.requestedBy, ...(control.breakGlass ? { breakGlass: true } : {}) };
}
