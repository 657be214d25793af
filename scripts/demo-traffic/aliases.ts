// The addresses the demo traffic sends: ordinary visitors on reserved example domains, and an
// abusive caller who types one gmail inbox many ways, which the cooldown must fold into one.

const FIRST = ["maria", "sam", "li", "noah", "fatima", "olga", "diego", "amara", "jonas", "priya", "tom", "ines", "yuki", "omar", "zoe"];
const LAST = ["lopez", "baker", "chen", "okafor", "novak", "silva", "kim", "haddad", "meyer", "rossi"];
const DOMAINS = ["example.com", "example.org", "example.net"];

/** The n-th visitor's address: distinct for a long while, then repeating (a returning visitor). */
export function visitorAddress(n: number, runTag: string): string {
  const f = FIRST[n % FIRST.length] ?? "visitor";
  const l = LAST[Math.floor(n / FIRST.length) % LAST.length] ?? "x";
  const d = DOMAINS[n % DOMAINS.length] ?? "example.com";
  return `${f}.${l}.${runTag}@${d}`;
}

/** Documentation addresses (RFC 5737) standing in for visitors' IPs. */
export function visitorIp(n: number): string {
  const nets = ["192.0.2", "198.51.100", "203.0.113"];
  return `${nets[n % 3]}.${(n % 200) + 10}`;
}

/**
 * `count` spellings of one gmail inbox: plus-tags, dots in different places, upper case, the
 * googlemail.com alias. Every one of them reaches the same mailbox.
 */
export function inboxAliases(local: string, count: number): string[] {
  const out = new Set<string>();
  for (let i = 0; out.size < count && i < count * 4; i++) {
    const dotAt = 1 + (i % Math.max(1, local.length - 1));
    let name = i % 3 === 0 ? local : `${local.slice(0, dotAt)}.${local.slice(dotAt)}`;
    if (i % 4 === 1) name = name.toUpperCase();
    if (i % 2 === 1) name = `${name}+promo${i}`;
    const domain = i % 5 === 2 ? "googlemail.com" : i % 7 === 3 ? "GMail.com" : "gmail.com";
    out.add(`${name}@${domain}`);
  }
  return [...out];
}
