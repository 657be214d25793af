import { openSync, writeSync } from "node:fs";
import { closeDb, getEnforcementDb } from "@/db/client";
import { CeilingsError, createCeilingsClient } from "@/lib/client";
import { releaseReservation, reserve, ReservationInputError, settleReservation, unavailableCounts } from "@/lib/enforcement";

// One client process of the chaos test (scripts/ha/chaos.ts): `loops` concurrent callers reserve,
// then settle, release or keep their reservations, through the enforcement pool the app uses
// (getEnforcementDb on DATABASE_URL, the multi-host URL) with batching on. Every answer a caller
// was given is appended to the record file with a synchronous write before the caller goes on,
// so a grant the process was told about is on disk even if the process dies the next moment.
//
// Usage: tsx scripts/ha/chaos-worker.ts <name> <record file> <endpoints, comma-separated> <loops>
// "mark" on stdin starts counting unavailable answers afresh; "stop" stops it. Prints a JSON
// summary on stdout. With CHAOS_API_URL and CHAOS_API_KEY (a trusted key) it is a service in
// another repository instead: the same calls through the client package over HTTP, to the API
// server (npm run api) on the cluster.

/** A settle's or release's answer; the library's unavailable says whether it may have been applied. */
type Resolved = { status: string; reason?: string; mayHaveApplied?: boolean };

/** " true" or " false" after an unavailable answer that says whether it may have been applied (the checker verifies false), else "". */
const applied = (r: Resolved) => (r.status === "unavailable" && r.mayHaveApplied !== undefined ? ` ${String(r.mayHaveApplied)}` : "");

/** What a caller does, through the library or over HTTP, in the library's terms. */
type Calls = {
  reserve(p: {
    endpoint: string;
    amount: number;
    caller: string;
    requestId: string;
  }): Promise<{ status: "granted"; reservationId: string } | { status: "refused"; gate: string; reason?: string } | { status: "other" }>;
  settle(id: string, actual: number): Promise<Resolved>;
  release(id: string): Promise<Resolved>;
  /** Unavailable answers so far, by reason. */
  unavailable(): Readonly<Record<string, number>>;
  close(): Promise<void>;
};

async function libraryCalls(): Promise<Calls> {
  const db = await getEnforcementDb();
  return {
    async reserve(p) {
      const d = await reserve(db, { ...p, ttlSeconds: 3600 });
      return d.status === "resolved" ? { status: "other" } : d;
    },
    settle: (id, actual) => settleReservation(db, { reservationId: id, actual }),
    release: (id) => releaseReservation(db, { reservationId: id }),
    unavailable: () => unavailableCounts(),
    close: closeDb,
  };
}

function httpCalls(baseUrl: string, apiKey: string): Calls {
  const client = createCeilingsClient({ baseUrl, apiKey, deadlineMs: 2000 });
  const counts: Record<string, number> = {};
  const count = <T extends { status: string; reason?: string; serverReason?: string }>(answer: T): T => {
    if (answer.status === "unavailable" || ("gate" in answer && answer.gate === "unavailable")) {
      // A 503 is "server" to the client, with the API's own reason beside it ("deadline",
      // "connection"), counted as the library counts it: a slow answer under load is not a pool
      // left on a standby.
      const reason = answer.serverReason ?? answer.reason ?? "unknown";
      counts[reason] = (counts[reason] ?? 0) + 1;
    }
    return answer;
  };
  return {
    async reserve(p) {
      try {
        return count(await client.reserve({ endpoint: p.endpoint, amount: p.amount, caller: p.caller, ttlSeconds: 3600 }));
      } catch (error) {
        // A 4xx is the caller's input, as ReservationInputError is for the library.
        if (error instanceof CeilingsError) throw new ReservationInputError("invalid_input", error.message);
        throw error;
      }
    },
    settle: async (id, actual) => count(await client.settle(id, actual)),
    release: async (id) => count(await client.release(id)),
    unavailable: () => ({ ...counts }),
    close: async () => {},
  };
}

type Summary = {
  reserves: number;
  granted: number;
  unavailable: number;
  refused: number;
  settled: number;
  released: number;
  settleUnavailable: number;
  inputErrors: number;
  unavailableReasons: Record<string, number>;
  /** Unavailable answers by reason after "mark": the cluster is healthy again by then. */
  afterRecovery: Record<string, number>;
};

async function main(): Promise<void> {
  const [name, recordFile, endpointList, loopsArg] = process.argv.slice(2);
  if (!name || !recordFile || !endpointList || !loopsArg) throw new Error("usage: <name> <record file> <endpoints> <loops>");
  const endpoints = endpointList.split(",");
  const fd = openSync(recordFile, "a");
  const record = (line: string) => writeSync(fd, line + "\n");
  const summary: Summary = {
    reserves: 0,
    granted: 0,
    unavailable: 0,
    refused: 0,
    settled: 0,
    released: 0,
    settleUnavailable: 0,
    inputErrors: 0,
    unavailableReasons: {},
    afterRecovery: {},
  };
  const apiUrl = process.env.CHAOS_API_URL;
  const apiKey = process.env.CHAOS_API_KEY;
  const calls = apiUrl && apiKey ? httpCalls(apiUrl, apiKey) : await libraryCalls();
  let marked: Readonly<Record<string, number>> | undefined;
  let stopping = false;
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (chunk: string) => {
    if (chunk.includes("mark")) marked = calls.unavailable();
    if (chunk.includes("stop")) stopping = true;
  });

  const caller = async (loop: number) => {
    let n = 0;
    while (!stopping) {
      n++;
      const endpoint = endpoints[(loop + n) % endpoints.length] ?? endpoints[0] ?? "";
      const amount = 1 + Math.floor(Math.random() * 10);
      summary.reserves++;
      let decision;
      try {
        decision = await calls.reserve({ endpoint, amount, caller: name, requestId: `${name}-${loop}-${n}` });
      } catch (error) {
        if (!(error instanceof ReservationInputError)) throw error;
        summary.inputErrors++;
        continue;
      }
      if (decision.status === "granted") {
        // Recorded before anything else is done with it: this is the promise the checker holds
        // the cluster to.
        record(`G ${decision.reservationId} ${endpoint} ${amount} ${Date.now()}`);
        summary.granted++;
        const roll = Math.random();
        if (roll < 0.5) {
          const actual = Math.floor(Math.random() * (amount + 1));
          const result = await calls.settle(decision.reservationId, actual);
          record(`S ${decision.reservationId} ${actual} ${result.status}${applied(result)}`);
          if (result.status === "settled") summary.settled++;
          else if (result.status === "unavailable") summary.settleUnavailable++;
        } else if (roll < 0.8) {
          const result = await calls.release(decision.reservationId);
          record(`R ${decision.reservationId} ${result.status}${applied(result)}`);
          if (result.status === "released") summary.released++;
          else if (result.status === "unavailable") summary.settleUnavailable++;
        }
        // The rest stay held: held units count against the ceiling like settled ones.
      } else if (decision.status === "refused" && decision.gate === "unavailable") {
        summary.unavailable++;
        // A client backing off a little, as a real one would, instead of spinning.
        await new Promise((r) => setTimeout(r, 25));
      } else {
        summary.refused++;
        await new Promise((r) => setTimeout(r, 5));
      }
    }
  };
  process.stdout.write("ready\n");
  await Promise.all(Array.from({ length: Number(loopsArg) }, (_, i) => caller(i)));
  const now: Record<string, number> = { ...calls.unavailable() };
  summary.unavailableReasons = Object.fromEntries(Object.entries(now).filter(([, v]) => v > 0));
  if (marked) {
    const before = marked;
    summary.afterRecovery = Object.fromEntries(
      Object.entries(now)
        .map(([k, v]) => [k, v - (before[k] ?? 0)] as const)
        .filter(([, v]) => v > 0),
    );
  }
  await calls.close();
  process.stdout.write(JSON.stringify(summary) + "\n");
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
