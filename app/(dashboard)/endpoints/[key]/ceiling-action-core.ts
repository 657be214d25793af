import { z } from "zod";
import { checkRole } from "@/app/_lib/guards";
import { adjustCeiling, formatCount, removeOverride, setBounds, setOverride } from "@/lib/ceilings";
import {
  actionFailure,
  formFields,
  parseFailure,
  Reason,
  staffActor,
  type ControlActionDeps,
  type ControlActionState,
} from "../../control-action-core";
import { strictForm } from "@/app/_lib/strict-form";
import { decimalId } from "@/lib/http/strict-input";

// Values, bounds and overrides are admin-only; operators kill and restore (control-action-core).

const Id = decimalId("ceiling id");
const Version = decimalId("version");
// The number itself is parsed by lib/ceilings, which owns the "whole numbers only" rule and its
// messages; here the raw text is only bounded in size.
const RawNumber = z.string({ error: "a value is required" }).max(64, "that value is too long");

const AdjustForm = z.object({
  ceilingId: Id,
  expectedVersion: Version,
  input: RawNumber,
  reason: Reason,
  confirm: z.string().max(64).optional(),
});
const BoundsForm = z.object({ ceilingId: Id, expectedVersion: Version, min: RawNumber, max: RawNumber, reason: Reason });
const OverrideForm = z.object({ ceilingId: Id, caller: z.string().max(200), input: RawNumber, reason: Reason });
const RemoveOverrideForm = z.object({ ceilingId: Id, caller: z.string().max(200), reason: Reason });

function revalidateEndpoint(deps: ControlActionDeps, endpointKey: string): void {
  // A value of 0 is a kill, which the banner on every page reflects.
  deps.revalidate("/", "layout");
  deps.revalidate(`/endpoints/${endpointKey}`);
}

async function adjustCeilingBody(deps: ControlActionDeps, formData: FormData): Promise<ControlActionState> {
  const auth = checkRole(await deps.session(), "admin");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = AdjustForm.safeParse(formFields(formData));
  if (!parsed.success) return parseFailure(parsed.error);
  try {
    const r = await adjustCeiling(await deps.db(), { ...parsed.data, actor: staffActor(auth.staff) });
    revalidateEndpoint(deps, r.endpointKey);
    const clamp = r.clamped ? ` (you typed ${parsed.data.input.trim()}; clamped to the ${r.clamped === "max" ? "maximum" : "minimum"})` : "";
    const what =
      r.kind === "kill"
        ? "Ceiling killed: set to 0"
        : r.kind === "restore"
          ? `Ceiling restored to ${formatCount(r.applied)}`
          : `Saved: ${formatCount(r.previous)} → ${formatCount(r.applied)}`;
    return { status: "ok", message: `${what}${clamp}.` };
  } catch (error) {
    return actionFailure(error);
  }
}

async function setBoundsBody(deps: ControlActionDeps, formData: FormData): Promise<ControlActionState> {
  const auth = checkRole(await deps.session(), "admin");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = BoundsForm.safeParse(formFields(formData));
  if (!parsed.success) return parseFailure(parsed.error);
  try {
    const r = await setBounds(await deps.db(), { ...parsed.data, actor: staffActor(auth.staff) });
    revalidateEndpoint(deps, r.endpointKey);
    const moved = r.valueClamped ? ` The value moved from ${formatCount(r.previousValue)} to ${formatCount(r.value)} to fit.` : "";
    return { status: "ok", message: `Bounds are now ${formatCount(r.min)} to ${formatCount(r.max)}.${moved}` };
  } catch (error) {
    return actionFailure(error);
  }
}

async function setOverrideBody(deps: ControlActionDeps, formData: FormData): Promise<ControlActionState> {
  const auth = checkRole(await deps.session(), "admin");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = OverrideForm.safeParse(formFields(formData));
  if (!parsed.success) return parseFailure(parsed.error);
  try {
    const r = await setOverride(await deps.db(), { ...parsed.data, actor: staffActor(auth.staff) });
    revalidateEndpoint(deps, r.endpointKey);
    const applied = r.applied ?? 0;
    const clamp = r.clamped ? ` (clamped to the ${r.clamped === "max" ? "maximum" : "minimum"})` : "";
    return {
      status: "ok",
      message: applied === 0 ? `${r.caller} is blocked on this ceiling.` : `${r.caller} now has ${formatCount(applied)}${clamp}.`,
    };
  } catch (error) {
    return actionFailure(error);
  }
}

async function removeOverrideBody(deps: ControlActionDeps, formData: FormData): Promise<ControlActionState> {
  const auth = checkRole(await deps.session(), "admin");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = RemoveOverrideForm.safeParse(formFields(formData));
  if (!parsed.success) return parseFailure(parsed.error);
  try {
    const r = await removeOverride(await deps.db(), { ...parsed.data, actor: staffActor(auth.staff) });
    revalidateEndpoint(deps, r.endpointKey);
    return { status: "ok", message: `${r.caller} is back on the ceiling's own value.` };
  } catch (error) {
    return actionFailure(error);
  }
}

// Every core passes the input boundary first (app/_lib/strict-form.ts).
export const adjustCeilingCore = strictForm("ceiling.adjust", adjustCeilingBody);
export const setBoundsCore = strictForm("ceiling.bounds", setBoundsBody);
export const setOverrideCore = strictForm("ceiling.override", setOverrideBody);
export const removeOverrideCore = strictForm("ceiling.override_remove", removeOverrideBody);
