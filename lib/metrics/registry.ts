import { Counter, Gauge, Histogram, Registry } from "prom-client";
import { setEnforcementObserver, type EnforcementObserver } from "@/lib/enforcement/observer";

// One Prometheus registry per process (on globalThis: Next loads modules once per route bundle),
// fed by the enforcement observer. Counting is per batch, not per call: one loop over the answers
// of a database call, label lookups only, nothing awaited, so the hot path does not wait on it.

export type Metrics = {
  registry: Registry;
  granted: Counter<"endpoint">;
  refused: Counter<"endpoint" | "gate">;
  unavailable: Counter<"reason">;
  overruns: Counter;
  expired: Counter;
  refusalLogFailures: Counter;
  batchSize: Histogram;
  batchSeconds: Histogram<"outcome">;
  deliveries: Counter<"outcome">;
  heartbeatAge: Gauge<"worker">;
  alertDeliveries: Gauge<"state">;
  dbConnections: Gauge<"state">;
};

function build(process: "app" | "worker"): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ process });
  const r = [registry];
  return {
    registry,
    granted: new Counter({
      name: "ceilings_reservations_granted_total",
      help: "Reservations granted (new, not replays)",
      labelNames: ["endpoint"],
      registers: r,
    }),
    refused: new Counter({
      name: "ceilings_reservations_refused_total",
      help: "Reservations refused by a gate",
      labelNames: ["endpoint", "gate"],
      registers: r,
    }),
    unavailable: new Counter({
      name: "ceilings_reservations_unavailable_total",
      help: "Reservations refused as unavailable (fail closed), by reason",
      labelNames: ["reason"],
      registers: r,
    }),
    overruns: new Counter({ name: "ceilings_settle_overruns_total", help: "Settles whose actual was above the reservation", registers: r }),
    expired: new Counter({ name: "ceilings_reservations_expired_total", help: "Reservations expired by the sweeper (counted as spent)", registers: r }),
    refusalLogFailures: new Counter({
      name: "ceilings_refusal_log_failures_total",
      help: "Refusals this process could not store in the refusal log",
      registers: r,
    }),
    batchSize: new Histogram({
      name: "ceilings_reserve_batch_size",
      help: "Requests per reserve_batch database call",
      buckets: [1, 2, 4, 8, 16, 32, 64, 128],
      registers: r,
    }),
    batchSeconds: new Histogram({
      name: "ceilings_reserve_batch_duration_seconds",
      help: "Duration of one reserve_batch database call",
      labelNames: ["outcome"],
      buckets: [0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: r,
    }),
    deliveries: new Counter({
      name: "ceilings_alert_delivery_attempts_total",
      help: "Alert delivery attempts by this process, by outcome",
      labelNames: ["outcome"],
      registers: r,
    }),
    heartbeatAge: new Gauge({
      name: "ceilings_worker_heartbeat_age_seconds",
      help: "Seconds since each worker's last heartbeat",
      labelNames: ["worker"],
      registers: r,
    }),
    alertDeliveries: new Gauge({ name: "ceilings_alert_deliveries", help: "Alert deliveries in the outbox, by state", labelNames: ["state"], registers: r }),
    dbConnections: new Gauge({
      name: "ceilings_db_connections",
      help: "Connections to this database by state (pg_stat_activity); 'active' is the pool in use",
      labelNames: ["state"],
      registers: r,
    }),
  };
}

export function observerFor(m: Metrics): EnforcementObserver {
  return {
    batch(requests, answers, seconds) {
      m.batchSize.observe(requests.length);
      m.batchSeconds.observe({ outcome: answers ? "ok" : "error" }, seconds);
      if (!answers) return;
      for (let i = 0; i < answers.length; i++) {
        const a = answers[i];
        const endpoint = requests[i]?.endpoint ?? "";
        if (a?.status === "granted") {
          if (!a.replay) m.granted.inc({ endpoint });
        } else if (a?.status === "refused" && a.gate !== "unavailable") {
          m.refused.inc({ endpoint, gate: a.gate });
        }
      }
    },
    unavailable: (reason, count) => m.unavailable.inc({ reason }, count),
    settled: (overrun) => {
      if (overrun) m.overruns.inc();
    },
    expired: (count) => m.expired.inc(count),
    refusalLogFailed: (count) => m.refusalLogFailures.inc(count),
  };
}

const holder = globalThis as typeof globalThis & { __ceilingsMetrics?: Metrics };

/** This process's metrics, created and wired to enforcement on first use. */
export function metrics(process: "app" | "worker" = "app"): Metrics {
  if (!holder.__ceilingsMetrics) {
    holder.__ceilingsMetrics = build(process);
    setEnforcementObserver(observerFor(holder.__ceilingsMetrics));
  }
  return holder.__ceilingsMetrics;
}
