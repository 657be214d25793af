// Whether this run is on CI, read from $CI as CI services set it ("true", "1"); unset, "", "0" and
// "false" in any case mean a local run. scripts/test.sh reads it the same way in bash.

export function isCi(ci: string | undefined): boolean {
  return ci !== undefined && ci !== "" && ci !== "0" && ci.toLowerCase() !== "false";
}
