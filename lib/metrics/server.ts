import { createServer, type Server } from "node:http";
import type { Db } from "@/db/client";
import { checkMetricsAccess } from "./access";
import { refreshDatabaseGauges } from "./collect";
import type { Metrics } from "./registry";

// The worker's metrics on a port of its own (the worker is a separate process: a push to the app
// would lose counts whenever the app restarts, and Prometheus prefers to pull). Bound to
// 127.0.0.1 unless a host is given; METRICS_TOKEN, when set, is required here too.

export type MetricsServer = { url: string; close(): Promise<void> };

export async function startMetricsServer(p: { metrics: Metrics; db: () => Promise<Db>; port: number; host?: string; token?: string }): Promise<MetricsServer> {
  const host = p.host ?? "127.0.0.1";
  const server: Server = createServer((req, res) => {
    void (async () => {
      if (req.url !== "/metrics") {
        res.statusCode = 404;
        return res.end("not found\n");
      }
      const remote = req.socket.remoteAddress ?? "";
      const loopbackSocket = remote === "127.0.0.1" || remote === "::1" || remote === "::ffff:127.0.0.1";
      const access = checkMetricsAccess(req.headers.authorization ?? null, p.token, { loopbackSocket });
      if (!access.ok) {
        res.statusCode = access.status;
        return res.end(`${access.message}\n`);
      }
      try {
        await refreshDatabaseGauges(await p.db(), p.metrics);
      } catch (error) {
        // Counters still answer when the database does not; the gauges keep their last values.
        console.error("metrics: database gauges failed", error);
      }
      res.setHeader("content-type", p.metrics.registry.contentType);
      res.end(await p.metrics.registry.metrics());
    })().catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(p.port, host, resolve);
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : p.port;
  return { url: `http://${host}:${port}/metrics`, close: () => new Promise((r) => server.close(() => r())) };
}
