import { inputClass, labelClass } from "./ui";

/** The reason a change asks for: the audit log keeps it beside the change. */
export function ReasonField({ id, testId }: { id: string; testId?: string }) {
  return (
    <div>
      <label htmlFor={`${id}-reason`} className={labelClass}>
        Reason
      </label>
      <input id={`${id}-reason`} name="reason" type="text" required maxLength={500} autoComplete="off" className={inputClass} data-testid={testId} />
    </div>
  );
}
