"use client";

import { useSyncExternalStore } from "react";

const noSubscribe = () => () => {};

/** False during server render and hydration: submit buttons stay disabled until a click can run the action. */
export function useHydrated(): boolean {
  return useSyncExternalStore(
    noSubscribe,
    () => true,
    () => false,
  );
}
