import { inputClass, labelClass } from "@/components/ui";
import { MAX_END_SECONDS } from "@/lib/control/ends";

/**
 * When an override ends by itself, in whole hours from when it is saved (or approved); empty: it
 * lasts until someone removes it. One field for a ceiling's overrides and a budget's.
 */
export function OverrideEndField({ id, testId }: { id: string; testId?: string }) {
  return (
    <div>
      <label htmlFor={`${id}-ends`} className={labelClass}>
        Ends after (hours, optional)
      </label>
      <input
        id={`${id}-ends`}
        name="expiresInHours"
        type="text"
        inputMode="numeric"
        autoComplete="off"
        placeholder="lasts"
        aria-describedby={`${id}-ends-hint`}
        className={inputClass}
        data-testid={testId}
      />
      <p id={`${id}-ends-hint`} className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
        1 to {MAX_END_SECONDS / 3_600}; the account then goes back to its plan&apos;s value or the own one. Ending below that is a raise.
      </p>
    </div>
  );
}
