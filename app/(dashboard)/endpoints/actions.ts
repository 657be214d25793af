"use server";

import { liveActionDeps } from "@/app/_lib/action-deps";
import type { ActionState } from "@/app/_lib/define-action";
import { addCeilingCore, archiveEndpointCore, createEndpointCore, removeCeilingCore, setAlertThresholdsCore, unarchiveEndpointCore, updateEndpointCore } from "./catalog-action-core";

export async function createEndpointAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return createEndpointCore(liveActionDeps, formData);
}

export async function updateEndpointAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return updateEndpointCore(liveActionDeps, formData);
}

export async function addCeilingAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return addCeilingCore(liveActionDeps, formData);
}

export async function removeCeilingAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return removeCeilingCore(liveActionDeps, formData);
}

export async function archiveEndpointAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return archiveEndpointCore(liveActionDeps, formData);
}

export async function unarchiveEndpointAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return unarchiveEndpointCore(liveActionDeps, formData);
}

export async function setAlertThresholdsAction(_previous: ActionState, formData: FormData): Promise<ActionState> {
  return setAlertThresholdsCore(liveActionDeps, formData);
}
