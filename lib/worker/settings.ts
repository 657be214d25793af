import { hostname } from "node:os";
import type { DeliverySettings, RuleSettings } from "@/lib/alerts";
import type { Env } from "@/lib/env";
import { egressPolicyFrom } from "@/lib/alerts/egress";
import { readSecret } from "@/lib/env";
import type { UsageSourceSettings } from "@/lib/reconciliation/run";

export type WorkerSettings = {
  /** Heartbeat row; copies sharing a name share a row, which is fine: either beating means alive. */
  name: string;
  intervalMs: number;
  /** The fast lane's period (due schedules, raise ends): at most a second, whatever intervalMs is. */
  fastIntervalMs: number;
  silentAfterSeconds: number;
  reconcileEveryMs: number;
  digestEveryMs: number;
  purgeEveryMs: number;
  refusalRetentionDays: number;
  rules: RuleSettings;
  delivery: DeliverySettings;
  /** Usage sources (lib/reconciliation); absent: the environment's secrets and no inside hosts. */
  usage?: UsageSourceSettings;
};

/** Pulls reach no inside address and credentials come from the worker's environment, unless told otherwise. */
export function usageSettings(s: WorkerSettings): UsageSourceSettings {
  return s.usage ?? { secrets: readSecret, egress: egressPolicyFrom(undefined), recompareEveryMs: 10 * 60_000 };
}

/** The worker's settings from the parsed environment. */
export function workerSettings(e: Env): WorkerSettings {
  return {
    name: e.WORKER_NAME ?? `worker@${hostname()}`,
    intervalMs: e.WORKER_INTERVAL_MS,
    fastIntervalMs: Math.min(1000, e.WORKER_INTERVAL_MS),
    silentAfterSeconds: e.WORKER_SILENT_AFTER_SECONDS,
    reconcileEveryMs: e.RECONCILE_INTERVAL_SECONDS * 1000,
    digestEveryMs: 10 * 60_000,
    purgeEveryMs: 60 * 60_000,
    refusalRetentionDays: e.REFUSAL_RETENTION_DAYS,
    rules: {
      unavailableBurst: e.ALERT_UNAVAILABLE_BURST,
      unavailableWindowMinutes: e.ALERT_UNAVAILABLE_WINDOW_MINUTES,
      refusalSpike: e.ALERT_REFUSAL_SPIKE,
      refusalSpikeWindowMinutes: e.ALERT_REFUSAL_SPIKE_WINDOW_MINUTES,
      adjustFactor: e.ALERT_ADJUST_FACTOR,
    },
    delivery: {
      retryBaseMs: e.ALERT_RETRY_BASE_SECONDS * 1000,
      retryCapMs: e.ALERT_RETRY_CAP_SECONDS * 1000,
      maxAttempts: e.ALERT_MAX_ATTEMPTS,
      baseUrl: e.NEXTAUTH_URL,
      egress: egressPolicyFrom(e.ALERT_WEBHOOK_ALLOW_HOSTS),
    },
    usage: { secrets: readSecret, egress: egressPolicyFrom(e.USAGE_SOURCE_ALLOW_HOSTS), recompareEveryMs: 10 * 60_000 },
  };
}
