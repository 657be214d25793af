"use server";

import type { ActionState } from "@/app/_lib/define-action";
import { liveActionDeps } from "@/app/_lib/action-deps";
import { adjustCeilingCore, removeOverrideCore, setBoundsCore, setOverrideCore } from "./ceiling-action-core";

// Each core runs: guard (admin), zod parse, one lib/ceilings call, revalidate.

export async function adjustCeilingAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return adjustCeilingCore(liveActionDeps, formData);
}

export async function setBoundsAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return setBoundsCore(liveActionDeps, formData);
}

export async function setOverrideAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return setOverrideCore(liveActionDeps, formData);
}

export async function removeOverrideAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return removeOverrideCore(liveActionDeps, formData);
}
