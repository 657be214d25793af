import type { ApiDeps } from "./deps";
import { startApiServer } from "./api-server";

// The API server (api-server.ts) on a free loopback port, recording what arrived: for tests and
// walkthroughs of clients that speak HTTP. `deps` is asked per request, so a test can switch the
// database between calls.

export type SeenRequest = { method: string; path: string; body: string };

export type TestApiServer = { url: string; seen: SeenRequest[]; close(): Promise<void> };

export async function startTestApiServer(deps: (seen: SeenRequest[]) => ApiDeps): Promise<TestApiServer> {
  const seen: SeenRequest[] = [];
  const perRequest: ApiDeps = {
    db: () => deps(seen).db(),
  };
  const running = await startApiServer({ deps: perRequest, port: 0, host: "127.0.0.1", observe: (r) => seen.push(r) });
  return { url: running.url, seen, close: running.close };
}
