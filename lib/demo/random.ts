// A small seeded generator so the demo history has the same shape on every first start.

export type Random = {
  /** A float in [0, 1). */
  next: () => number;
  /** A float in [min, max). */
  between: (min: number, max: number) => number;
  /** A whole number in [min, max]. */
  int: (min: number, max: number) => number;
  pick: <T>(items: readonly T[]) => T;
};

export function seededRandom(seed: number): Random {
  // mulberry32: tiny, fast and good enough for demo data (not for anything secret).
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const between = (min: number, max: number) => min + (max - min) * next();
  const int = (min: number, max: number) => Math.floor(between(min, max + 1));
  const pick = <T>(items: readonly T[]): T => {
    const item = items[Math.floor(next() * items.length)];
    if (item === undefined) throw new Error("cannot pick from an empty list");
    return item;
  };
  return { next, between, int, pick };
}

/**
 * Splits `total` among callers in proportion to `weights`, none above `cap`. Returns what each
 * got; the sum is `total` unless every caller is full (then it is cap x callers).
 */
export function distributeCapped(total: number, weights: readonly number[], cap: number): number[] {
  const got = weights.map(() => 0);
  let remaining = Math.max(0, Math.floor(total));
  // Water filling: share out what is left among the callers still below the cap, until it fits.
  for (let round = 0; round < weights.length && remaining > 0; round++) {
    const open = got.map((g, i) => (g < cap ? i : -1)).filter((i) => i >= 0);
    const weightSum = open.reduce((s, i) => s + (weights[i] ?? 0), 0);
    if (open.length === 0 || weightSum <= 0) break;
    let handed = 0;
    for (const i of open) {
      const share = Math.floor((remaining * (weights[i] ?? 0)) / weightSum);
      const add = Math.min(cap - (got[i] ?? 0), share);
      got[i] = (got[i] ?? 0) + add;
      handed += add;
    }
    remaining -= handed;
    if (handed === 0) break;
  }
  // Rounding leftovers go one at a time to the heaviest callers with room.
  const order = weights.map((w, i) => [w, i] as const).sort((a, b) => b[0] - a[0]);
  while (remaining > 0) {
    let moved = false;
    for (const [, i] of order) {
      if (remaining === 0) break;
      if ((got[i] ?? 0) < cap) {
        got[i] = (got[i] ?? 0) + 1;
        remaining--;
        moved = true;
      }
    }
    if (!moved) break;
  }
  return got;
}
