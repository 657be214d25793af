import { z } from "zod";

// The environment is parsed once, here. A bad value stops start-up with a message naming the
// variable; nothing falls back silently to a default it cannot justify.
const wholeMs = (fallback: number) =>
  z
    .string()
    .regex(/^\d+$/, "must be a whole number of milliseconds")
    .transform(Number)
    .pipe(z.number().int().min(1).max(600_000))
    .prefault(String(fallback));

const postgresUrl = z
  .string()
  .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL");

export const Env = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  DATABASE_URL: postgresUrl.optional(),
  TEST_DATABASE_URL: postgresUrl.optional(),
  DATA_DIR: z.string().min(1).default(".data"),
  NEXTAUTH_SECRET: z.string().min(32, "must be at least 32 characters").optional(),
  NEXTAUTH_URL: z.url().optional(),
  DB_POOL_MAX: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(90)).prefault("10"),
  ENFORCEMENT_POOL_MAX: z.string().regex(/^\d+$/).transform(Number).pipe(z.number().int().min(1).max(90)).prefault("8"),
  ENFORCEMENT_DEADLINE_MS: wholeMs(2000),
  ENFORCEMENT_STATEMENT_TIMEOUT_MS: wholeMs(1500),
  ENFORCEMENT_LOCK_TIMEOUT_MS: wholeMs(1000),
  CI: z.string().optional(),
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
