// How a wrapper hands back "the same client, with some methods guarded": a Proxy that answers the
// guarded paths (e.g. chat.completions.create) and passes everything else to the SDK's own client,
// bound to it, so private fields and every other method work as before.
import type { CallOptions } from "./guard.js";

/** A method replaced by the wrapper: the SDK's own, given the per-call options. */
export type Guarded = (call: CallOptions | undefined, original: (...args: unknown[]) => unknown, args: unknown[]) => unknown;

/** `paths`: dotted paths of methods to guard, e.g. `{ "chat.completions.create": guard }`. */
export function guardMethods<C extends object>(client: C, paths: Record<string, Guarded>, call: CallOptions | undefined): C {
  const wrap = (target: object, prefix: string): object =>
    new Proxy(target, {
      get(obj, prop) {
        const value: unknown = Reflect.get(obj, prop, obj);
        if (typeof prop !== "string") return value;
        const path = prefix === "" ? prop : `${prefix}.${prop}`;
        const guard = paths[path];
        if (guard && typeof value === "function") {
          const original = (value as (...a: unknown[]) => unknown).bind(obj);
          return (...args: unknown[]) => guard(call, original, args);
        }
        // A resource may be an object or, as Twilio's lists are, a callable function with methods.
        const resource = value !== null && (typeof value === "object" || typeof value === "function");
        if (resource && Object.keys(paths).some((p) => p.startsWith(`${path}.`))) return wrap(value, path);
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(obj) : value;
      },
    });
  return wrap(client, "") as C;
}

/** The wrapped client, and the same client for one call's account, destination or idempotency key. */
export type WithCeilings<C> = C & {
  /** The wrapped client for calls made with these options (an account, a destination, an idempotency key). */
  withCall(call: CallOptions): C;
};

export function withCallOptions<C extends object>(client: C, paths: Record<string, Guarded>): WithCeilings<C> {
  const base = guardMethods(client, paths, undefined);
  return new Proxy(base, {
    get(obj, prop) {
      if (prop === "withCall") return (call: CallOptions) => guardMethods(client, paths, call);
      return Reflect.get(obj, prop, obj);
    },
  }) as WithCeilings<C>;
}
