import { createServer, type IncomingMessage, type Server } from "node:http";
import type { ApiDeps } from "./deps";
import { handleEndpointStatus } from "./status-handler";
import { handleReserve } from "./reserve-handler";
import { handleResolve } from "./resolve-handler";

// The real route handlers of /api/v1 behind a real HTTP server on loopback, for tests of clients
// that speak HTTP (the packaged client): no Next build needed, same code as the routes run.

export type SeenRequest = { method: string; path: string; body: string };

export type TestApiServer = {
  url: string;
  /** Every request as it arrived, in order. */
  seen: SeenRequest[];
  close(): Promise<void>;
};

async function readAll(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString("utf8");
}

function route(request: Request, path: string, deps: ApiDeps): Promise<Response> {
  if (request.method === "POST" && path === "/api/v1/reservations") return handleReserve(request, deps);
  const resolve = /^\/api\/v1\/reservations\/([^/]+)\/(settle|release)$/.exec(path);
  if (request.method === "POST" && resolve?.[1] && (resolve[2] === "settle" || resolve[2] === "release")) {
    return handleResolve(request, decodeURIComponent(resolve[1]), resolve[2], deps);
  }
  const status = /^\/api\/v1\/endpoints\/([^/]+)$/.exec(path);
  if (request.method === "GET" && status?.[1]) return handleEndpointStatus(request, decodeURIComponent(status[1]), deps);
  return Promise.resolve(Response.json({ error: { code: "not_found", message: "no such route" } }, { status: 404 }));
}

/** `deps` is called per request, so a test can switch the database (e.g. to a dead one) between calls. */
export async function startTestApiServer(deps: (seen: SeenRequest[]) => ApiDeps): Promise<TestApiServer> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req, res) => {
    void (async () => {
      const body = await readAll(req);
      const url = new URL(req.url ?? "/", "http://127.0.0.1");
      seen.push({ method: req.method ?? "GET", path: url.pathname, body });
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === "string") headers.set(k, v);
      const request = new Request(url, { method: req.method, headers, body: req.method === "GET" || body === "" ? undefined : body });
      const response = await route(request, url.pathname, deps(seen));
      res.statusCode = response.status;
      response.headers.forEach((value, key) => res.setHeader(key, value));
      res.end(Buffer.from(await response.arrayBuffer()));
    })().catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
