import type { Metadata } from "next";
import Link from "next/link";
import { requirePageRole } from "@/app/_lib/session";
import { isRole, roleAbilities } from "@/lib/auth/roles";

export const metadata: Metadata = { title: "Not allowed" };

export default async function ForbiddenPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const staff = await requirePageRole("viewer");
  const need = (await searchParams).need;
  return (
    <section className="max-w-xl">
      <h1 className="text-2xl font-semibold">Not allowed</h1>
      <p className="mt-3 text-zinc-700 dark:text-zinc-300">
        Your role ({staff.role}) can {roleAbilities[staff.role]}.{isRole(need) ? ` That page needs the ${need} role, which can ${roleAbilities[need]}.` : null}
      </p>
      <p className="mt-3 text-zinc-700 dark:text-zinc-300">Ask an admin if you need more access.</p>
      <Link href="/" className="mt-6 inline-block text-sm font-medium text-sky-700 underline dark:text-sky-400">
        Back to the overview
      </Link>
    </section>
  );
}
