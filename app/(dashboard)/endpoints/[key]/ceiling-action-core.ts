import { z } from "zod";
import { defineAction } from "@/app/_lib/define-action";
import { adjustCeiling, removeOverride, setBounds, setOverride } from "@/lib/ceilings";
import { decimalId } from "@/lib/http/strict-input";
import { OverrideEndHours, Reason } from "@/app/_lib/action-fields";
import { untilText } from "@/lib/control/ends";
import { formatCount } from "@/lib/format";

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
const OverrideForm = z.object({ ceilingId: Id, caller: z.string().max(200), input: RawNumber, reason: Reason, expiresInHours: OverrideEndHours });
const RemoveOverrideForm = z.object({ ceilingId: Id, caller: z.string().max(200), reason: Reason });

// A value of 0 is a kill, which the banner on every page reflects.
const pages = (endpointKey: string) => ["/", `/endpoints/${endpointKey}`];

export const adjustCeilingCore = defineAction({
  role: "admin",
  boundary: "ceiling.adjust",
  input: AdjustForm,
  run: async ({ actor, db }, input) => {
    const r = await adjustCeiling(db, { ...input, actor });
    const clamp = r.clamped ? ` (you typed ${input.input.trim()}; clamped to the ${r.clamped === "max" ? "maximum" : "minimum"})` : "";
    const what =
      r.kind === "kill"
        ? "Ceiling killed: set to 0"
        : r.kind === "restore"
          ? `Ceiling restored to ${formatCount(r.applied)}`
          : `Saved: ${formatCount(r.previous)} → ${formatCount(r.applied)}`;
    return { message: `${what}${clamp}.`, revalidate: pages(r.endpointKey) };
  },
});

export const setBoundsCore = defineAction({
  role: "admin",
  boundary: "ceiling.bounds",
  input: BoundsForm,
  run: async ({ actor, db }, input) => {
    const r = await setBounds(db, { ...input, actor });
    const moved = r.valueClamped ? ` The value moved from ${formatCount(r.previousValue)} to ${formatCount(r.value)} to fit.` : "";
    return { message: `Bounds are now ${formatCount(r.min)} to ${formatCount(r.max)}.${moved}`, revalidate: pages(r.endpointKey) };
  },
});

export const setOverrideCore = defineAction({
  role: "admin",
  boundary: "ceiling.override",
  input: OverrideForm,
  run: async ({ actor, db }, input) => {
    const r = await setOverride(db, { ...input, expiresAfterSeconds: input.expiresInHours, actor });
    const applied = r.applied ?? 0;
    const clamp = r.clamped ? ` (clamped to the ${r.clamped === "max" ? "maximum" : "minimum"})` : "";
    return {
      message: `${applied === 0 ? `${r.caller} is blocked on this ceiling` : `${r.caller} now has ${formatCount(applied)}${clamp}`}${untilText(r.expiresAt)}.`,
      revalidate: pages(r.endpointKey),
    };
  },
});

export const removeOverrideCore = defineAction({
  role: "admin",
  boundary: "ceiling.override_remove",
  input: RemoveOverrideForm,
  run: async ({ actor, db }, input) => {
    const r = await removeOverride(db, { ...input, actor });
    return { message: `${r.caller} is back on the ceiling's own value.`, revalidate: pages(r.endpointKey) };
  },
});
