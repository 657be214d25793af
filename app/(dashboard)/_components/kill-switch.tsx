import { runAction } from "@/app/(dashboard)/actions";
import { ConfirmActionButton } from "@/components/confirm-action-button";

const KILL = {
  verb: "Kill",
  action: runAction.bind(null, "ceiling.kill"),
  description: "Every ceiling of this endpoint is set to 0, whatever its bounds: the very next call is refused. Restore puts the values back.",
  confirmLabel: "Kill now",
  tone: "danger",
} as const;

const RESTORE = {
  verb: "Restore",
  action: runAction.bind(null, "ceiling.restore"),
  description: "Each ceiling goes back to its value from before the kill, and calls are granted again within those ceilings.",
  confirmLabel: "Restore",
  tone: "neutral",
} as const;

/**
 * An endpoint's kill switch, on the overview and on its own page: Kill while it is live, Restore
 * once killed. In a list (`named`) the button names the endpoint, so each row's is told apart.
 */
export function KillSwitch({ endpointKey, killed, named = false }: { endpointKey: string; killed: boolean; named?: boolean }) {
  const s = killed ? RESTORE : KILL;
  return (
    <ConfirmActionButton
      action={s.action}
      label={named ? `${s.verb} ${endpointKey}` : `${s.verb} endpoint`}
      title={`${s.verb} ${endpointKey}?`}
      description={s.description}
      confirmLabel={s.confirmLabel}
      fields={{ endpointKey }}
      reason="optional"
      tone={s.tone}
      testId={`${s.verb.toLowerCase()}-${named ? endpointKey : "endpoint"}`}
    />
  );
}
