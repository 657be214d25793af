"use client";

import { signIn } from "next-auth/react";
import { useState, type FormEvent } from "react";
import { SubmitButton } from "@/components/submit-button";
import { buttonClass } from "@/components/ui";

// Shown for every refused sign-in, whatever the cause; the server never says more.
const GENERIC_ERROR = "Email or password is incorrect";

// The submit button stays disabled until hydration (SubmitButton): a click before then would submit
// a plain GET form and put the password in the URL.
export function LoginForm({ next }: { next: string }) {
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState(false);

  async function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    setPending(true);
    setError(null);
    try {
      const result = await signIn("credentials", {
        email: String(form.get("email") ?? ""),
        password: String(form.get("password") ?? ""),
        redirect: false,
      });
      if (result?.ok && !result.error) {
        // A full load, so every server component renders with the new session cookie.
        window.location.assign(next);
        return;
      }
      setError(GENERIC_ERROR);
    } catch {
      setError("Could not reach the server. Check your connection and try again.");
    }
    setPending(false);
  }

  return (
    <form method="post" onSubmit={onSubmit} className="mt-6 space-y-4">
      <div>
        <label htmlFor="email" className="block text-sm font-medium">
          Email
        </label>
        <input
          id="email"
          name="email"
          type="email"
          autoComplete="username"
          required
          className="mt-1 block w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm dark:border-zinc-700 dark:bg-zinc-950"
        />
      </div>
      <div>
        <label htmlFor="password" className="block text-sm font-medium">
          Password
        </label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          className="mt-1 block w-full rounded-md border border-zinc-300 bg-white px-3 py-2 text-sm dark:border-zinc-700 dark:bg-zinc-950"
        />
      </div>
      {error ? (
        <p data-testid="login-error" role="status" className="rounded-md bg-red-50 px-3 py-2 text-sm text-red-800 dark:bg-red-950 dark:text-red-200">
          {error}
        </p>
      ) : null}
      <SubmitButton pending={pending} pendingLabel="Signing in…" className={`w-full ${buttonClass}`}>
        Sign in
      </SubmitButton>
    </form>
  );
}
