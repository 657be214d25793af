// The least-privilege role the e2e server connects as; its password is for the e2e database only.
export const E2E_APP_ROLE = { role: "ceilings_e2e_app", password: "ceilings-e2e-app-only" };

/** `tsx scripts/e2e-app-role.ts <owner url>` prints the same URL logging in as the e2e app role. */
function main(): void {
  const owner = process.argv[2];
  if (!owner) throw new Error("usage: tsx scripts/e2e-app-role.ts <postgres url>");
  const url = new URL(owner);
  url.username = E2E_APP_ROLE.role;
  url.password = E2E_APP_ROLE.password;
  process.stdout.write(url.toString());
}

if (process.argv[1]?.endsWith("e2e-app-role.ts")) main();
