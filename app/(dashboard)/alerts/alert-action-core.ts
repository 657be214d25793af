import { z } from "zod";
import { defineAction } from "@/app/_lib/define-action";
import { acknowledgeAlerts, createDestination, deleteDestination, DestinationInput, setDestinationEnabled } from "@/lib/alerts";
import { decimalId } from "@/lib/http/strict-input";

// Operators and admins acknowledge alerts (each audited as 'alert.ack'); admins manage where
// alerts are sent.

const Id = decimalId("id");
const DESTINATIONS = ["/alerts/destinations"];

export const acknowledgeAlertsCore = defineAction({
  role: "operator",
  boundary: "alert.acknowledge",
  lists: ["alertId"],
  input: z.object({ alertId: z.array(Id).min(1, "choose at least one alert to acknowledge").max(500, "at most 500 alerts at once") }),
  run: async ({ actor, db }, input) => {
    const changed = await acknowledgeAlerts(db, { alertIds: input.alertId, actor });
    // The count in the navigation is in the layout.
    return { message: changed === 0 ? "Already acknowledged." : `Acknowledged ${changed} alert(s).`, revalidate: ["/"] };
  },
});

// A blank optional field is "not given": a signing secret is generated, no SMTP user is sent.
const OPTIONAL = new Set(["signingSecret", "smtpUsername", "smtpPasswordRef"]);
const blankOptionalsDropped = (fields: unknown) =>
  Object.fromEntries(Object.entries(fields as Record<string, string>).filter(([name, value]) => value !== "" || !OPTIONAL.has(name)));

export const createDestinationCore = defineAction({
  role: "admin",
  boundary: "alert_destination.create",
  input: z.preprocess(blankOptionalsDropped, DestinationInput),
  // A Slack or webhook URL carries its token; the SMTP fields name the mail account.
  secrets: ["target", "signingSecret", "smtpUsername", "smtpPasswordRef"],
  run: async ({ actor, db }, input) => {
    const row = await createDestination(db, { input, actor });
    return { message: `Added ${row.kind} destination "${row.name}": alerts fired from now on are sent to it.`, revalidate: DESTINATIONS };
  },
});

export const setDestinationEnabledCore = defineAction({
  role: "admin",
  boundary: "alert_destination.enable",
  input: z.object({ id: Id, enabled: z.enum(["true", "false"], { error: "enabled must be true or false" }) }),
  run: async ({ actor, db }, input) => {
    const row = await setDestinationEnabled(db, { id: input.id, enabled: input.enabled === "true", actor });
    return { message: `"${row.name}" is ${row.enabled ? "enabled" : "disabled"}.`, revalidate: DESTINATIONS };
  },
});

export const deleteDestinationCore = defineAction({
  role: "admin",
  boundary: "alert_destination.delete",
  input: z.object({ id: Id }),
  run: async ({ actor, db }, input) => {
    await deleteDestination(db, { id: input.id, actor });
    return { message: "Destination deleted.", revalidate: DESTINATIONS };
  },
});
