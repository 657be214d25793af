"use server";

import { liveActionDeps } from "@/app/_lib/action-deps";
import {
  acknowledgeAlertsCore,
  createDestinationCore,
  deleteDestinationCore,
  setDestinationEnabledCore,
  type AlertActionState,
} from "./alert-action-core";

// Each core runs: guard (role), zod parse, one lib/alerts call, revalidate.

export async function acknowledgeAlertsAction(_previous: AlertActionState, formData: FormData): Promise<AlertActionState> {
  return acknowledgeAlertsCore(liveActionDeps, formData);
}

export async function createDestinationAction(_previous: AlertActionState, formData: FormData): Promise<AlertActionState> {
  return createDestinationCore(liveActionDeps, formData);
}

export async function setDestinationEnabledAction(_previous: AlertActionState, formData: FormData): Promise<AlertActionState> {
  return setDestinationEnabledCore(liveActionDeps, formData);
}

export async function deleteDestinationAction(_previous: AlertActionState, formData: FormData): Promise<AlertActionState> {
  return deleteDestinationCore(liveActionDeps, formData);
}
