import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, type Page, test } from "@playwright/test";
import { createTestDatabase, hasTestDatabase, type TestDatabase } from "@/db/testing";
import { addStaff } from "@/lib/auth";
import { type AppServer, freePort, startServer, stopServer, waitHealthy } from "./pages/app-server";
import { LoginPage } from "./pages/login-page";

// A form post to a dashboard page that is not one of our own server actions, on the production
// build: from another origin (a plain HTML form on another site, or a crafted request with an
// Origin header, with or without a Next-Action header) it is a 403, a plain form of this origin
// is a 400, and nothing is a 500 or leaves a stack trace in the log. Next alone answered the
// cross-origin multipart post with a 500 and logged "Error: Invalid Server Actions request".
// A server of its own, so its log can be read.

const PASSWORD = "correct horse battery staple 42";
const EVIL = "http://evil.example";
// The shape of a server action id; no action has it.
const ACTION_ID = `7f${"0".repeat(40)}`;

test.describe("form posts to a page", () => {
  test.skip(!hasTestDatabase(), "a second app process needs a shared Postgres: set TEST_DATABASE_URL");
  let t: TestDatabase | undefined;
  let server: AppServer | undefined;

  test.beforeAll(async () => {
    test.setTimeout(120_000);
    t = await createTestDatabase("e2e_page_post", { max: 2 });
    await addStaff(t.db, { email: "admin@team.example", role: "admin", password: PASSWORD, actor: { type: "system", name: "e2e" }, bcryptCost: 4 });
    server = startServer(await freePort(), t.url);
    await waitHealthy(server);
  });

  test.afterAll(async () => {
    if (server) await stopServer(server);
    await t?.drop();
  });

  async function sessionCookie(page: Page): Promise<string> {
    await page.goto(`${server?.url}/login`);
    await new LoginPage(page).signIn("admin@team.example", PASSWORD);
    await expect(page.getByTestId("signed-in-as")).toContainText("admin@team.example");
    return (await page.context().cookies()).map((c) => `${c.name}=${c.value}`).join("; ");
  }

  test("another origin gets 403 and a plain form 400, signed in or not, and the log stays clean", async ({ page, request }) => {
    const base = server?.url ?? "";
    const cookie = await sessionCookie(page);
    const before = server?.output().length ?? 0;
    const form = { a: "1" };
    const cases: { what: string; path: string; headers: Record<string, string>; body: "form" | "multipart"; want: number }[] = [];
    for (const path of ["/", "/endpoints/x", "/login"]) {
      for (const body of ["form", "multipart"] as const) {
        cases.push({ what: "another origin", path, headers: { origin: EVIL }, body, want: 403 });
        cases.push({ what: "another origin, Next-Action", path, headers: { origin: EVIL, "next-action": ACTION_ID }, body, want: 403 });
        cases.push({ what: "a plain form of this origin", path, headers: { origin: base }, body, want: 400 });
      }
    }
    const seen: string[] = [];
    const wanted: string[] = [];
    for (const signedIn of [true, false]) {
      for (const c of cases) {
        const headers = { ...c.headers, ...(signedIn ? { cookie } : {}) };
        const answer = await request.post(`${base}${c.path}`, { headers, maxRedirects: 0, ...(c.body === "form" ? { form } : { multipart: form }) });
        const line = `${signedIn ? "signed in" : "signed out"} ${c.what} ${c.body} ${c.path}`;
        seen.push(`${line}: ${answer.status()}`);
        wanted.push(`${line}: ${c.want}`);
      }
    }
    expect(seen).toEqual(wanted);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const logged = server?.output().slice(before) ?? "";
    expect(logged).not.toMatch(/Invalid Server Action|Internal Server Error|Error:|^\s+at /m);
  });

  test("a plain HTML form on another site posting to the dashboard gets 403", async ({ page }) => {
    const base = server?.url ?? "";
    await sessionCookie(page);
    // Another port of the same host: another origin on the same site, so the session cookie goes along.
    const foreign: Server = createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(`<form id="url" method="post" action="${base}/"><input name="a" value="1"></form>
<form id="multi" method="post" enctype="multipart/form-data" action="${base}/endpoints/x"><input name="a" value="1"></form>`);
    });
    await new Promise<void>((resolve) => foreign.listen(0, "127.0.0.1", resolve));
    try {
      const origin = `http://127.0.0.1:${(foreign.address() as AddressInfo).port}`;
      for (const [id, target] of [
        ["url", `${base}/`],
        ["multi", `${base}/endpoints/x`],
      ] as const) {
        await page.goto(origin);
        const [response] = await Promise.all([
          page.waitForResponse((r) => r.url() === target && r.request().method() === "POST"),
          page.evaluate((formId) => (document.getElementById(formId) as HTMLFormElement).submit(), id),
        ]);
        expect([id, response.status()]).toEqual([id, 403]);
        await page.waitForURL(target);
        await expect(page.locator("body")).toContainText("Forbidden: a form on another site cannot post to this dashboard");
      }
    } finally {
      foreign.closeAllConnections();
      await new Promise<void>((resolve) => foreign.close(() => resolve()));
    }
  });
});
