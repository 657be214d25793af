/**
 * The one base of every failure lib/ raises for a person or a calling service to act on: a code to
 * branch on and a message safe to show as it is (it names what was sent, never a secret, a hash or
 * SQL). The boundaries map it once each: app/_lib/define-action.ts to a form's state, and
 * lib/http/responses.ts to `{ error: { code, message } }` with the status of its code.
 *
 * What does not extend it is not for the person asking: a deadline or a contract mismatch is an
 * outage (lib/enforcement/unavailable.ts classifies it with the driver's errors), and anything
 * else reaching a boundary is a bug, logged in full and answered generically.
 */
export class DomainError<Code extends string = string> extends Error {
  constructor(
    readonly code: Code,
    message: string,
  ) {
    super(message);
  }
}

/** Who may do what: signed in at all (`unauthenticated`), and with the role asked for (`forbidden`). */
export type AuthorizationCode = "unauthenticated" | "forbidden";

/** One problem with an input: where it is (`ceilings[1].max`; empty for the input as a whole) and what. */
export type Issue = { path: string; message: string };

/** "unitPriceMicros", "unit price (micros)" and "unit-price micros" alike: lower case words. */
const words = (s: string) =>
  s
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, " ")
    .trim();

/**
 * A problem as the one line a person reads, the only place a path and a message are joined:
 * `path: message`, unless the message already opens with the field's own name, which is then not
 * said twice. Named as in the path ("max must be 0 or more" at `ceilings[1].max`), the path takes
 * the name's place: `ceilings[1].max must be 0 or more`. Named in words ("unit price (micros) must
 * be ..." at `unitPriceMicros`), the words stay and only where the field is goes first:
 * `endpoints[2]: unit price (micros) must be ...`. "name: name is required" was the result of
 * joining without looking.
 */
export function issueLine({ path, message }: Issue): string {
  if (path === "") return message;
  const split = path.lastIndexOf(".");
  const field = path.slice(split + 1);
  if (!/^[A-Za-z_]\w*$/.test(field)) return `${path}: ${message}`;
  if (message === field || message.startsWith(`${field} `)) return `${path}${message.slice(field.length)}`;
  const said = words(message);
  const name = words(field);
  if (said === name || said.startsWith(`${name} `)) return split < 0 ? message : `${path.slice(0, split)}: ${message}`;
  return `${path}: ${message}`;
}

/**
 * The one error of an input refused for what it says, in every domain: code `invalid_input`, with
 * each problem where it is (`issues`, shown beside its field by a form, listed by the CLI), and a
 * message that says them all. What a person typed and had refused is audited by the boundary that
 * read it (app/_lib/define-action.ts), whichever domain refused it.
 */
export class InputError extends DomainError<"invalid_input"> {
  override name = "InputError";
  constructor(
    readonly problems: readonly Issue[],
    message: string = problems.map(issueLine).join("; "),
  ) {
    super("invalid_input", message);
  }

  /** One problem, of the input as a whole or of the field at `path`; the message is said as it is. */
  static of(message: string, path = ""): InputError {
    return new InputError([{ path, message }], message);
  }

  /** Each problem as a line a person reads (issueLine). */
  get issues(): string[] {
    return this.problems.map(issueLine);
  }
}
