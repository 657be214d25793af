import type { ActionDeps } from "@/app/_lib/action-deps";
import { z } from "zod";
import { checkRole } from "@/app/_lib/guards";
import type { SessionStaff } from "@/app/_lib/session";
import { acknowledgeAlerts, AlertError, createDestination, deleteDestination, DestinationInput, setDestinationEnabled } from "@/lib/alerts";
import { logError } from "@/lib/log/redact";
import { strictForm } from "@/app/_lib/strict-form";
import { decimalId } from "@/lib/http/strict-input";

// The bodies of the alert server actions, with their dependencies passed in so tests run them on a
// real database as a chosen staff member. Each: guard (role), zod parse, one lib/alerts call,
// revalidate.

export type AlertActionDeps = ActionDeps;

export type AlertActionState = { status: "idle" } | { status: "ok"; message: string } | { status: "error"; error: string };

const Id = decimalId("id");
const AckForm = z.object({ alertIds: z.array(Id).min(1, "choose at least one alert to acknowledge").max(500, "at most 500 alerts at once") });
const DestinationIdForm = z.object({ id: Id });
const EnableForm = z.object({ id: Id, enabled: z.enum(["true", "false"], { error: "enabled must be true or false" }) });

function staffActor(staff: SessionStaff) {
  return { type: "staff", email: staff.email } as const;
}

function parseFailure(error: z.ZodError): AlertActionState {
  return { status: "error", error: error.issues.map((i) => i.message).join("; ") };
}

function failure(error: unknown): AlertActionState {
  if (error instanceof AlertError) return { status: "error", error: error.message };
  logError("alert action failed", error);
  return { status: "error", error: "The change could not be saved. The error was logged; try again." };
}

function text(formData: FormData, name: string): string | undefined {
  const v = formData.get(name);
  return typeof v === "string" ? v : undefined;
}

/** Operators and admins acknowledge; each acknowledged alert is audited as 'alert.ack'. */
async function acknowledgeAlertsBody(deps: AlertActionDeps, formData: FormData): Promise<AlertActionState> {
  const auth = checkRole(await deps.session(), "operator");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = AckForm.safeParse({ alertIds: formData.getAll("alertId").filter((v) => typeof v === "string") });
  if (!parsed.success) return parseFailure(parsed.error);
  try {
    const changed = await acknowledgeAlerts(await deps.db(), { alertIds: parsed.data.alertIds, actor: staffActor(auth.staff) });
    // The count in the navigation is in the layout.
    deps.revalidate("/", "layout");
    return { status: "ok", message: changed === 0 ? "Already acknowledged." : `Acknowledged ${changed} alert(s).` };
  } catch (error) {
    return failure(error);
  }
}

async function createDestinationBody(deps: AlertActionDeps, formData: FormData): Promise<AlertActionState> {
  const auth = checkRole(await deps.session(), "admin");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = DestinationInput.safeParse({
    name: text(formData, "name"),
    kind: text(formData, "kind"),
    target: text(formData, "target"),
    signingSecret: text(formData, "signingSecret") || undefined,
    smtpHost: text(formData, "smtpHost") || undefined,
    smtpPort: text(formData, "smtpPort") || undefined,
    smtpTls: text(formData, "smtpTls") || undefined,
    smtpUsername: text(formData, "smtpUsername") || undefined,
    smtpPasswordRef: text(formData, "smtpPasswordRef") || undefined,
    emailFrom: text(formData, "emailFrom") || undefined,
  });
  if (!parsed.success) return parseFailure(parsed.error);
  try {
    const row = await createDestination(await deps.db(), { input: parsed.data, actor: staffActor(auth.staff) });
    deps.revalidate("/alerts/destinations");
    return { status: "ok", message: `Added ${row.kind} destination "${row.name}": alerts fired from now on are sent to it.` };
  } catch (error) {
    return failure(error);
  }
}

async function setDestinationEnabledBody(deps: AlertActionDeps, formData: FormData): Promise<AlertActionState> {
  const auth = checkRole(await deps.session(), "admin");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = EnableForm.safeParse({ id: text(formData, "id"), enabled: text(formData, "enabled") });
  if (!parsed.success) return parseFailure(parsed.error);
  try {
    const row = await setDestinationEnabled(await deps.db(), { id: parsed.data.id, enabled: parsed.data.enabled === "true", actor: staffActor(auth.staff) });
    deps.revalidate("/alerts/destinations");
    return { status: "ok", message: `"${row.name}" is ${row.enabled ? "enabled" : "disabled"}.` };
  } catch (error) {
    return failure(error);
  }
}

async function deleteDestinationBody(deps: AlertActionDeps, formData: FormData): Promise<AlertActionState> {
  const auth = checkRole(await deps.session(), "admin");
  if (!auth.ok) return { status: "error", error: auth.error };
  const parsed = DestinationIdForm.safeParse({ id: text(formData, "id") });
  if (!parsed.success) return parseFailure(parsed.error);
  try {
    await deleteDestination(await deps.db(), { id: parsed.data.id, actor: staffActor(auth.staff) });
    deps.revalidate("/alerts/destinations");
    return { status: "ok", message: "Destination deleted." };
  } catch (error) {
    return failure(error);
  }
}

// Every core passes the input boundary first (app/_lib/strict-form.ts).
export const acknowledgeAlertsCore = strictForm("alert.acknowledge", acknowledgeAlertsBody);
export const createDestinationCore = strictForm("alert_destination.create", createDestinationBody);
export const setDestinationEnabledCore = strictForm("alert_destination.enable", setDestinationEnabledBody);
export const deleteDestinationCore = strictForm("alert_destination.delete", deleteDestinationBody);
