"use server";

import { liveActionDeps } from "@/app/_lib/action-deps";
import {
  addStaffCore,
  changeRoleCore,
  setDisabledCore,
  type StaffActionState,
} from "./staff-action-core";

// Each core runs: guard (admin), zod parse, one lib/auth call, revalidate.

export async function addStaffAction(_previous: StaffActionState, formData: FormData): Promise<StaffActionState> {
  return addStaffCore(liveActionDeps, formData);
}

export async function changeStaffRoleAction(_previous: StaffActionState, formData: FormData): Promise<StaffActionState> {
  return changeRoleCore(liveActionDeps, formData);
}

export async function setStaffDisabledAction(_previous: StaffActionState, formData: FormData): Promise<StaffActionState> {
  return setDisabledCore(liveActionDeps, formData);
}
