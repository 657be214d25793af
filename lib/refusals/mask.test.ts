import { describe, expect, it } from "vitest";
import { maskCaller, maskDestination, maskEmail, maskPhone } from "./mask";

describe("masking for exports", () => {
  it("masks e-mail addresses to the first letters and the top-level domain", () => {
    expect(maskEmail("john.doe@gmail.com")).toBe("j***@g***.com");
    expect(maskEmail("maria.lopez@example.co.uk")).toBe("m***@e***.uk");
    expect(maskEmail("a@localhost")).toBe("a***@l***");
  });

  it("masks phone numbers to the first digit and the last four", () => {
    expect(maskPhone("+14155554567")).toBe("+1******4567");
    expect(maskPhone("+44 7700 900123")).toBe("+4*******0123");
    expect(maskPhone("12")).toBe("***");
  });

  it("masks callers keeping a type prefix and the last two characters", () => {
    expect(maskCaller("acct_7h3k9q89")).toBe("acct_***89");
    expect(maskCaller("acct_12")).toBe("acct_***");
    expect(maskCaller("customer-4711-xyz")).toBe("***yz");
    expect(maskCaller("ops@example.com")).toBe("o***@e***.com");
    expect(maskCaller("+14155554567")).toBe("+1******4567");
    expect(maskCaller("")).toBe("");
  });

  it("masks destinations by their kind", () => {
    expect(maskDestination("jane@example.org")).toBe("j***@e***.org");
    expect(maskDestination("+12125550142")).toBe("+1******0142");
    expect(maskDestination("https://hooks.example.com/x")).toBe("ht***/x");
    expect(maskDestination("")).toBe("");
  });

  it("never leaves the original value in the output", () => {
    const values = ["john.doe@gmail.com", "+14155554567", "acct_7h3k9q89", "https://hooks.example.com/secret-path"];
    for (const v of values) {
      expect(maskDestination(v)).not.toContain(v);
      expect(maskCaller(v)).not.toContain(v);
    }
  });
});
