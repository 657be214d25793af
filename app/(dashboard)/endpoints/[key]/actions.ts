"use server";

import { revalidatePath } from "next/cache";
import { getDb } from "@/db/client";
import { getSessionStaff } from "@/app/_lib/session";
import type { ControlActionDeps, ControlActionState } from "../../control-action-core";
import { adjustCeilingCore, removeOverrideCore, setBoundsCore, setOverrideCore } from "./ceiling-action-core";

// Each core runs: guard (admin), zod parse, one lib/ceilings call, revalidate.
const live: ControlActionDeps = { session: getSessionStaff, db: getDb, revalidate: (path, type) => revalidatePath(path, type) };

export async function adjustCeilingAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return adjustCeilingCore(live, formData);
}

export async function setBoundsAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return setBoundsCore(live, formData);
}

export async function setOverrideAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return setOverrideCore(live, formData);
}

export async function removeOverrideAction(_previous: ControlActionState, formData: FormData): Promise<ControlActionState> {
  return removeOverrideCore(live, formData);
}
