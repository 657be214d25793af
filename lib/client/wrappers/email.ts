// E-mail through nodemailer: sendMail reserves one unit per recipient (to, cc and bcc), each with
// its address as the destination (so the endpoint's cooldown and per-destination ceilings apply),
// all or none: one refused recipient releases the others and nothing is sent. After sending,
// each accepted recipient is settled at 1 and each the server rejected is released.
//
//   const mailer = withCeilings(nodemailer.createTransport(smtp), { ceilings, endpoint: "email.subscribe" });
//   await mailer.sendMail({ from, to: "ada@example.com", subject, text });
import { hold, type Hold, type GuardOptions } from "./guard.js";
import { withCallOptions, type WithCeilings } from "./wrap.js";

export { CeilingsRefusedError, WorstCaseError, type CallOptions } from "./guard.js";

type Address = string | { address?: string; name?: string };
type Mail = { to?: Address | Address[]; cc?: Address | Address[]; bcc?: Address | Address[] };
type SentInfo = { accepted?: Address[]; rejected?: Address[] };

const ADDRESS = /[^\s<>,;:"()[\]]+@[^\s<>,;:"()[\]]+/g;

/** Every recipient address of a message, lower-cased, each once. */
export function recipients(mail: Mail): string[] {
  const out = new Set<string>();
  const add = (a: Address | Address[] | undefined) => {
    if (a === undefined) return;
    if (Array.isArray(a)) for (const one of a) add(one);
    else if (typeof a === "string") for (const m of a.replace(/"[^"]*"/g, "").matchAll(ADDRESS)) out.add(m[0].toLowerCase());
    else if (a.address) out.add(a.address.toLowerCase());
  };
  add(mail.to);
  add(mail.cc);
  add(mail.bcc);
  return [...out];
}

/** A nodemailer transporter with sendMail reserved per recipient. */
export function withCeilings<C extends object>(transporter: C, options: GuardOptions): WithCeilings<C> {
  return withCallOptions(transporter, {
    sendMail: async (call, original, [mail, ...rest]) => {
      const addresses = recipients(mail as Mail);
      const holds = new Map<string, Hold>();
      try {
        // One reservation per recipient, in a stable order; each retry key derives from the call's.
        for (const [i, address] of addresses.entries()) {
          const key = call?.idempotencyKey === undefined ? undefined : `${call.idempotencyKey}:${i}`;
          holds.set(address, await hold(options, { ...call, destination: address, ...(key === undefined ? {} : { idempotencyKey: key }) }, { amount: 1 }));
        }
      } catch (refusal) {
        await Promise.all([...holds.values()].map((h) => h.release()));
        throw refusal;
      }
      let info: SentInfo;
      try {
        info = (await original(mail, ...rest)) as SentInfo;
      } catch (error) {
        await Promise.all([...holds.values()].map((h) => h.release()));
        throw error;
      }
      const rejected = new Set(recipients({ to: info.rejected ?? [] }));
      await Promise.all([...holds].map(([address, h]) => (rejected.has(address) ? h.release() : h.settle({ amount: 1 }))));
      return info;
    },
  });
}
