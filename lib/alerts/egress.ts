import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { BlockList, isIP, type LookupFunction } from "node:net";
import { redact } from "@/lib/log/redact";
import { DomainError } from "@/lib/errors";

// Webhook destinations are URLs an admin types, fetched by the worker from inside the network: left
// alone they reach the app's own API, the database host or the cloud metadata service. Every
// address a destination resolves to is checked when it is saved, and again on the very socket a
// delivery opens (the check runs inside the connection's DNS lookup), so a name that resolves to a
// public address at save time and to 127.0.0.1 later (DNS rebinding) is refused at delivery.

const blocked = new BlockList();
for (const [net, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local, cloud metadata (169.254.169.254)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(net, prefix, "ipv4");
}
for (const [net, prefix] of [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["fc00::", 7], // unique local, incl. the metadata service's fd00:ec2::254
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
  ["64:ff9b::", 96], // NAT64 onto IPv4, checked as IPv4 would be
] as const) {
  blocked.addSubnet(net, prefix, "ipv6");
}

/** Whether an address is loopback, link-local, private, metadata or otherwise not the internet. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, "ipv4");
  if (family === 6) {
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
    if (mapped) return blocked.check(mapped, "ipv4");
    return blocked.check(address, "ipv6");
  }
  return true;
}

export type EgressPolicy = {
  /** Hosts (lower-case names or literal addresses) allowed although they resolve inside: ALERT_WEBHOOK_ALLOW_HOSTS. */
  allowHosts: readonly string[];
  /** DNS resolution; tests substitute one to play a rebinding resolver. */
  resolve?: (host: string) => Promise<string[]>;
};

export class EgressRefused extends DomainError<"egress_refused"> {
  override name = "EgressRefused";
  constructor(message: string) {
    super("egress_refused", message);
  }
}

export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
}

export function isAllowed(host: string, policy: EgressPolicy): boolean {
  return policy.allowHosts.some((h) => h.toLowerCase() === host);
}

const systemResolve = (host: string): Promise<string[]> =>
  new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses: LookupAddress[]) => (error ? reject(error) : resolve(addresses.map((a) => a.address))));
  });

/**
 * The addresses of `host`, every one outside the network. `refuseUnresolved`: a lookup that fails is
 * refused too (a usage pull); otherwise its error passes as it is (a webhook saved before its name
 * resolves: every delivery checks again).
 */
export async function resolveChecked(host: string, policy: EgressPolicy, opts: { refuseUnresolved?: boolean } = {}): Promise<string[]> {
  if (isIP(host)) {
    if (isForbiddenAddress(host)) throw new EgressRefused(`${host} is a loopback, link-local, private or metadata address`);
    return [host];
  }
  let addresses: string[];
  try {
    addresses = await (policy.resolve ?? systemResolve)(host);
  } catch (error) {
    if (!opts.refuseUnresolved) throw error;
    throw new EgressRefused(
      `${host} could not be resolved (${error instanceof Error ? ((error as { code?: unknown }).code ?? error.message) : String(error)}), so it is not reached`,
    );
  }
  if (addresses.length === 0) throw new EgressRefused(`${host} does not resolve`);
  const bad = addresses.find(isForbiddenAddress);
  if (bad) throw new EgressRefused(`${host} resolves to ${bad}, a loopback, link-local, private or metadata address`);
  return addresses;
}

/**
 * The lookup of one connection to `url`, through the egress check, so the address connected to is
 * the address checked: an allow-listed host resolves as it is, any other is checked per connection.
 * Node skips the lookup for a literal address, so a forbidden one is refused here (throws).
 */
export function checkedLookup(url: URL, policy: EgressPolicy, opts: { refuseUnresolved?: boolean } = {}): LookupFunction {
  const host = hostOf(url);
  const allowed = isAllowed(host, policy);
  if (!allowed && isIP(host) && isForbiddenAddress(host)) throw new EgressRefused(`${host} is a loopback, link-local, private or metadata address`);
  return (hostname, options, callback) => {
    const name = hostname.replace(/^\[|\]$/g, "");
    const resolving = allowed ? (policy.resolve ?? systemResolve)(name) : resolveChecked(name, policy, opts);
    resolving
      .then((addresses) => {
        const address = addresses[0] ?? "";
        const family = isIP(address) === 6 ? 6 : 4;
        if (options.all) callback(null, [{ address, family }]);
        else callback(null, address, family);
      })
      .catch((error: unknown) => callback(error instanceof Error ? error : new Error(String(error)), "", 4));
  };
}

/** At save time: refuses a destination whose host is or resolves to an inside address. */
export async function checkDestinationUrl(target: string, policy: EgressPolicy): Promise<void> {
  const url = new URL(target);
  const host = hostOf(url);
  if (isAllowed(host, policy)) return;
  try {
    await resolveChecked(host, policy);
  } catch (error) {
    // A name that does not resolve yet is saved: every delivery checks the address it connects
    // to, so it can never reach inside later either. One that resolves inside is refused now.
    if (error instanceof EgressRefused) throw error;
  }
}

/** The longest response excerpt kept: enough to tell a receiver's error, too little to exfiltrate. */
export const MAX_EXCERPT = 120;

/** A response body cut to a short single line of printable text, personal data masked. */
export function sanitiseExcerpt(body: string): string {
  const printable = body
    .replace(/[^\x20-\x7E]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  const cut = printable.length > MAX_EXCERPT ? `${printable.slice(0, MAX_EXCERPT)}…` : printable;
  return redact(cut);
}

export type PostResult = { status: number; excerpt: string };

/**
 * POSTs to a destination, refusing at connect time any address the checks above refuse, and
 * reads at most a few KB of the answer. Redirects are not followed.
 */
export function postChecked(
  target: string,
  body: string,
  headers: Record<string, string>,
  opts: { policy: EgressPolicy; timeoutMs: number },
): Promise<PostResult> {
  const url = new URL(target);
  let lookup: LookupFunction;
  try {
    lookup = checkedLookup(url, opts.policy);
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  const options: RequestOptions = {
    method: "POST",
    headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
    lookup,
    timeout: opts.timeoutMs,
  };
  return new Promise((resolve, reject) => {
    const req = send(url, options, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        if (size < 4096) chunks.push(chunk);
        size += chunk.length;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, excerpt: sanitiseExcerpt(Buffer.concat(chunks).toString("utf8")) }));
      res.on("error", reject);
    });
    req.on("timeout", () => req.destroy(Object.assign(new Error("timed out"), { name: "TimeoutError" })));
    req.on("error", reject);
    req.end(body);
  });
}

/** The egress policy of this server: ALERT_WEBHOOK_ALLOW_HOSTS, comma-separated. */
export function egressPolicyFrom(allowHosts: string | undefined): EgressPolicy {
  return {
    allowHosts: (allowHosts ?? "")
      .split(",")
      .map((h) => h.trim().toLowerCase())
      .filter((h) => h.length > 0),
  };
}
