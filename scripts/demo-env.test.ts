import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { demoChildEnv } from "./demo-env";

describe("the demo's child environment", () => {
  it("turns Next's telemetry off and keeps everything else", () => {
    const env = demoChildEnv({ PATH: "/usr/bin", DATA_DIR: ".data" });
    expect(env).toEqual({ PATH: "/usr/bin", DATA_DIR: ".data", NEXT_TELEMETRY_DISABLED: "1" });
  });

  it("keeps a value the user set", () => {
    expect(demoChildEnv({ NEXT_TELEMETRY_DISABLED: "0" }).NEXT_TELEMETRY_DISABLED).toBe("0");
  });

  it("makes Next itself report its telemetry as disabled, with no notice", () => {
    const { NEXT_TELEMETRY_DISABLED: _unset, ...parent } = process.env;
    const root = path.resolve(import.meta.dirname, "..");
    const next = spawnSync(process.execPath, [path.join(root, "node_modules", "next", "dist", "bin", "next"), "telemetry", "status"], {
      cwd: root,
      env: demoChildEnv(parent),
      encoding: "utf8",
      timeout: 20_000,
    });
    expect(next.status).toBe(0);
    expect(next.stdout).toMatch(/Status: Disabled/);
    expect(next.stdout + next.stderr).not.toMatch(/Attention/);
  });

  it("is what npm run demo and the e2e server start their children with", () => {
    const root = path.resolve(import.meta.dirname, "..");
    const demo = readFileSync(path.join(root, "scripts", "demo.ts"), "utf8");
    expect(demo).toMatch(/spawn\(process\.execPath, args, \{[^}]*env: demoChildEnv\(process\.env\)/);
    const e2e = readFileSync(path.join(root, "scripts", "e2e-server.sh"), "utf8");
    expect(e2e).toMatch(/^export NEXT_TELEMETRY_DISABLED=1$/m);
    // Before the first next command, so no child prints the notice.
    expect(e2e.indexOf("export NEXT_TELEMETRY_DISABLED=1")).toBeLessThan(e2e.indexOf("npx next build"));
  });
});
