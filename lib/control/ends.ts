/**
 * The longest a temporary change may last, on every path: a raise with an end, an override that
 * ends by itself. Longer is a lasting change, asked as one.
 */
export const MAX_END_SECONDS = 31 * 24 * 60 * 60;
