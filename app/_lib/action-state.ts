/** What a server action answers its form with: the one shape every form and ActionMessage reads. */
export type ActionState =
  | { status: "idle" }
  | { status: "ok"; message: string; redirectTo?: string; secret?: string; data?: unknown; link?: { href: string; label: string } }
  | {
      status: "error";
      error: string;
      code?: string;
      /** Per field name, for the message next to the input. */
      fieldErrors?: Record<string, string>;
      /** What is in force after a conflict, so the form can reload it. */
      current?: { value: number; version: number };
      currentVersion?: number;
      /** On approval_required: the kind of request that would make the change, so the form offers the right ask. */
      askKind?: string;
    };

export const IDLE: ActionState = { status: "idle" };

/** A server action as a form holds it: runAction bound to an action's name. */
export type FormAction = (previous: ActionState, formData: FormData) => Promise<ActionState>;
