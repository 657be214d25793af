"use server";

import type { ActionState } from "@/app/_lib/define-action";
import { liveActionDeps } from "@/app/_lib/action-deps";
import { killAllCore, killEndpointCore, restoreEndpointCore } from "./control-action-core";

// Each core runs: guard (operator), zod parse, one lib/ceilings call, revalidate.

export async function killEndpointAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return killEndpointCore(liveActionDeps, formData);
}

export async function restoreEndpointAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return restoreEndpointCore(liveActionDeps, formData);
}

export async function killAllAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return killAllCore(liveActionDeps, formData);
}
