import { domainToASCII } from "node:url";
import { DOMAIN_ALIASES, DOT_INSENSITIVE_DOMAINS, SUBADDRESS_SEPARATOR } from "./providers";
import { InvalidDestinationError } from "./errors";

// Printable, no whitespace, no "@", no angle brackets or commas that would make it a list.
const LOCAL_PART = /^[^\s@<>,;"]+$/u;

/**
 * The inbox an address delivers to, as the cooldown's key: lowercased (Unicode NFC first), the
 * domain in its ASCII (punycode) form with aliases resolved, the plus-tag dropped, and dots dropped
 * for providers that ignore them. The original stays with the caller for delivery.
 */
export function canonicalEmail(raw: string): string {
  const text = raw.trim().normalize("NFC");
  const at = text.lastIndexOf("@");
  if (at <= 0 || at === text.length - 1 || text.indexOf("@") !== at) {
    throw new InvalidDestinationError("invalid_email", `not an email address: "${clip(raw)}"`);
  }
  let local = text.slice(0, at).toLowerCase();
  if (!LOCAL_PART.test(local) || local.length > 64) {
    throw new InvalidDestinationError("invalid_email", `the part before "@" is not valid in "${clip(raw)}"`);
  }
  const domain = asciiDomain(text.slice(at + 1));
  if (!domain) throw new InvalidDestinationError("invalid_email", `the domain of "${clip(raw)}" is not valid`);
  const target = DOMAIN_ALIASES[domain] ?? domain;

  // A leading "+" is the whole name, not a tag: "+1@x" stays as it is.
  const plus = local.indexOf(SUBADDRESS_SEPARATOR);
  if (plus > 0) local = local.slice(0, plus);
  if (DOT_INSENSITIVE_DOMAINS.has(target)) {
    const undotted = local.split(".").join("");
    if (undotted.length === 0) throw new InvalidDestinationError("invalid_email", `no mailbox name in "${clip(raw)}"`);
    local = undotted;
  }
  return `${local}@${target}`;
}

/** Lowercase ASCII form of a domain (IDN to punycode), or undefined when it is not a host name. */
function asciiDomain(raw: string): string | undefined {
  const trimmed = raw.replace(/\.$/, "");
  if (trimmed.length === 0 || /\s/u.test(trimmed)) return undefined;
  const ascii = domainToASCII(trimmed.toLowerCase());
  if (ascii === "" || ascii.length > 253) return undefined;
  const labels = ascii.split(".");
  if (labels.length < 2) return undefined;
  const label = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
  return labels.every((l) => label.test(l)) ? ascii : undefined;
}

function clip(raw: string): string {
  return raw.length > 80 ? `${raw.slice(0, 77)}...` : raw;
}
