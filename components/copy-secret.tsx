"use client";

import { useState } from "react";

// A credential shown once (a new API key, a generated password). It lives only in this
// component's props: it is never stored, so once the page is left it cannot be shown again.
export function CopySecret({ secret, testId }: { secret: string; testId: string }) {
  const [copied, setCopied] = useState<"idle" | "copied" | "failed">("idle");
  return (
    <div className="flex flex-wrap items-center gap-2">
      <code data-testid={testId} className="select-all break-all rounded bg-zinc-100 px-2 py-1 font-mono text-zinc-900 dark:bg-zinc-800 dark:text-zinc-100">
        {secret}
      </code>
      <button
        type="button"
        onClick={() => {
          navigator.clipboard.writeText(secret).then(
            () => setCopied("copied"),
            () => setCopied("failed"),
          );
        }}
        className="rounded-md border border-zinc-300 px-2 py-1 text-xs hover:bg-zinc-100 dark:border-zinc-700 dark:hover:bg-zinc-800"
      >
        {copied === "copied" ? "Copied" : "Copy"}
      </button>
      {copied === "failed" ? <span className="text-xs text-red-700 dark:text-red-400">Copy failed: select it and copy it by hand.</span> : null}
    </div>
  );
}
