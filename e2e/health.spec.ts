import { expect, test } from "@playwright/test";

// The harness's own check: the e2e server is a production build answering on its own port, with a
// database behind it. Feature suites live beside this file.
test("the health route answers from the database", async ({ request }) => {
  const response = await request.get("/api/health");
  expect(response.status()).toBe(200);
  expect(await response.json()).toEqual({ status: "ok", refusalLogFailures: expect.any(Number) });
  expect(response.headers()["cache-control"]).toContain("no-store");
});
