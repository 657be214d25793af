// The environment of `npm run demo`'s children (next build, next start, the worker): the demo's
// own, plus NEXT_TELEMETRY_DISABLED=1, so a new user's first run prints no telemetry notice and
// sends nothing to Vercel. A user who set the variable keeps their value.

export const DEMO_CHILD_ENV = { NEXT_TELEMETRY_DISABLED: "1" } as const;

export function demoChildEnv<E extends Record<string, string | undefined>>(base: E): E {
  const env: Record<string, string | undefined> = { ...base };
  for (const [name, value] of Object.entries(DEMO_CHILD_ENV)) env[name] ??= value;
  return env as E;
}
