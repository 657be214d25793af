import { createHash, createHmac } from "node:crypto";

// AWS Signature Version 4 for a GET with its parameters in the query (the SES Query API), written
// with node:crypto: the SDK is a dependency for one signed request a day. Checked against AWS's
// published test suite (get-vanilla) in sigv4.test.ts, and by the fake SES, which recomputes it.

export type AwsCredentials = { accessKeyId: string; secretAccessKey: string };

const sha256 = (data: string) => createHash("sha256").update(data, "utf8").digest("hex");
const hmac = (key: Buffer | string, data: string) => createHmac("sha256", key).update(data, "utf8").digest();

/** RFC 3986 encoding as SigV4 wants it: only unreserved characters stay as they are. */
function encode(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** "20150830T123600Z" and "20150830". */
export function amzDate(at: Date): { stamp: string; day: string } {
  const stamp = at
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  return { stamp, day: stamp.slice(0, 8) };
}

/** The query sorted by encoded name, then value, each pair encoded. */
function canonicalQuery(url: URL): string {
  return [...url.searchParams]
    .map(([k, v]) => [encode(k), encode(v)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}

/**
 * The headers that sign a GET of `url` (no body): x-amz-date and authorization; the host header
 * is signed as the URL names it (fetch sends exactly that).
 */
export function signGet(p: { url: URL; region: string; service: string; credentials: AwsCredentials; at: Date }): {
  "x-amz-date": string;
  authorization: string;
} {
  const { stamp, day } = amzDate(p.at);
  const signedHeaders = "host;x-amz-date";
  const canonical = ["GET", p.url.pathname || "/", canonicalQuery(p.url), `host:${p.url.host}\nx-amz-date:${stamp}\n`, signedHeaders, sha256("")].join("\n");
  const scope = `${day}/${p.region}/${p.service}/aws4_request`;
  const toSign = ["AWS4-HMAC-SHA256", stamp, scope, sha256(canonical)].join("\n");
  const key = hmac(hmac(hmac(hmac(`AWS4${p.credentials.secretAccessKey}`, day), p.region), p.service), "aws4_request");
  const signature = createHmac("sha256", key).update(toSign, "utf8").digest("hex");
  return {
    "x-amz-date": stamp,
    authorization: `AWS4-HMAC-SHA256 Credential=${p.credentials.accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  };
}
