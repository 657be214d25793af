/** The endpoint asked for does not exist (or was deleted between reading the page and the chart). */
export class SpendNotFoundError extends Error {
  override name = "SpendNotFoundError";
}
