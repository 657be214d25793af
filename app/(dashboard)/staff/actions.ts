"use server";

import { revalidatePath } from "next/cache";
import { getDb } from "@/db/client";
import { getSessionStaff } from "@/app/_lib/session";
import {
  addStaffCore,
  changeRoleCore,
  setDisabledCore,
  type StaffActionDeps,
  type StaffActionState,
} from "./staff-action-core";

// Each core runs: guard (admin), zod parse, one lib/auth call, revalidate.
const live: StaffActionDeps = { session: getSessionStaff, db: getDb, revalidate: (path) => revalidatePath(path) };

export async function addStaffAction(_previous: StaffActionState, formData: FormData): Promise<StaffActionState> {
  return addStaffCore(live, formData);
}

export async function changeStaffRoleAction(_previous: StaffActionState, formData: FormData): Promise<StaffActionState> {
  return changeRoleCore(live, formData);
}

export async function setStaffDisabledAction(_previous: StaffActionState, formData: FormData): Promise<StaffActionState> {
  return setDisabledCore(live, formData);
}
