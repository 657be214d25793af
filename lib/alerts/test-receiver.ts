import { createServer, type IncomingHttpHeaders } from "node:http";

// A real HTTP receiver on 127.0.0.1 and a random port, for delivery tests: it answers 500 to the
// first `failFirst` requests and 200 after, and keeps every request it saw.

export type Received = { headers: IncomingHttpHeaders; body: string; status: number };

export type TestReceiver = {
  url: string;
  received: Received[];
  /** Requests answered 2xx, i.e. deliveries that counted. */
  accepted: () => Received[];
  close: () => Promise<void>;
};

export async function startReceiver(opts: { failFirst?: number; delayMs?: number } = {}): Promise<TestReceiver> {
  const received: Received[] = [];
  let seen = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      seen += 1;
      const status = seen <= (opts.failFirst ?? 0) ? 500 : 200;
      const reply = () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), status });
        res.writeHead(status, { "Content-Type": "text/plain" }).end(status === 200 ? "ok" : "receiver is down");
      };
      if (opts.delayMs) setTimeout(reply, opts.delayMs);
      else reply();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("receiver did not bind a TCP port");
  const { port } = address;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    received,
    accepted: () => received.filter((r) => r.status === 200),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
