"use client";

import { useActionState, useId, useState } from "react";
import { IDLE, type ActionState } from "@/app/_lib/action-state";
import { runAction } from "@/app/(dashboard)/actions";
import { FieldError } from "@/app/(dashboard)/endpoints/_components/field-error";
import { ActionMessage } from "@/components/action-message";
import { SubmitButton } from "@/components/submit-button";
import { inputClass, labelClass } from "@/components/ui";

// Import a usage file by hand: chosen with a file input and read here, in the browser, into the
// text area (the form posts text, never a file), or pasted. A refused file lists every bad line
// with its reason; nothing of it was written.

const importAction = runAction.bind(null, "usage_source.import");

/** The bad lines of a refused file, in order, from the action's per-field errors (`line 3`). */
function badLines(state: ActionState): [string, string][] {
  if (state.status !== "error" || !state.fieldErrors) return [];
  return Object.entries(state.fieldErrors).filter(([k]) => k.startsWith("line ") || k === "lines" || k === "file");
}

export function ImportForm({ sourceId }: { sourceId: number }) {
  const id = useId();
  const [state, formAction, pending] = useActionState(importAction, IDLE);
  const [text, setText] = useState("");
  const [format, setFormat] = useState("");
  const [readError, setReadError] = useState<string | null>(null);
  const lines = badLines(state);

  async function read(file: File | undefined) {
    setReadError(null);
    if (!file) return;
    try {
      setText(await file.text());
      if (file.name.toLowerCase().endsWith(".json")) setFormat("json");
      else if (file.name.toLowerCase().endsWith(".csv")) setFormat("csv");
    } catch {
      setReadError(`${file.name} could not be read`);
    }
  }

  return (
    <form action={formAction} className="space-y-3" data-testid="import-form">
      <input type="hidden" name="sourceId" value={sourceId} />
      <div className="grid gap-3 sm:grid-cols-[1fr_max-content]">
        <div>
          <label htmlFor={`${id}-file`} className={labelClass}>
            File
          </label>
          {/* No name: the file is read into the text below; the form itself sends text only. */}
          <input
            id={`${id}-file`}
            type="file"
            accept=".csv,.json,text/csv,application/json,text/plain"
            onChange={(e) => void read(e.target.files?.[0])}
            className="mt-1 block w-full text-sm"
            data-testid="import-file"
          />
          {readError ? <p className="mt-1 text-xs text-red-700 dark:text-red-400">{readError}</p> : null}
        </div>
        <div>
          <label htmlFor={`${id}-format`} className={labelClass}>
            Format
          </label>
          <select
            id={`${id}-format`}
            name="format"
            value={format}
            onChange={(e) => setFormat(e.target.value)}
            className={inputClass}
            data-testid="import-format"
          >
            <option value="">As it looks</option>
            <option value="csv">CSV</option>
            <option value="json">JSON</option>
          </select>
        </div>
      </div>
      <div>
        <label htmlFor={`${id}-text`} className={labelClass}>
          Rows
        </label>
        <textarea
          id={`${id}-text`}
          name="text"
          rows={8}
          spellCheck={false}
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder={"date,item,units,cost\n2026-12-01,postmark.outbound,12000,\n2026-12-01,llm.gpt-4o,1000,2.50"}
          className={`${inputClass} font-mono text-xs`}
          data-testid="import-text"
        />
        <p className="mt-1 text-xs text-zinc-600 dark:text-zinc-400">
          CSV with the header <code className="font-mono">date,item,units,cost</code> (cost optional), or a JSON array of {"{date, item, units, cost}"}. Dates
          are the provider&apos;s days; each day in the file replaces that day whole.{" "}
          {text.length > 0 ? `${text.length.toLocaleString("en-US")} characters.` : ""}
        </p>
        <FieldError state={state} name="text" />
      </div>
      <SubmitButton pending={pending} pendingLabel="Importing…" testId="import-usage">
        Import
      </SubmitButton>
      <ActionMessage state={state} testId="import-usage" />
      {lines.length > 0 ? (
        <div
          className="max-h-80 overflow-y-auto rounded-md border border-red-200 p-2 dark:border-red-900"
          tabIndex={0}
          role="region"
          aria-label="Bad lines of the file"
        >
          <ol className="space-y-1 text-sm text-red-800 dark:text-red-300" data-testid="import-bad-lines">
            {lines.map(([line, reason]) => (
              <li key={line} data-line={line}>
                <span className="font-medium">{line === "lines" ? "" : line === "file" ? "The file: " : `${line.replace("line ", "Line ")}: `}</span>
                {reason}
              </li>
            ))}
          </ol>
        </div>
      ) : null}
    </form>
  );
}
