// Callers and destinations can be e-mail addresses and phone numbers. Exports leave the dashboard
// (spreadsheets, tickets, chat), so everyone but admins gets them masked: enough left to tell two
// rows apart and to recognise a known account, not enough to contact anyone.

const STAR = "*";
const EMAIL = /^([^@\s]+)@([^@\s]+)$/;
const PHONE = /^\+?[\d\s().-]{7,20}$/;

/** j***@g***.com: first letter of the mailbox and of the domain, and the top-level domain. */
export function maskEmail(email: string): string {
  const match = EMAIL.exec(email);
  if (!match) return maskOpaque(email);
  const [, local = "", domain = ""] = match;
  const dot = domain.lastIndexOf(".");
  const tld = dot > 0 ? domain.slice(dot) : "";
  const host = dot > 0 ? domain.slice(0, dot) : domain;
  return `${local.slice(0, 1)}***@${host.slice(0, 1)}***${tld}`;
}

/** +1******4567: the country's first digit and the last four; every other digit a star. */
export function maskPhone(phone: string): string {
  const digits = phone.replace(/\D/g, "");
  if (digits.length < 7) return maskOpaque(phone);
  const plus = phone.trimStart().startsWith("+") ? "+" : "";
  return `${plus}${digits.slice(0, 1)}${STAR.repeat(digits.length - 5)}${digits.slice(-4)}`;
}

/** acct_***89: a type prefix such as "acct_" stays, then the last two characters. */
export function maskCaller(caller: string): string {
  if (caller === "") return "";
  if (EMAIL.test(caller)) return maskEmail(caller);
  if (PHONE.test(caller)) return maskPhone(caller);
  const prefix = /^[a-z]{2,8}_/i.exec(caller)?.[0] ?? "";
  const rest = caller.slice(prefix.length);
  if (rest.length <= 4) return `${prefix}***`;
  return `${prefix}***${rest.slice(-2)}`;
}

/** An inbox, a phone number or any other canonical key, masked by what it looks like. */
export function maskDestination(destination: string): string {
  if (destination === "") return "";
  if (EMAIL.test(destination)) return maskEmail(destination);
  if (PHONE.test(destination)) return maskPhone(destination);
  return maskOpaque(destination);
}

/** Anything else: the first two and last two characters of a long enough value. */
function maskOpaque(value: string): string {
  const chars = [...value];
  if (chars.length <= 6) return "***";
  return `${chars.slice(0, 2).join("")}***${chars.slice(-2).join("")}`;
}
