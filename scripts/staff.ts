import { InputError } from "@/lib/errors";
import os from "node:os";
import type { Db } from "@/db/client";
import { addStaff, changeStaffRole, disableStaff, enableStaff, listStaff, setStaffPassword, StaffAdminError, StaffPassword } from "@/lib/auth";
import type { AuditActor } from "@/lib/audit/record";
import { parseStaffArgs, type PasswordSource, type StaffCommand, USAGE, UsageError } from "./staff-cli/args";
import { openCliDatabase } from "./staff-cli/database";

// Exit codes: 0 done, 1 refused (unknown member, last admin, exists), 2 usage, 3 database or other failure.
const EXIT = { ok: 0, refused: 1, usage: 2, failure: 3 } as const;

async function readStdinPassword(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  // Only the final newline is dropped: the rest of the input is the password as typed.
  const text = Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
  const parsed = StaffPassword.safeParse(text);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join("; "));
  return parsed.data;
}

async function passwordFrom(source: PasswordSource): Promise<string | undefined> {
  if (source.kind === "given") return source.value;
  if (source.kind === "stdin") return readStdinPassword();
  return undefined;
}

function printGenerated(email: string, password: string | null): void {
  if (password === null) return;
  console.log(`Password for ${email} (shown once, store it now): ${password}`);
}

async function run(db: Db, cmd: Exclude<StaffCommand, { command: "help" }>, actor: AuditActor): Promise<void> {
  switch (cmd.command) {
    case "add": {
      const password = await passwordFrom(cmd.password);
      const { staff, generatedPassword } = await addStaff(db, { email: cmd.email, role: cmd.role, name: cmd.name, password, actor });
      console.log(`Added ${staff.email} as ${staff.role}.`);
      printGenerated(staff.email, generatedPassword);
      return;
    }
    case "role": {
      const staff = await changeStaffRole(db, { email: cmd.email, role: cmd.role, actor });
      console.log(`${staff.email} is ${staff.role}.`);
      return;
    }
    case "disable": {
      const staff = await disableStaff(db, { email: cmd.email, actor });
      console.log(`${staff.email} is disabled; their open sessions have ended.`);
      return;
    }
    case "enable": {
      const staff = await enableStaff(db, { email: cmd.email, actor });
      console.log(`${staff.email} is enabled.`);
      return;
    }
    case "password": {
      const password = await passwordFrom(cmd.password);
      const { staff, generatedPassword } = await setStaffPassword(db, { email: cmd.email, password, actor });
      console.log(`Password of ${staff.email} changed; their open sessions have ended.`);
      printGenerated(staff.email, generatedPassword);
      return;
    }
    case "list": {
      const members = await listStaff(db);
      if (members.length === 0) console.log("No staff members yet. Add one with: npm run staff -- add <email> --role admin");
      for (const m of members) {
        const state = m.disabledAt ? `disabled ${m.disabledAt.toISOString()}` : "active";
        console.log(`${m.email.padEnd(32)} ${m.role.padEnd(9)} ${state}`);
      }
      return;
    }
  }
}

/** One readable line for a database failure; the full error follows only for the unexpected. */
function describeDbError(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = cause && typeof cause === "object" && "code" in cause ? String(cause.code) : "";
  if (code === "42P01") return "the tables do not exist yet; run `npm run db:migrate` first";
  if (cause instanceof Error) return cause.message;
  return String(cause);
}

async function main(argv: string[]): Promise<number> {
  let cmd: StaffCommand;
  try {
    cmd = parseStaffArgs(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    console.error(`error: ${error.message}\n\n${USAGE}`);
    return EXIT.usage;
  }
  if (cmd.command === "help") {
    console.log(USAGE);
    return EXIT.ok;
  }
  const actor: AuditActor = { type: "cli", name: os.userInfo().username };
  let opened: Awaited<ReturnType<typeof openCliDatabase>>;
  try {
    opened = await openCliDatabase();
  } catch (error) {
    console.error(`error: could not open the database: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.failure;
  }
  try {
    await run(opened.db, cmd, actor);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`error: ${error.message}`);
      return EXIT.usage;
    }
    if (error instanceof StaffAdminError || error instanceof InputError) {
      console.error(`error: ${error.message}`);
      return EXIT.refused;
    }
    console.error(`error: the database operation failed (${opened.description}): ${describeDbError(error)}`);
    return EXIT.failure;
  } finally {
    await opened.close();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error);
    process.exit(EXIT.failure);
  },
);
