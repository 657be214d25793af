"use client";

import { useId } from "react";
import { AskForApproval, type AskKind } from "./ask-approval";
import { ReasonField } from "./reason-field";

/** A raise with nothing to type but a reason (an unarchive): asked for, or applied alone as break glass. */
export function AskRaiseForm({ kind, fields, canBreakGlass, what }: { kind: AskKind; fields: Record<string, string>; canBreakGlass: boolean; what: string }) {
  const id = useId();
  return (
    <form className="space-y-3" data-testid={`ask-form-${kind}`}>
      {Object.entries(fields).map(([name, value]) => (
        <input key={name} type="hidden" name={name} value={value} />
      ))}
      <ReasonField id={id} testId="ask-reason" />
      <AskForApproval kind={kind} canBreakGlass={canBreakGlass} what={what} />
    </form>
  );
}
