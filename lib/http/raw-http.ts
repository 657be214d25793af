import { connect } from "node:net";

// For tests: one HTTP/1.1 request written as bytes and its answer read until the server closes.
// fetch (undici) refuses TRACE, TRACK and CONNECT, and Node's client gives CONNECT a tunnel of its
// own; the method tests (app/http-methods.test.ts, e2e/http-methods.spec.ts) need all of them.

export type RawAnswer = { status: number; headers: Record<string, string>; body: string };

function dechunk(body: string): string {
  let out = "";
  let rest = body;
  for (;;) {
    const eol = rest.indexOf("\r\n");
    if (eol < 0) return out;
    const size = Number.parseInt(rest.slice(0, eol), 16);
    if (!Number.isFinite(size) || size === 0) return out;
    out += rest.slice(eol + 2, eol + 2 + size);
    rest = rest.slice(eol + 2 + size + 2);
  }
}

/** `target` as sent: a path ("/api/health?x=1") or, for CONNECT, "host:port". */
export function rawRequest(port: number, method: string, target: string, headers: Record<string, string> = {}, host = "127.0.0.1"): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const lines = Object.entries({ host: `${host}:${port}`, connection: "close", "content-length": "0", ...headers }).map(([k, v]) => `${k}: ${v}\r\n`);
    const socket = connect(port, host, () => socket.write(`${method} ${target} HTTP/1.1\r\n${lines.join("")}\r\n`));
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("error", reject);
    socket.setTimeout(30_000, () => socket.destroy(new Error(`${method} ${target}: no answer in 30 s`)));
    socket.on("close", () => {
      const data = Buffer.concat(chunks).toString("utf8");
      const split = data.indexOf("\r\n\r\n");
      const head = split < 0 ? data : data.slice(0, split);
      const [statusLine = "", ...headerLines] = head.split("\r\n");
      const answer: Record<string, string> = {};
      for (const line of headerLines) {
        const at = line.indexOf(":");
        if (at > 0) answer[line.slice(0, at).trim().toLowerCase()] = line.slice(at + 1).trim();
      }
      const body = split < 0 ? "" : data.slice(split + 4);
      resolve({ status: Number(statusLine.split(" ")[1] ?? 0), headers: answer, body: answer["transfer-encoding"] === "chunked" ? dechunk(body) : body });
    });
  });
}
