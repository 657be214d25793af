import { DomainError } from "@/lib/errors";

/** A typed failure of an alerts operation, with a message fit to show to staff. */
export class AlertError extends DomainError<"not_found"> {
  override name = "AlertError";
}
