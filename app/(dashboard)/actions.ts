"use server";

import { liveActionDeps } from "@/app/_lib/action-deps";
import { killAllCore, killEndpointCore, restoreEndpointCore, type ControlActionState } from "./control-action-core";

// Each core runs: guard (operator), zod parse, one lib/ceilings call, revalidate.

export async function killEndpointAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return killEndpointCore(liveActionDeps, formData);
}

export async function restoreEndpointAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return restoreEndpointCore(liveActionDeps, formData);
}

export async function killAllAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return killAllCore(liveActionDeps, formData);
}
