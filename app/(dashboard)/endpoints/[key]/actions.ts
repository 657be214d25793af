"use server";

import { liveActionDeps } from "@/app/_lib/action-deps";
import type { ControlActionState } from "../../control-action-core";
import { adjustCeilingCore, removeOverrideCore, setBoundsCore, setOverrideCore } from "./ceiling-action-core";

// Each core runs: guard (admin), zod parse, one lib/ceilings call, revalidate.

export async function adjustCeilingAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return adjustCeilingCore(liveActionDeps, formData);
}

export async function setBoundsAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return setBoundsCore(liveActionDeps, formData);
}

export async function setOverrideAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return setOverrideCore(liveActionDeps, formData);
}

export async function removeOverrideAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return removeOverrideCore(liveActionDeps, formData);
}
