import { type IncomingMessage, Server, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import { securityHeaders } from "@/lib/security/headers";
import { answerMethod, FETCH_FORBIDDEN_METHODS, type MethodAnswer } from "./methods";

// TRACE on any path answered 500 and logged a stack trace ("'TRACE' HTTP method is unsupported"):
// Next builds a fetch Request of every request before proxy.ts or a route runs, and the Fetch
// standard forbids TRACE, so no code of ours ever saw it. This guard answers such methods on the
// Node server itself, before Next's request listener: 405 with the path's Allow (404 for a path
// under /api that no route answers), the security headers, no stack trace. CONNECT arrives as the
// server's 'connect' event, which Node answers by dropping the connection when nothing listens;
// the guard listens and answers 405 too. Node's parser itself refuses made-up methods and TRACK
// with a 400 before any of this. instrumentation.ts installs the guard when the server starts.

const GUARDED = Symbol.for("ceilings.methodGuard");

type Emit = (this: Server, event: string | symbol, ...args: unknown[]) => boolean;
type Guardable = { emit: Emit; [GUARDED]?: true };

/** Whether the request came over https, to this server or to the proxy in front of it. */
export function isHttps(req: IncomingMessage): boolean {
  const forwarded = req.headers["x-forwarded-proto"];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim();
  return proto === "https" || ("encrypted" in req.socket && req.socket.encrypted === true);
}

/** The answer to a method Next cannot carry, for the request's path. */
export function forbiddenMethodAnswer(req: IncomingMessage): MethodAnswer {
  const target = req.url ?? "/";
  // CONNECT names a host and port, not a path: this server is no proxy, so the site's root answers.
  const pathname = target.startsWith("/") ? new URL(target, "http://localhost").pathname : "/";
  const answer = answerMethod(pathname, req.method ?? "") ?? { status: 405, headers: { allow: "GET, HEAD" }, body: "" };
  const headers = { ...securityHeaders({ https: isHttps(req) }), ...answer.headers };
  return { ...answer, headers };
}

function refuse(req: IncomingMessage, res: ServerResponse): void {
  const answer = forbiddenMethodAnswer(req);
  res.writeHead(answer.status, { ...answer.headers, "content-length": String(Buffer.byteLength(answer.body)) });
  res.end(answer.body);
}

const REASONS: Record<number, string> = { 204: "No Content", 404: "Not Found", 405: "Method Not Allowed" };

function refuseConnect(req: IncomingMessage, socket: Duplex): void {
  const answer = forbiddenMethodAnswer(req);
  const lines = Object.entries({ ...answer.headers, "content-length": String(Buffer.byteLength(answer.body)), connection: "close" }).map(
    ([name, value]) => `${name}: ${value}\r\n`,
  );
  socket.on("error", () => socket.destroy());
  socket.end(`HTTP/1.1 ${answer.status} ${REASONS[answer.status] ?? ""}\r\n${lines.join("")}\r\n${answer.body}`);
}

/**
 * Answers the methods Next cannot carry on every server made from `target` (a server, or a
 * server class's prototype), before any 'request' listener runs. Installing twice is harmless.
 */
export function guardMethods(target: Server | object): void {
  const guardable = target as Guardable;
  if (guardable[GUARDED]) return;
  const emit = guardable.emit;
  guardable.emit = function guardedEmit(this: Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === "request") {
      const [req, res] = args as [IncomingMessage, ServerResponse];
      if (FETCH_FORBIDDEN_METHODS.has(req.method ?? "")) {
        refuse(req, res);
        return true;
      }
    } else if (event === "connection" && this.listenerCount("connect") === 0) {
      // Before the socket's first request is parsed: Node answers CONNECT only when someone listens.
      this.on("connect", refuseConnect);
    }
    return emit.call(this, event, ...args);
  };
  guardable[GUARDED] = true;
}

/** The guard on every node:http server of this process, including the one `next start` made. */
export function installMethodGuard(): void {
  guardMethods(Server.prototype);
}
