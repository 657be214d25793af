"use client";

import { signOut } from "next-auth/react";
import { useState, useSyncExternalStore } from "react";

const noSubscribe = () => () => {};

export function SignOutButton() {
  // Disabled until hydrated: before that a click does nothing and the person stays signed in.
  const hydrated = useSyncExternalStore(
    noSubscribe,
    () => true,
    () => false,
  );
  const [pending, setPending] = useState(false);
  async function onClick() {
    setPending(true);
    // redirect: false, then a relative navigation: next-auth would otherwise build the URL from
    // NEXTAUTH_URL, which is wrong for a server on another port (the e2e server).
    await signOut({ redirect: false });
    window.location.assign("/login");
  }
  return (
    <button
      type="button"
      onClick={onClick}
      disabled={!hydrated || pending}
      className="rounded-md border border-zinc-300 px-3 py-1 text-sm hover:bg-zinc-100 disabled:opacity-50 dark:border-zinc-700 dark:hover:bg-zinc-800"
    >
      {pending ? "Signing out…" : "Sign out"}
    </button>
  );
}
