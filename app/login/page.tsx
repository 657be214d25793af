import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { safeNextPath } from "@/app/_lib/next-path";
import { getSessionStaff } from "@/app/_lib/session";
import { LoginForm } from "./_components/login-form";

export const metadata: Metadata = { title: "Sign in" };

export default async function LoginPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const next = safeNextPath((await searchParams).next);
  // Someone already signed in has nothing to do here.
  if (await getSessionStaff()) redirect(next);
  return (
    <main className="flex min-h-screen items-center justify-center px-4">
      <div className="w-full max-w-sm rounded-lg border border-zinc-200 bg-white p-6 shadow-sm dark:border-zinc-800 dark:bg-zinc-900">
        <h1 className="text-xl font-semibold">Sign in to Ceilings</h1>
        <p className="mt-1 text-sm text-zinc-600 dark:text-zinc-400">Staff only. Ask an admin for an account.</p>
        <LoginForm next={next} />
      </div>
    </main>
  );
}
