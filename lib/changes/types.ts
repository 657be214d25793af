import type { ChangeRequest } from "@/db/schema";
import type { Role } from "@/lib/auth/roles";
import type { ChangeKind } from "@/lib/control/change-kinds";

export type { ChangeRequest } from "@/db/schema";

export { changeKindLabels, changeKinds, isChangeKind, type ChangeKind } from "@/lib/control/change-kinds";

/**
 * Who asks, approves, rejects or acknowledges: a staff member, from a dashboard session or the CLI
 * (the owner of a personal token, CEILINGS_STAFF_TOKEN). lib checks the staff row itself (enabled, same email; the role in force there),
 * so a second session or the CLI is the same person by staffId.
 */
export type Requester = { staffId: number; email: string; role: Role; via: "dashboard" | "cli" };

export type ChangeRequestState = ChangeRequest["state"];

/** A request's end: one of the two, or neither (a raise that stays). */
export type RaiseEndInput = { endsAfterSeconds?: number | null; endsAt?: Date | null };

export type RequestChangeParams = RaiseEndInput & {
  kind: ChangeKind;
  change: Record<string, unknown>;
  requester: Requester;
  reason: string;
  /** A value raise of 5x or more is typed twice, as in the direct edit. */
  confirm?: string;
  now?: Date;
};

export type ApproveResult = { request: ChangeRequest; applied: boolean; message: string };

/** How long a request waits for its second person. */
export const REQUEST_TTL_MS = 24 * 60 * 60 * 1000;
/** Break glass says why at some length: it bypasses the second person. */
export const BREAK_GLASS_MIN_REASON = 10;
