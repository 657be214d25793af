import net from "node:net";
import postgres from "postgres";

// Which host of a multi-host URL is the primary, asked once at a time per process and shared by
// every pool on that URL (db/multi-host.ts explains why postgres.js cannot be left to choose).
// A discovery asks the last known primary first and, only if it does not answer as primary, every
// host in parallel, taking the first that does; each question is bounded well inside the
// enforcement deadline, and every socket a question or a pool no longer needs is destroyed, so a
// host that accepts TCP and never answers costs one probe timeout, not a connection.

type HostPort = { host: string; port: number };

export function parseHost(h: string): HostPort {
  const match = /^(.*?)(?::(\d+))?$/.exec(h);
  return { host: match?.[1] || "localhost", port: Number(match?.[2] ?? 5432) };
}

/** The same URL naming one host, without target_session_attrs (meaningless for one host). */
export function singleHostUrl(url: string, host: string): string {
  const schemeEnd = url.indexOf("://") + 3;
  const authority = url.slice(schemeEnd).split(/[/?]/)[0] ?? "";
  const at = authority.lastIndexOf("@");
  const rest = url.slice(schemeEnd + authority.length);
  const q = rest.indexOf("?");
  let tail = rest;
  if (q >= 0) {
    const params = new URLSearchParams(rest.slice(q + 1));
    params.delete("target_session_attrs");
    tail = rest.slice(0, q) + (params.size > 0 ? `?${params.toString()}` : "");
  }
  return `${url.slice(0, schemeEnd)}${at >= 0 ? authority.slice(0, at + 1) : ""}${host}${tail}`;
}

/** A TCP connection to `target` whose late errors (a reset after postgres.js let go of it) are harmless. */
export function connectTo(target: string): net.Socket {
  const { host, port } = parseHost(target);
  const socket = net.connect(port, host);
  // postgres.js listens for errors while it uses the socket and drops every listener when it
  // closes it; an error arriving after that (a reset from a killed server) would otherwise
  // crash the process.
  socket.on("error", () => undefined);
  return socket;
}

/**
 * A socket that fails with `code` (classified as a connection failure). Destroyed at once: called
 * after an await, the error and close events come on the next tick, once postgres.js listens;
 * its startup write to the dead socket is dropped. The error (not a bare close) matters: a socket
 * that closes while its first query waits makes postgres.js reconnect instead of failing it.
 */
export function failedSocket(code: string, message: string): net.Socket {
  const socket = new net.Socket();
  socket.on("error", () => undefined);
  socket.destroy(Object.assign(new Error(message), { code }));
  return socket;
}

export type Role = "primary" | "standby" | "unreachable";

/** What `host` is now, asked on a connection of its own, given up after `timeoutMs` or when `stop` fires. */
async function roleOf(url: string, host: string, timeoutMs: number, stop: AbortSignal): Promise<Role> {
  if (stop.aborted) return "unreachable";
  // Connected only when postgres.js asks, so that it listens before a refusal can arrive; any
  // later ask (it retries a closed start-up) fails.
  let socket: net.Socket | undefined;
  let gaveUp = false;
  // Destroyed with an error: postgres.js then fails the question instead of reconnecting.
  const give = (why: string) => {
    gaveUp = true;
    socket?.destroy(Object.assign(new Error(why), { code: "CONNECTION_PROBE_ABANDONED" }));
  };
  const timer = setTimeout(() => give("probe timed out"), timeoutMs);
  const onStop = () => give("probe no longer needed");
  stop.addEventListener("abort", onStop, { once: true });
  // (postgres.js's types do not list its documented `socket` option.)
  const ours = {
    socket: async () => {
      await null;
      if (socket || gaveUp) return failedSocket("CONNECTION_PROBE_ABANDONED", "probe gave up");
      socket = connectTo(host);
      return socket;
    },
  };
  const probe = postgres(singleHostUrl(url, host), {
    max: 1,
    connect_timeout: Math.ceil(timeoutMs / 1000) + 1,
    fetch_types: false,
    onnotice: () => {},
    connection: { application_name: "ceilings-primary-probe" },
    ...ours,
  });
  try {
    const [row] = await probe<{ standby: boolean }[]>`select pg_is_in_recovery() as standby`;
    return row?.standby === false ? "primary" : "standby";
  } catch {
    return "unreachable";
  } finally {
    clearTimeout(timer);
    stop.removeEventListener("abort", onStop);
    void probe.end({ timeout: 0 }).catch(() => undefined);
    socket?.destroy();
  }
}

/** The first of `hosts` to answer as primary (the others' questions are dropped at once). */
function firstPrimary(url: string, hosts: string[], timeoutMs: number): Promise<{ primary?: string; standbys: number }> {
  const stop = new AbortController();
  let standbys = 0;
  let left = hosts.length;
  return new Promise((resolve) => {
    if (left === 0) resolve({ standbys });
    for (const host of hosts) {
      void roleOf(url, host, timeoutMs, stop.signal).then((role) => {
        left--;
        if (role === "standby") standbys++;
        if (role === "primary" && !stop.signal.aborted) {
          stop.abort();
          resolve({ primary: host, standbys });
        } else if (left === 0) resolve({ standbys });
      });
    }
  });
}

export type Discovery = { primary?: string; standbys: number };

// A finished discovery's answer is reused this long. During a failover every caller's retry opens
// a connection: without it, discoveries ran back to back, each opening a connection to every
// host, and the new primary, forking a backend for each, answered them too slowly (test:ha).
const REUSE_MS = 250;

// Asking every host at once, each question may take this many probe timeouts: the first primary
// to answer ends the others' at once, so only a failover without a primary waits this long, and a
// primary slowed by the failover's reconnections is still found.
const PATIENCE = 3;

/** One multi-host URL's primary, found by one discovery at a time for the whole process. */
export class PrimaryPicker {
  private discovering: Promise<Discovery> | undefined;
  private latest: { at: number; answer: Discovery } | undefined;
  /** Discoveries run and hosts asked, for tests. */
  readonly stats = { discoveries: 0, probes: 0 };

  constructor(
    private readonly url: string,
    private readonly hosts: string[],
    private readonly probeTimeoutMs: number,
  ) {}

  /** The primary now: the running discovery if there is one, the one that just ended, else a new one. */
  discover(): Promise<Discovery> {
    if (this.latest && Date.now() - this.latest.at < REUSE_MS) return Promise.resolve(this.latest.answer);
    this.discovering ??= this.run()
      .then((answer) => {
        this.latest = { at: Date.now(), answer };
        return answer;
      })
      .finally(() => {
        this.discovering = undefined;
      });
    return this.discovering;
  }

  private async run(): Promise<Discovery> {
    this.stats.discoveries++;
    // The last discovery's primary; none after one that found none, so every host is asked at
    // once: the old primary may be gone silently.
    const last = this.latest?.answer.primary;
    let standbys = 0;
    if (last !== undefined) {
      this.stats.probes++;
      const role = await roleOf(this.url, last, this.probeTimeoutMs, new AbortController().signal);
      if (role === "primary") return { primary: last, standbys: 0 };
      if (role === "standby") standbys++;
    }
    const others = this.hosts.filter((h) => h !== last);
    this.stats.probes += others.length;
    const found = await firstPrimary(this.url, others, this.probeTimeoutMs * PATIENCE);
    return { primary: found.primary, standbys: standbys + found.standbys };
  }
}

// One picker per URL for the whole process: Next loads this module more than once.
const holder = globalThis as typeof globalThis & { __ceilingsPickers?: Map<string, PrimaryPicker> };

export function pickerFor(url: string, hosts: string[], probeTimeoutMs: number): PrimaryPicker {
  holder.__ceilingsPickers ??= new Map();
  let picker = holder.__ceilingsPickers.get(url);
  if (!picker) {
    picker = new PrimaryPicker(url, hosts, probeTimeoutMs);
    holder.__ceilingsPickers.set(url, picker);
  }
  return picker;
}
