"use server";

import { revalidatePath } from "next/cache";
import { getDb } from "@/db/client";
import { getSessionStaff } from "@/app/_lib/session";
import {
  acknowledgeAlertsCore,
  createDestinationCore,
  deleteDestinationCore,
  setDestinationEnabledCore,
  type AlertActionDeps,
  type AlertActionState,
} from "./alert-action-core";

// Each core runs: guard (role), zod parse, one lib/alerts call, revalidate.
const live: AlertActionDeps = { session: getSessionStaff, db: getDb, revalidate: (path, type) => revalidatePath(path, type) };

export async function acknowledgeAlertsAction(_previous: AlertActionState, formData: FormData): Promise<AlertActionState> {
  return acknowledgeAlertsCore(live, formData);
}

export async function createDestinationAction(_previous: AlertActionState, formData: FormData): Promise<AlertActionState> {
  return createDestinationCore(live, formData);
}

export async function setDestinationEnabledAction(_previous: AlertActionState, formData: FormData): Promise<AlertActionState> {
  return setDestinationEnabledCore(live, formData);
}

export async function deleteDestinationAction(_previous: AlertActionState, formData: FormData): Promise<AlertActionState> {
  return deleteDestinationCore(live, formData);
}
