import { z } from "zod";
import { StaffEmail, StaffPassword, StaffRoleInput } from "@/lib/auth/staff-input";
import type { Role } from "@/lib/auth/roles";

export const USAGE = `Usage: npm run staff -- <command>

Commands:
  add <email> --role <viewer|operator|admin> [--name <name>] [--password <password> | --password-stdin]
      Adds a staff member. Without a password, one is generated and printed once.
  role <email> <viewer|operator|admin>   Changes a role; a demotion ends their open sessions.
  disable <email>                         Disables sign-in and ends their open sessions.
  enable <email>                          Allows sign-in again.
  password <email> [--password <password> | --password-stdin]
      Sets a new password (generated and printed once if none is given); ends open sessions.
  list                                    Lists staff members.

Uses DATABASE_URL when set; otherwise the embedded database in DATA_DIR (default .data),
the one a running dashboard uses (started here if nothing else runs it).`;

export class UsageError extends Error {
  override name = "UsageError";
}

export type StaffCommand =
  | { command: "add"; email: string; role: Role; name: string; password: PasswordSource }
  | { command: "role"; email: string; role: Role }
  | { command: "disable"; email: string }
  | { command: "enable"; email: string }
  | { command: "password"; email: string; password: PasswordSource }
  | { command: "list" }
  | { command: "help" };

export type PasswordSource = { kind: "generate" } | { kind: "given"; value: string } | { kind: "stdin" };

type Split = { positional: string[]; flags: Map<string, string | true> };

const valueFlags = new Set(["role", "name", "password"]);
const booleanFlags = new Set(["password-stdin"]);

function split(argv: string[]): Split {
  const positional: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    if (!arg.startsWith("--")) {
      positional.push(arg);
      continue;
    }
    const [rawName, inline] = arg.slice(2).split(/=(.*)/s, 2);
    const name = rawName ?? "";
    if (flags.has(name)) throw new UsageError(`--${name} given twice`);
    if (booleanFlags.has(name)) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      flags.set(name, true);
    } else if (valueFlags.has(name)) {
      const value = inline ?? argv[++i];
      if (value === undefined || (inline === undefined && value.startsWith("--"))) throw new UsageError(`--${name} needs a value`);
      flags.set(name, value);
    } else {
      throw new UsageError(`unknown option --${name}`);
    }
  }
  return { positional, flags };
}

function parseWith<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new UsageError(parsed.error.issues.map((i) => i.message).join("; "));
  return parsed.data;
}

function only(s: Split, allowed: string[], arity: number, command: string): void {
  for (const name of s.flags.keys()) if (!allowed.includes(name)) throw new UsageError(`${command} does not take --${name}`);
  if (s.positional.length !== arity) {
    throw new UsageError(`${command} takes ${arity} argument${arity === 1 ? "" : "s"}, got ${s.positional.length}`);
  }
}

function passwordSource(s: Split): PasswordSource {
  const given = s.flags.get("password");
  const stdin = s.flags.get("password-stdin");
  if (given !== undefined && stdin !== undefined) throw new UsageError("give --password or --password-stdin, not both");
  if (stdin !== undefined) return { kind: "stdin" };
  if (typeof given === "string") return { kind: "given", value: parseWith(StaffPassword, given) };
  return { kind: "generate" };
}

export function parseStaffArgs(argv: string[]): StaffCommand {
  const [command, ...rest] = argv;
  if (command === undefined || command === "help" || command === "--help" || command === "-h") return { command: "help" };
  const s = split(rest);
  const email = () => parseWith(StaffEmail, s.positional[0]);
  switch (command) {
    case "add": {
      only(s, ["role", "name", "password", "password-stdin"], 1, "add");
      const role = s.flags.get("role");
      if (typeof role !== "string") throw new UsageError("add needs --role viewer|operator|admin");
      const name = s.flags.get("name");
      return { command, email: email(), role: parseWith(StaffRoleInput, role), name: typeof name === "string" ? name.trim() : "", password: passwordSource(s) };
    }
    case "role":
      only(s, [], 2, "role");
      return { command, email: email(), role: parseWith(StaffRoleInput, s.positional[1]) };
    case "disable":
    case "enable":
      only(s, [], 1, command);
      return { command, email: email() };
    case "password":
      only(s, ["password", "password-stdin"], 1, "password");
      return { command, email: email(), password: passwordSource(s) };
    case "list":
      only(s, [], 0, "list");
      return { command };
    default:
      throw new UsageError(`unknown command '${command}'`);
  }
}
