"use client";

import Link from "next/link";
import { usePathname } from "next/navigation";

const links = [
  { href: "/", label: "Overview" },
  { href: "/budgets", label: "Budgets" },
  { href: "/accounts", label: "Accounts" },
  { href: "/plans", label: "Plans" },
  { href: "/changes", label: "Changes" },
  { href: "/reconciliation", label: "Reconciliation" },
  { href: "/refusals", label: "Refusals" },
  { href: "/alerts", label: "Alerts" },
  { href: "/audit", label: "Audit" },
  { href: "/api-keys", label: "API keys" },
  { href: "/staff", label: "Staff" },
] as const;

function isActive(pathname: string, href: string): boolean {
  return href === "/" ? pathname === "/" || pathname.startsWith("/endpoints") : pathname === href || pathname.startsWith(`${href}/`);
}

/** `pendingChanges`: requests waiting for a second admin, shown as a count on "Changes". */
export function NavLinks({ pendingChanges = 0 }: { pendingChanges?: number }) {
  const pathname = usePathname();
  return (
    <nav aria-label="Main">
      <ul className="flex flex-wrap gap-1 text-sm">
        {links.map(({ href, label }) => {
          const active = isActive(pathname, href);
          return (
            <li key={href}>
              <Link
                href={href}
                aria-current={active ? "page" : undefined}
                className={
                  active
                    ? "rounded-md bg-zinc-900 px-3 py-1.5 font-medium text-white dark:bg-zinc-100 dark:text-zinc-900"
                    : "rounded-md px-3 py-1.5 text-zinc-700 hover:bg-zinc-100 dark:text-zinc-300 dark:hover:bg-zinc-800"
                }
              >
                {label}
                {href === "/changes" && pendingChanges > 0 ? (
                  <span
                    className="ml-1.5 rounded-full bg-amber-500 px-1.5 py-0.5 text-xs font-semibold text-zinc-950"
                    aria-label={`${pendingChanges} pending change requests`}
                    data-testid="pending-changes-count"
                  >
                    {pendingChanges > 99 ? "99+" : pendingChanges}
                  </span>
                ) : null}
              </Link>
            </li>
          );
        })}
      </ul>
    </nav>
  );
}
