import { describe, expect, it } from "vitest";
import { signGet } from "./sigv4";

// AWS's Signature Version 4 test suite (docs.aws.amazon.com, "Signature Version 4 test suite"):
// the same request signed by AWS's own reference gives these exact headers.

const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const at = new Date("2015-08-30T12:36:00Z");

describe("SigV4", () => {
  it("signs get-vanilla as AWS does", () => {
    const headers = signGet({ url: new URL("https://example.amazonaws.com/"), region: "us-east-1", service: "service", credentials, at });
    expect(headers).toEqual({
      "x-amz-date": "20150830T123600Z",
      authorization: "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31",
    });
  });

  it("signs a query whatever order it is written in, and a changed parameter changes the signature", () => {
    const sign = (url: string) => signGet({ url: new URL(url), region: "us-east-1", service: "ses", credentials, at }).authorization;
    expect(sign("https://email.us-east-1.amazonaws.com/?Version=2010-12-01&Action=GetSendStatistics")).toBe(sign("https://email.us-east-1.amazonaws.com/?Action=GetSendStatistics&Version=2010-12-01"));
    expect(sign("https://email.us-east-1.amazonaws.com/?Action=GetSendQuota&Version=2010-12-01")).not.toBe(sign("https://email.us-east-1.amazonaws.com/?Action=GetSendStatistics&Version=2010-12-01"));
  });
});
