import { defineAction } from "@/app/_lib/define-action";
import { addCeiling, createEndpoint, removeCeiling, setAlertThresholds, setEndpointArchived, updateEndpoint } from "@/lib/catalog";
import { EndpointKey } from "@/lib/catalog/spec";
import { FormReader, readCeiling, readCeilingRows, readEndpointFields } from "./catalog-form";

// The catalog's server actions: admin only. A change shows on the overview, the endpoint's page
// and the banner, so those are revalidated.

function key(r: FormReader): string {
  const parsed = EndpointKey.safeParse(r.text("key"));
  if (!parsed.success) r.issues.push({ path: "key", message: parsed.error.issues[0]?.message ?? "invalid key" });
  return parsed.success ? parsed.data : "";
}

const pages = (k: string) => ["/", `/endpoints/${k}`];

export const createEndpointCore = defineAction({
  role: "admin",
  boundary: "endpoint.create",
  rejected: "endpoint.rejected",
  input: (fields) => {
    const r = new FormReader(fields);
    const spec = { key: key(r), ...readEndpointFields(r), ceilings: readCeilingRows(r, r.text("ceilings")) };
    return r.done({ spec, reason: r.text("reason") });
  },
  run: async ({ actor, db }, input) => {
    const row = await createEndpoint(db, { spec: input.spec, actor, reason: input.reason });
    return {
      message: `Created ${row.key} with ${input.spec.ceilings.length} ceiling(s): it answers reservations now.`,
      revalidate: pages(row.key),
      redirectTo: `/endpoints/${row.key}`,
    };
  },
});

export const updateEndpointCore = defineAction({
  role: "admin",
  boundary: "endpoint.update",
  rejected: "endpoint.rejected",
  input: (fields) => {
    const r = new FormReader(fields);
    const input = {
      key: key(r),
      expectedVersion: r.whole("expectedVersion", "version") ?? 0,
      fields: readEndpointFields(r),
      reason: r.text("reason"),
      confirm: r.text("confirm"),
    };
    return r.done(input);
  },
  run: async ({ actor, db }, input) => {
    const changes = await updateEndpoint(db, { ...input, actor });
    return { message: `Saved ${input.key}: ${changes.map((c) => c.field).join(", ")} changed.`, revalidate: pages(input.key) };
  },
});

export const addCeilingCore = defineAction({
  role: "admin",
  boundary: "ceiling.add",
  rejected: "ceiling.rejected",
  input: (fields) => {
    const r = new FormReader(fields);
    const ceiling = readCeiling(r, fields, "ceiling");
    return r.done({ key: key(r), ceiling, reason: r.text("reason"), confirm: r.text("confirm") });
  },
  run: async ({ actor, db }, input) => {
    const row = await addCeiling(db, { ...input, actor });
    return { message: `Added ceiling #${row.id} to ${input.key}: it binds the next reservation.`, revalidate: pages(input.key) };
  },
});

export const removeCeilingCore = defineAction({
  role: "admin",
  boundary: "ceiling.remove",
  input: (fields) => {
    const r = new FormReader(fields);
    return r.done({ key: key(r), ceilingId: r.whole("ceilingId", "ceiling id") ?? 0, reason: r.text("reason") });
  },
  run: async ({ actor, db }, input) => {
    await removeCeiling(db, { ...input, actor });
    return { message: `Removed ceiling #${input.ceilingId} from ${input.key}: it stops counting from the next reservation.`, revalidate: pages(input.key) };
  },
});

export const setAlertThresholdsCore = defineAction({
  role: "admin",
  boundary: "ceiling.update",
  input: (fields) => {
    const r = new FormReader(fields);
    return r.done({ key: key(r), ceilingId: r.whole("ceilingId", "ceiling id") ?? 0, thresholds: r.thresholds("alertThresholds"), reason: r.text("reason") });
  },
  run: async ({ actor, db }, input) => {
    const applied = await setAlertThresholds(db, { ...input, actor });
    return {
      message: applied.length ? `Alerts for #${input.ceilingId} fire at ${applied.join("/")}%.` : `No threshold alerts for #${input.ceilingId}.`,
      revalidate: pages(input.key),
    };
  },
});

const archiveCore = (archived: boolean) =>
  defineAction({
    role: "admin",
    boundary: archived ? "endpoint.archive" : "endpoint.unarchive",
    input: (fields) => {
      const r = new FormReader(fields);
      return r.done({ key: key(r), reason: r.text("reason") });
    },
    run: async ({ actor, db }, input) => {
      await setEndpointArchived(db, { ...input, archived, actor });
      return {
        message: archived ? `${input.key} is archived: every reservation is refused as endpoint_archived; its history stays.` : `${input.key} is live again.`,
        revalidate: pages(input.key),
      };
    },
  });

export const archiveEndpointCore = archiveCore(true);
export const unarchiveEndpointCore = archiveCore(false);
