"use client";

import { useSyncExternalStore } from "react";

const noSubscribe = () => () => {};

/** False until hydrated: an early click would otherwise submit a plain form without the action. */
export function useHydrated(): boolean {
  return useSyncExternalStore(noSubscribe, () => true, () => false);
}
