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
