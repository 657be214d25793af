import { describe, expect, it } from "vitest";
import { signGet } from "./sigv4";

// AWS's Signature Version 4 test suite (docs.aws.amazon.com, "Signature Version 4 test suite",
// aws-sig-v4-test-suite): the same request signed by AWS's own reference gives these exact
// signatures, so the signer is proven against known answers and not only against our fake SES.
// The query cases are the ones that matter for SES's Query API (Action=...&Version=...): the
// parameters sorted by name then value, byte order (capitals first), and encoded as RFC 3986 says.

const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const at = new Date("2015-08-30T12:36:00Z");
const UNRESERVED = "-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const suite = (pathAndQuery: string) =>
  signGet({ url: new URL(`https://example.amazonaws.com${pathAndQuery}`), region: "us-east-1", service: "service", credentials, at });
const authorization = (signature: string) =>
  `AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=${signature}`;

describe("SigV4", () => {
  it("signs get-vanilla as AWS does", () => {
    expect(suite("/")).toEqual({
      "x-amz-date": "20150830T123600Z",
      authorization: authorization("5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
    });
  });

  it.each([
    ["get-vanilla-empty-query-key", "/?Param1=value1", "a67d582fa61cc504c4bae71f336f98b97f1ea3c7a6bfe1b6e45aec72011b9aeb"],
    ["get-vanilla-query-order-key-case", "/?Param2=value2&Param1=value1", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"],
    ["get-vanilla-query-order-key", "/?Param1=value2&Param1=Value1", "eedbc4e291e521cf13422ffca22be7d2eb8146eecf653089df300a15b2382bd1"],
    ["get-vanilla-query-order-value", "/?Param1=value2&Param1=value1", "5772eed61e12b33fae39ee5e7012498b51d56abc0abb7c60486157bd471c4694"],
    ["get-vanilla-query-order-encoded", "/?Param-3=Value3&Param=Value2&%E1%88%B4=Value1", "371d3713e185cc334048618a97f809c9ffe339c62934c032af5a0e595648fcac"],
    ["get-vanilla-query-unreserved", `/?${UNRESERVED}=${UNRESERVED}`, "9c3e54bfcdf0b19771a7f523ee5669cdf59bc7cc0884027167c21bb143a40197"],
    ["get-vanilla-utf8-query", "/?\u1234=bar", "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"],
  ])("signs %s as AWS does", (_name, pathAndQuery, signature) => {
    expect(suite(pathAndQuery).authorization).toBe(authorization(signature));
  });

  it("signs a query whatever order it is written in, and a changed parameter changes the signature", () => {
    const sign = (url: string) => signGet({ url: new URL(url), region: "us-east-1", service: "ses", credentials, at }).authorization;
    expect(sign("https://email.us-east-1.amazonaws.com/?Version=2010-12-01&Action=GetSendStatistics")).toBe(
      sign("https://email.us-east-1.amazonaws.com/?Action=GetSendStatistics&Version=2010-12-01"),
    );
    expect(sign("https://email.us-east-1.amazonaws.com/?Action=GetSendQuota&Version=2010-12-01")).not.toBe(
      sign("https://email.us-east-1.amazonaws.com/?Action=GetSendStatistics&Version=2010-12-01"),
    );
  });
});
