import type { Db } from "@/db/client";
import { raiseSilentWorkers, writeHeartbeat } from "@/lib/alerts";
import { jobs as defaultJobs, fastJobs, pullJobs, type Job } from "./jobs";
import type { WorkerSettings } from "./settings";
import { logError } from "@/lib/log/redact";

export type JobOutcome = { job: string; ok: boolean; result?: Record<string, unknown>; error?: string };
/** lastRun: when each job last ran; fastFailed: the fast lane's last failure per job, until it succeeds. */
export type WorkerState = { lastRun: Map<string, number>; fastFailed: Map<string, string> };

export function newWorkerState(): WorkerState {
  return { lastRun: new Map(), fastFailed: new Map() };
}

function failure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * One loop: every job that is due, each on its own so one failing job does not stop the others,
 * then the heartbeat with what happened.
 */
export async function runWorkerOnce(db: Db, s: WorkerSettings, state: WorkerState = newWorkerState(), jobs: Job[] = defaultJobs): Promise<JobOutcome[]> {
  const outcomes: JobOutcome[] = [];
  for (const job of jobs) {
    const now = Date.now();
    const last = state.lastRun.get(job.name);
    if (last !== undefined && now - last < job.everyMs(s)) continue;
    state.lastRun.set(job.name, now);
    try {
      outcomes.push({ job: job.name, ok: true, result: await job.run(db, s, new Date(now)) });
    } catch (error) {
      logError(`worker ${s.name}: job ${job.name} failed`, error);
      outcomes.push({ job: job.name, ok: false, error: failure(error) });
    }
  }
  // The fast lane writes no heartbeat of its own: its failures ride on the loop's.
  const failed = [...outcomes.filter((o) => !o.ok).map((o) => `${o.job}: ${o.error}`), ...[...state.fastFailed].map(([job, error]) => `fast ${job}: ${error}`)];
  const detail = JSON.stringify({ pid: process.pid, failed, ran: outcomes.map((o) => o.job) }).slice(0, 2000);
  try {
    await writeHeartbeat(db, { name: s.name, detail });
  } catch (error) {
    // A database that cannot take the heartbeat is the silence the others will alert on.
    logError(`worker ${s.name}: heartbeat failed`, error);
  }
  return outcomes;
}

/**
 * One pass of the fast lane: the jobs that promise their time within seconds (due schedules, raise
 * ends), each on its own. A failure is logged and kept for the loop's next heartbeat.
 */
export async function runFastLaneOnce(db: Db, s: WorkerSettings, state: WorkerState = newWorkerState(), jobs: Job[] = fastJobs): Promise<JobOutcome[]> {
  const outcomes: JobOutcome[] = [];
  for (const job of jobs) {
    try {
      outcomes.push({ job: job.name, ok: true, result: await job.run(db, s, new Date()) });
      state.fastFailed.delete(job.name);
    } catch (error) {
      logError(`worker ${s.name}: fast job ${job.name} failed`, error);
      state.fastFailed.set(job.name, failure(error));
      outcomes.push({ job: job.name, ok: false, error: failure(error) });
    }
  }
  return outcomes;
}

/** A lane beside the loop: its jobs every periodMs, their failures kept for the loop's heartbeat. */
async function runLane(db: Db, s: WorkerSettings, state: WorkerState, signal: AbortSignal, jobs: Job[], periodMs: number): Promise<void> {
  while (!signal.aborted) {
    const started = Date.now();
    await runFastLaneOnce(db, s, state, jobs);
    await sleep(Math.max(0, periodMs - (Date.now() - started)), signal);
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done);
  });
}

/**
 * Runs the loop until the signal aborts, the fast lane beside it every fastIntervalMs, and the
 * usage pulls in a lane of their own every intervalMs. On start, a heartbeat already stale (this worker's own
 * included) is raised as an alert: the previous run went silent before this one began.
 */
export async function runWorker(db: Db, s: WorkerSettings, signal: AbortSignal): Promise<void> {
  try {
    await raiseSilentWorkers(db, { silentAfterSeconds: s.silentAfterSeconds });
  } catch (error) {
    logError(`worker ${s.name}: could not check earlier heartbeats`, error);
  }
  const state = newWorkerState();
  // Beside the loop, not inside it: a slow delivery or reconcile must not hold a due schedule back,
  // and a provider slow to answer a pull must hold back neither.
  const fast = runLane(db, s, state, signal, fastJobs, s.fastIntervalMs);
  const pulls = runLane(db, s, state, signal, pullJobs, s.intervalMs);
  while (!signal.aborted) {
    const started = Date.now();
    await runWorkerOnce(db, s, state);
    await sleep(Math.max(0, s.intervalMs - (Date.now() - started)), signal);
  }
  await Promise.all([fast, pulls]);
}
