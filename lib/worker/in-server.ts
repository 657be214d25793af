import { getDb } from "@/db/client";
import { env, type Env } from "@/lib/env";
import { runWorker } from "./loop";
import { workerSettings } from "./settings";
import { logError } from "@/lib/log/redact";

// On the embedded database only one process may hold the data folder, so the jobs run inside the
// Next server. Next may load this module more than once per process: the flag lives on globalThis.
const holder = globalThis as typeof globalThis & { __ceilingsWorker?: AbortController };

/** Whether the server runs the jobs itself: always on the embedded database unless turned off. */
export function shouldRunInServer(e: Pick<Env, "WORKER_IN_SERVER" | "DATABASE_URL">): boolean {
  if (e.WORKER_IN_SERVER === "auto") return e.DATABASE_URL === undefined;
  return e.WORKER_IN_SERVER === "true";
}

/** Starts the loop once per process, in the background. Returns false when it was already running. */
export function startWorkerInServer(): boolean {
  if (holder.__ceilingsWorker) return false;
  const controller = new AbortController();
  holder.__ceilingsWorker = controller;
  const settings = workerSettings(env(), "server");
  void (async () => {
    const db = await getDb();
    console.log(`ceilings: worker ${settings.name} running inside the server (every ${settings.intervalMs} ms)`);
    await runWorker(db, settings, controller.signal);
  })().catch((error: unknown) => {
    logError("ceilings: the in-server worker stopped", error);
    holder.__ceilingsWorker = undefined;
  });
  return true;
}
