import { DomainError } from "@/lib/errors";

/** The endpoint asked for does not exist (or was deleted between reading the page and the chart). */
export class SpendNotFoundError extends DomainError<"not_found"> {
  override name = "SpendNotFoundError";
  constructor(message: string) {
    super("not_found", message);
  }
}
