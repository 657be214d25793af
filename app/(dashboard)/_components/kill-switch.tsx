import { runAction } from "@/app/(dashboard)/actions";
import { ConfirmActionButton } from "@/components/confirm-action-button";

const killEndpoint = runAction.bind(null, "ceiling.kill");
const restoreEndpoint = runAction.bind(null, "ceiling.restore");

/**
 * An endpoint's kill switch, on the overview and on its own page: Kill while it is live, Restore
 * once killed. In a list (`named`) the button names the endpoint, so each row's is told apart.
 */
export function KillSwitch({ endpointKey, killed, named = false }: { endpointKey: string; killed: boolean; named?: boolean }) {
  const label = (verb: string) => (named ? `${verb} ${endpointKey}` : `${verb} endpoint`);
  const testId = (verb: string) => `${verb}-${named ? endpointKey : "endpoint"}`;
  return killed ? (
    <ConfirmActionButton
      action={restoreEndpoint}
      label={label("Restore")}
      title={`Restore ${endpointKey}?`}
      description="Each ceiling goes back to its value from before the kill, and calls are granted again within those ceilings."
      confirmLabel="Restore"
      fields={{ endpointKey }}
      reason="optional"
      tone="neutral"
      testId={testId("restore")}
    />
  ) : (
    <ConfirmActionButton
      action={killEndpoint}
      label={label("Kill")}
      title={`Kill ${endpointKey}?`}
      description="Every ceiling of this endpoint is set to 0, whatever its bounds: the very next call is refused. Restore puts the values back."
      confirmLabel="Kill now"
      fields={{ endpointKey }}
      reason="optional"
      tone="danger"
      testId={testId("kill")}
    />
  );
}
