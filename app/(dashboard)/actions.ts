"use server";

import { revalidatePath } from "next/cache";
import { getDb } from "@/db/client";
import { getSessionStaff } from "@/app/_lib/session";
import { killAllCore, killEndpointCore, restoreEndpointCore, type ControlActionDeps, type ControlActionState } from "./control-action-core";

// Each core runs: guard (operator), zod parse, one lib/ceilings call, revalidate.
const live: ControlActionDeps = { session: getSessionStaff, db: getDb, revalidate: (path, type) => revalidatePath(path, type) };

export async function killEndpointAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return killEndpointCore(live, formData);
}

export async function restoreEndpointAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return restoreEndpointCore(live, formData);
}

export async function killAllAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return killAllCore(live, formData);
}
