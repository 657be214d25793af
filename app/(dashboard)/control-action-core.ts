import { z } from "zod";
import { defineAction } from "@/app/_lib/define-action";
import { killAll, killEndpoint, restoreEndpoint } from "@/lib/ceilings";
import { formatCount } from "@/lib/format";
import { EndpointKeyField, OptionalReason } from "@/app/_lib/action-fields";

// Kill, restore and kill all: operators and admins. A kill changes the banner on every page, so
// the whole dashboard is revalidated.

const everyPage = ["/"];

export const killEndpointCore = defineAction({
  role: "operator",
  boundary: "ceiling.kill",
  input: z.object({ endpointKey: EndpointKeyField, reason: OptionalReason }),
  run: async ({ actor, db }, input) => {
    const changes = await killEndpoint(db, { ...input, actor });
    return { message: `${input.endpointKey} is killed: ${changes.length} ceiling(s) set to 0. Every call is refused until restored.`, revalidate: everyPage };
  },
});

export const restoreEndpointCore = defineAction({
  role: "operator",
  boundary: "ceiling.restore",
  input: z.object({ endpointKey: EndpointKeyField, reason: OptionalReason }),
  run: async ({ actor, db }, input) => {
    const changes = await restoreEndpoint(db, { ...input, actor });
    const values = changes.map((c) => formatCount(c.applied)).join(", ");
    return { message: `${input.endpointKey} is restored to the values from before the kill (${values}).`, revalidate: everyPage };
  },
});

export const killAllCore = defineAction({
  role: "operator",
  boundary: "ceiling.kill_all",
  input: z.object({ reason: OptionalReason }),
  run: async ({ actor, db }, input) => {
    const changes = await killAll(db, { ...input, actor });
    const endpoints = new Set(changes.map((c) => c.endpointKey)).size;
    return { message: `Killed ${endpoints} endpoint(s). Restore each on its own when it is safe.`, revalidate: everyPage };
  },
});
