import { isIP } from "node:net";
import { parseArgs } from "node:util";

export const USAGE = `usage: npm run demo:traffic -- [--base-url http://localhost:3000] [--seconds 60] [--rate 3] [--api-key ck_...] [--max-requests 5000]
  --base-url      the running dashboard; loopback addresses only (localhost, 127.0.0.0/8, ::1)
  --seconds       how long to drive traffic, 5 to 600 (default 60)
  --rate          steady subscribes a second, 1 to 20 (default 3)
  --api-key       an API key allowed to use llm.chat; without it the HTTP API part is skipped
  --max-requests  hard cap on requests of every kind together, 10 to 20000 (default 5000)`;

export class TrafficArgsError extends Error {
  override name = "TrafficArgsError";
}

export type TrafficArgs = { baseUrl: URL; seconds: number; rate: number; apiKey: string | null; maxRequests: number; help: boolean };

function whole(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new TrafficArgsError(`--${name} must be a whole number, got '${raw}'`);
  const n = Number(raw);
  if (n < min || n > max) throw new TrafficArgsError(`--${name} must be from ${min} to ${max}, got ${n}`);
  return n;
}

/** True for names and addresses that can only reach this machine. */
export function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  if (isIP(host) === 4) return host.startsWith("127.");
  if (isIP(host) === 6) return host === "::1" || host === "0:0:0:0:0:0:0:1" || /^::ffff:127\./.test(host);
  return false;
}

export function parseTrafficArgs(argv: readonly string[]): TrafficArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        "base-url": { type: "string" },
        seconds: { type: "string" },
        rate: { type: "string" },
        "api-key": { type: "string" },
        "max-requests": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new TrafficArgsError(error instanceof Error ? error.message : String(error));
  }
  let baseUrl: URL;
  try {
    baseUrl = new URL(values["base-url"] ?? "http://localhost:3000");
  } catch {
    throw new TrafficArgsError(`--base-url is not a URL: '${values["base-url"]}'`);
  }
  if (baseUrl.protocol !== "http:" && baseUrl.protocol !== "https:") throw new TrafficArgsError("--base-url must be http:// or https://");
  // Demo traffic is load: it must never be pointed at somebody else's server.
  if (!isLoopback(baseUrl.hostname)) throw new TrafficArgsError(`--base-url must be a loopback address, got '${baseUrl.hostname}'`);
  const apiKey = values["api-key"]?.trim() || null;
  return {
    baseUrl,
    seconds: whole("seconds", values.seconds, 60, 5, 600),
    rate: whole("rate", values.rate, 3, 1, 20),
    apiKey,
    maxRequests: whole("max-requests", values["max-requests"], 5000, 10, 20_000),
    help: values.help ?? false,
  };
}
