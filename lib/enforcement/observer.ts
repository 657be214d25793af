import type { UnavailableReason } from "./unavailable";
import type { BatchRequest } from "./batcher";
import type { BatchAnswer } from "./types";

// The one door from enforcement to metrics: the batcher, the fail-closed counter and settle report
// outcomes here, and lib/metrics installs the observer. Enforcement imports no metrics library,
// and with no observer installed (services, CLIs, tests) each call site costs one property read.
// On globalThis because Next loads a module once per route bundle, and the route that serves
// metrics must see what the reservations route counted.

export type EnforcementObserver = {
  /** One database call of the batcher: its requests, their answers (null: the call failed), its duration. */
  batch(requests: readonly BatchRequest[], answers: readonly BatchAnswer[] | null, seconds: number): void;
  unavailable(reason: UnavailableReason, count: number): void;
  settled(overrun: boolean): void;
  expired(count: number): void;
  /** Refusals that could not be stored in the refusal log (refusal-log.ts). */
  refusalLogFailed(count: number): void;
};

const holder = globalThis as typeof globalThis & { __ceilingsEnforcementObserver?: EnforcementObserver };

export function setEnforcementObserver(observer: EnforcementObserver | undefined): void {
  holder.__ceilingsEnforcementObserver = observer;
}

export function enforcementObserver(): EnforcementObserver | undefined {
  return holder.__ceilingsEnforcementObserver;
}
