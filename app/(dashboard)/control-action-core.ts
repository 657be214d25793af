import { z } from "zod";
import { defineAction } from "@/app/_lib/define-action";
import { killAll, killEndpoint, restoreEndpoint } from "@/lib/ceilings";
import { EndpointKey as CatalogEndpointKey } from "@/lib/catalog/spec";
import { formatCount } from "@/lib/format";

// Kill, restore and kill all: operators and admins. A kill changes the banner on every page, so
// the whole dashboard is revalidated.

export const EndpointKey = z.string({ error: "endpoint is required" }).trim().pipe(CatalogEndpointKey);
export const Reason = z.string({ error: "a reason is required" }).trim().min(1, "a reason is required: say why, for the audit log").max(500);

// Stopping spend is never held up by typing: kill and kill all take an optional reason (the audit
// log says "no reason given"); raising a value (adjust, bounds) still requires one.
const OptionalReason = z.string().trim().max(500).optional();

const everyPage = ["/"];

export const killEndpointCore = defineAction({
  role: "operator",
  boundary: "ceiling.kill",
  input: z.object({ endpointKey: EndpointKey, reason: OptionalReason }),
  run: async ({ actor, deps }, input) => {
    const changes = await killEndpoint(await deps.db(), { ...input, actor });
    return { message: `${input.endpointKey} is killed: ${changes.length} ceiling(s) set to 0. Every call is refused until restored.`, revalidate: everyPage };
  },
});

export const restoreEndpointCore = defineAction({
  role: "operator",
  boundary: "ceiling.restore",
  input: z.object({ endpointKey: EndpointKey, reason: OptionalReason }),
  run: async ({ actor, deps }, input) => {
    const changes = await restoreEndpoint(await deps.db(), { ...input, actor });
    const values = changes.map((c) => formatCount(c.applied)).join(", ");
    return { message: `${input.endpointKey} is restored to the values from before the kill (${values}).`, revalidate: everyPage };
  },
});

export const killAllCore = defineAction({
  role: "operator",
  boundary: "ceiling.kill_all",
  input: z.object({ reason: OptionalReason }),
  run: async ({ actor, deps }, input) => {
    const changes = await killAll(await deps.db(), { ...input, actor });
    const endpoints = new Set(changes.map((c) => c.endpointKey)).size;
    return { message: `Killed ${endpoints} endpoint(s). Restore each on its own when it is safe.`, revalidate: everyPage };
  },
});
