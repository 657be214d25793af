import { type CountryCode, isSupportedCountry } from "libphonenumber-js";
import { z } from "zod";

// The environment is parsed once, here. A bad value stops start-up with a message naming the
// variable; nothing falls back silently to a default it cannot justify.
const wholeMs = (fallback: number) =>
  z.string().regex(/^\d+$/, "must be a whole number of milliseconds").transform(Number).pipe(z.number().int().min(1).max(600_000)).prefault(String(fallback));

const wholeCount = (fallback: number, min: number, max: number) =>
  z.string().regex(/^\d+$/, "must be a whole number").transform(Number).pipe(z.number().int().min(min).max(max)).prefault(String(fallback));

const postgresUrl = z.string().regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL");

export const Env = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_URL: postgresUrl.optional(),
  // The owner role that runs `npm run db:migrate` and grants DATABASE_URL's role what the app needs.
  MIGRATION_DATABASE_URL: postgresUrl.optional(),
  TEST_DATABASE_URL: postgresUrl.optional(),
  DATA_DIR: z.string().min(1).default(".data"),
  NEXTAUTH_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  NEXTAUTH_URL: z.url().optional(),
  // Canonical destinations: the country a phone number written without "+" is read in.
  DEFAULT_PHONE_COUNTRY: z
    .string()
    .regex(/^[A-Z]{2}$/, "must be a two-letter country code such as US or GB")
    .refine((code): code is CountryCode => isSupportedCountry(code), "is not a country libphonenumber-js knows")
    .prefault("US"),
  // The demo service (app/api/demo): its fake email provider and the floor every answer is padded to.
  DEMO_SERVICE: z.enum(["on", "off"]).default("on"),
  DEMO_PROVIDER_LATENCY_MS: z
    .string()
    .regex(/^\d+$/, "must be a whole number of milliseconds")
    .transform(Number)
    .pipe(z.number().int().min(0).max(60_000))
    .prefault("150"),
  DEMO_PROVIDER_FAILURE_RATE: z
    .string()
    .regex(/^(0(\.\d+)?|1(\.0+)?)$/, "must be a number from 0 to 1, e.g. 0.05")
    .transform(Number)
    .prefault("0.05"),
  DEMO_SUBSCRIBE_MIN_MS: z
    .string()
    .regex(/^\d+$/, "must be a whole number of milliseconds")
    .transform(Number)
    .pipe(z.number().int().min(0).max(10_000))
    .prefault("400"),
  DB_POOL_MAX: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(90)).prefault("10"),
  ENFORCEMENT_POOL_MAX: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(90)).prefault("8"),
  ENFORCEMENT_DEADLINE_MS: wholeMs(2000),
  ENFORCEMENT_STATEMENT_TIMEOUT_MS: wholeMs(1500),
  ENFORCEMENT_LOCK_TIMEOUT_MS: wholeMs(1000),
  // Refusals older than this are purged by the worker in small batches.
  REFUSAL_RETENTION_DAYS: wholeCount(90, 1, 3650),
  CI: z.string().optional(),
  // The browser of the e2e tests (scripts/find-chromium.ts looks for one without it).
  PLAYWRIGHT_CHROMIUM_PATH: z.string().min(1).optional(),
  // Staff sessions end after this long without a request, and after the absolute lifetime regardless.
  SESSION_IDLE_MINUTES: wholeCount(30, 1, 24 * 60),
  SESSION_ABSOLUTE_HOURS: wholeCount(12, 1, 24 * 30),
  // How many reverse proxies in front append to X-Forwarded-For. 0: the header is not believed.
  TRUSTED_PROXY_HOPS: wholeCount(0, 0, 10),
  // Alerts and the worker (lib/alerts, lib/worker). Counts and windows of the refusal rules.
  WORKER_NAME: z.string().trim().min(1).max(100).optional(),
  WORKER_INTERVAL_MS: wholeMs(5000),
  WORKER_SILENT_AFTER_SECONDS: wholeCount(60, 10, 86_400),
  RECONCILE_INTERVAL_SECONDS: wholeCount(300, 5, 86_400),
  ALERT_UNAVAILABLE_BURST: wholeCount(20, 1, 1_000_000),
  ALERT_UNAVAILABLE_WINDOW_MINUTES: wholeCount(5, 1, 1440),
  ALERT_REFUSAL_SPIKE: wholeCount(500, 1, 100_000_000),
  ALERT_REFUSAL_SPIKE_WINDOW_MINUTES: wholeCount(5, 1, 1440),
  ALERT_ADJUST_FACTOR: wholeCount(5, 2, 1_000_000),
  ALERT_RETRY_BASE_SECONDS: wholeCount(30, 1, 3600),
  ALERT_RETRY_CAP_SECONDS: wholeCount(3600, 1, 86_400),
  ALERT_MAX_ATTEMPTS: wholeCount(8, 1, 100),
  // Webhook hosts allowed although they resolve to loopback or private addresses (comma-separated
  // names or addresses, e.g. an internal receiver). Set by whoever runs the server, never in the UI.
  ALERT_WEBHOOK_ALLOW_HOSTS: z.string().max(2000).optional(),
  // Usage source hosts (lib/reconciliation) allowed although they resolve to loopback or private
  // addresses: a provider proxy inside the network, or the fake provider of the tests (127.0.0.1).
  // An API source's key is sent only to its provider's own host or one of these (http only to these).
  USAGE_SOURCE_ALLOW_HOSTS: z.string().max(2000).optional(),
  // The directory a file source's local path must be inside (symlinks and `..` resolved); unset,
  // local paths are refused and file sources read https URLs or are imported by hand. Read at the
  // moment of use (lib/reconciliation/source-input.ts usageFileDir), checked here at start-up.
  USAGE_FILE_DIR: z
    .string()
    .trim()
    .max(1000)
    .regex(/^(\/.*)?$/, "must be an absolute path")
    .optional(),
  // Prometheus: /api/metrics of the app needs this bearer token; the worker's own port (off when
  // unset) listens on loopback and also takes the token when it is set.
  METRICS_TOKEN: z.string().min(16, "must be at least 16 characters").optional(),
  // The API server (npm run api): where it listens.
  API_PORT: z.string().regex(/^\d+$/, "must be a port number").transform(Number).pipe(z.number().int().min(1).max(65_535)).prefault("3001"),
  API_HOST: z.string().trim().min(1).default("127.0.0.1"),
  // A file every statement's time (the server's, by auto_explain: a superuser's DATABASE_URL) is
  // appended to, one JSON line each (db/query-timing.ts), for npm run bench:dashboard -- --queries
  // <file>. Unset: statements are not timed.
  CEILINGS_QUERY_TIMING: z.string().trim().min(1).optional(),
  WORKER_METRICS_PORT: z.string().regex(/^\d+$/, "must be a port number").transform(Number).pipe(z.number().int().min(1).max(65_535)).optional(),
});
export type Env = z.infer<typeof Env>;

function parseEnv(source: NodeJS.ProcessEnv): Env {
  const parsed = Env.safeParse(source);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid environment:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

let cached: Env | undefined;

export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}

/**
 * A secret named by configuration stored in the database (an SMTP password reference), read at
 * the moment of use so it can be rotated without a restart. Callers restrict which names qualify.
 */
export function readSecret(name: string): string | undefined {
  return process.env[name];
}

/**
 * The usage sources' host allow-list (USAGE_SOURCE_ALLOW_HOSTS, lower-case) and local file
 * directory (USAGE_FILE_DIR, null when unset), read at the moment of use like readSecret: a
 * source is validated against them when it is saved and when it is pulled.
 */
export function readUsageSourceEnv(): { allowHosts: string[]; fileDir: string | null } {
  const allowHosts = (process.env.USAGE_SOURCE_ALLOW_HOSTS ?? "")
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h.length > 0);
  const fileDir = process.env.USAGE_FILE_DIR?.trim() ?? "";
  return { allowHosts, fileDir: fileDir === "" ? null : fileDir };
}
