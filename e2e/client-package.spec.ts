import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, test } from "@playwright/test";
import { adminCreatesKey } from "./pages/api-keys-page";
import { freePort, startApiProcess, stopServer, waitHealthy } from "./pages/app-server";

// The client package as a service in another repository gets it: `npm run build:client` packs
// the tarball, a fresh project in the system's temp folder (outside this repository, no access to
// its node_modules) installs it, type-checks against its declarations and runs a reservation, a
// settle and a refusal against the API server services are told to use (npm run api) and against
// the dashboard's own /api/v1, both on the e2e database.

// Playwright runs from the repository root (and loads specs as CommonJS, so no import.meta).
const ROOT = process.cwd();

test("the packed client installs into a project outside the repository and reserves, settles and is refused", async ({ page, baseURL }) => {
  test.setTimeout(180_000);
  const secret = await adminCreatesKey(page, `client package ${Date.now()}`, "acct_client_pkg", ["llm.chat"]);
  expect(secret).toMatch(/^ck_/);

  const tarball = execFileSync("npm", ["run", "-s", "build:client"], { cwd: ROOT, encoding: "utf8" }).trim().split("\n").pop() ?? "";
  expect(tarball).toMatch(/ceilings-client-.*\.tgz$/);
  const project = mkdtempSync(path.join(tmpdir(), "ceilings-client-user-"));
  try {
    expect(path.relative(ROOT, project).startsWith("..")).toBe(true);
    writeFileSync(path.join(project, "package.json"), JSON.stringify({ name: "some-service", version: "1.0.0", private: true, type: "module" }));
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--no-package-lock", tarball], { cwd: project, stdio: "pipe" });

    // The declarations resolve from the installed package under Node's own module rules.
    writeFileSync(
      path.join(project, "check.ts"),
      [
        'import { createCeilingsClient, ConflictError, type Decision } from "@ceilings/client";',
        'const c = createCeilingsClient({ baseUrl: "http://x", apiKey: "k" });',
        'const d: Promise<Decision> = c.reserve({ endpoint: "e", amount: 1 });',
        "export { d, ConflictError };",
      ].join("\n"),
    );
    execFileSync(
      process.execPath,
      [
        path.join(ROOT, "node_modules", "typescript", "bin", "tsc"),
        "--noEmit",
        "--strict",
        "--module",
        "nodenext",
        "--moduleResolution",
        "nodenext",
        "--lib",
        "es2022,dom",
        "check.ts",
      ],
      {
        cwd: project,
        stdio: "pipe",
      },
    );

    writeFileSync(
      path.join(project, "run.mjs"),
      `import { createCeilingsClient } from "@ceilings/client";
const c = createCeilingsClient({ baseUrl: process.env.BASE_URL, apiKey: process.env.API_KEY, deadlineMs: 10000 });
const grant = await c.reserve({ endpoint: "llm.chat", amount: 500 });
const settle = grant.status === "granted" ? await c.settle(grant.reservationId, 120) : null;
const refusal = await c.reserve({ endpoint: "llm.chat", amount: 8001 });
console.log(JSON.stringify({ grant, settle, refusal }));
`,
    );
    const api = startApiProcess(await freePort());
    try {
      await waitHealthy(api);
      for (const [target, url] of [
        ["npm run api", api.url],
        ["the dashboard", baseURL ?? ""],
      ] as const) {
        const output = execFileSync(process.execPath, ["run.mjs"], {
          cwd: project,
          encoding: "utf8",
          // Only PATH from this process: the service knows nothing of this repository's environment.
          // eslint-disable-next-line no-restricted-syntax
          env: { PATH: process.env.PATH, NODE_ENV: "production", BASE_URL: url, API_KEY: secret },
        });
        const result = JSON.parse(output) as Record<string, Record<string, unknown>>;
        expect(result.grant, target).toMatchObject({ status: "granted", replay: false, reservationId: expect.any(String) });
        expect(result.settle, target).toMatchObject({ status: "settled", actual: 120, overrun: false });
        expect(result.refusal, target).toMatchObject({ status: "refused", gate: "per_call_max" });
      }
    } finally {
      await stopServer(api);
    }
  } finally {
    rmSync(project, { recursive: true, force: true });
  }
});
