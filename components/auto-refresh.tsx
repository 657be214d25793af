"use client";

import { useRouter } from "next/navigation";
import { useEffect, useState } from "react";
import { secondaryButtonClass } from "./ui";

/**
 * Re-reads the server components every few seconds so an operator watches spend move. Pausable
 * (moving content must be stoppable), and idle while the tab is hidden or a dialog is open.
 */
export function AutoRefresh({ seconds = 5 }: { seconds?: number }) {
  const router = useRouter();
  const [paused, setPaused] = useState(false);

  useEffect(() => {
    if (paused) return;
    const timer = window.setInterval(() => {
      if (document.visibilityState !== "visible") return;
      if (document.querySelector("dialog[open]")) return;
      router.refresh();
    }, seconds * 1000);
    return () => window.clearInterval(timer);
  }, [paused, router, seconds]);

  return (
    <button type="button" className={secondaryButtonClass} aria-pressed={paused} onClick={() => setPaused((p) => !p)} data-testid="auto-refresh">
      {paused ? "Resume auto-refresh" : `Auto-refresh every ${seconds} s: pause`}
    </button>
  );
}
