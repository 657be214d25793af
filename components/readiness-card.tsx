import Link from "next/link";
import { readinessQuestionLabels, readinessQuestions, type Readiness, type ReadinessColor } from "@/lib/reconciliation/types";
import { readinessColorWords } from "@/lib/reconciliation/words";
import { cardClass } from "./ui";

// The five questions a team should answer for every feature that spends, answered from data:
// a dot and a word for each (never color alone), the number behind it, and what to do.

const dotClass: Record<ReadinessColor, string> = {
  green: "bg-emerald-600 dark:bg-emerald-400",
  amber: "bg-amber-500 dark:bg-amber-400",
  red: "bg-red-600 dark:bg-red-400",
};

const wordClass: Record<ReadinessColor, string> = {
  green: "text-emerald-800 dark:text-emerald-300",
  amber: "text-amber-800 dark:text-amber-300",
  red: "text-red-800 dark:text-red-300",
};

function ColorWord({ color }: { color: ReadinessColor }) {
  return (
    <span className={`inline-flex items-center gap-1.5 text-sm font-semibold ${wordClass[color]}`}>
      <span aria-hidden="true" className={`inline-block h-2.5 w-2.5 rounded-full ${dotClass[color]}`} />
      {readinessColorWords[color]}
    </span>
  );
}

/** The card on the endpoint page: one row per question, worst first in the heading. */
export function ReadinessCard({ readiness, id = "readiness" }: { readiness: Readiness; id?: string }) {
  const greens = readinessQuestions.filter((q) => readiness[q].color === "green").length;
  return (
    <section id={id} aria-labelledby={`${id}-title`} className={`${cardClass} space-y-3`} data-testid="readiness-card" data-color={readiness.overall}>
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2 id={`${id}-title`} className="text-lg font-semibold">
          Readiness
        </h2>
        <p className="text-sm">
          <ColorWord color={readiness.overall} /> <span className="text-zinc-600 dark:text-zinc-400">{greens} of 5 green</span>
        </p>
      </div>
      <ul className="divide-y divide-zinc-200 dark:divide-zinc-800">
        {readinessQuestions.map((q) => {
          const a = readiness[q];
          return (
            <li key={q} className="grid gap-x-4 gap-y-1 py-2 sm:grid-cols-[14rem_5rem_1fr]" data-question={q} data-color={a.color}>
              <span className="text-sm font-medium">{readinessQuestionLabels[q]}</span>
              <ColorWord color={a.color} />
              <span className="text-sm">
                <span className="font-medium" data-testid={`readiness-figure-${q}`}>
                  {a.figure}
                </span>
                <span className="block text-zinc-600 dark:text-zinc-400">{a.detail}</span>
              </span>
            </li>
          );
        })}
      </ul>
    </section>
  );
}

/** The overview's column: the worst color in words and how many of the five are green, linking to the card. */
export function ReadinessBadge({ readiness, href }: { readiness: Readiness | undefined; href: string }) {
  if (!readiness) return <span className="text-xs text-zinc-600 dark:text-zinc-400">readiness not known</span>;
  const greens = readinessQuestions.filter((q) => readiness[q].color === "green").length;
  return (
    <Link
      href={href}
      className="inline-flex items-center gap-2 underline-offset-2 hover:underline"
      data-testid="readiness-badge"
      data-color={readiness.overall}
    >
      <ColorWord color={readiness.overall} />
      <span className="text-xs text-zinc-600 dark:text-zinc-400">Readiness: {greens} of 5 green</span>
    </Link>
  );
}
