"use client";

import { useEffect, useState } from "react";
import { useHydrated } from "@/components/use-hydrated";

export function countdownText(ms: number): string {
  if (ms <= 0) return "ending now";
  const s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  const pad = (n: number) => String(n).padStart(2, "0");
  return `ends in ${d > 0 ? `${d}d ` : ""}${h > 0 || d > 0 ? `${h}h ` : ""}${pad(m)}m ${pad(s % 60)}s`;
}

/**
 * The time left of a temporary raise, ticking each second. The server renders only the end time
 * (its clock is not the reader's), the countdown joins once hydrated.
 */
export function RaiseCountdown({ endsAt, endsAtText }: { endsAt: string; endsAtText: string }) {
  const hydrated = useHydrated();
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, []);
  const end = new Date(endsAt).getTime();
  return (
    <span data-testid="raise-countdown" data-ends-at={endsAt}>
      until {endsAtText}
      {hydrated ? <span className="tabular-nums"> ({countdownText(end - now)})</span> : null}
    </span>
  );
}
