import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { Readiness, ReadinessAnswer, ReadinessColor } from "@/lib/reconciliation/types";
import { ReadinessBadge, ReadinessCard } from "./readiness-card";

// The readiness card says each answer in words beside its color: never color alone.

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replaceAll("&#x27;", "'")
    .replace(/\s+/g, " ");

const answer = (color: ReadinessColor, figure: string, detail = "why"): ReadinessAnswer => ({ color, figure, detail });

function readiness(over: Partial<Readiness> = {}): Readiness {
  return {
    reserved: answer("red", "90.0 %", "The provider billed 10 % more than Ceilings charged."),
    settled: answer("green", "0 expired of 1,204"),
    failClosed: answer("amber", "3 unavailable refusals in 7 days"),
    secondCap: answer("green", "above"),
    told: answer("green", "last delivery succeeded"),
    overall: "red",
    ...over,
  };
}

describe("readiness card", () => {
  it("gives each question its color as data, a dot and a word, with the figure and the detail", () => {
    const html = renderToStaticMarkup(<ReadinessCard readiness={readiness()} />);
    expect(html).toContain('data-testid="readiness-card"');
    expect(html).toContain('data-question="reserved" data-color="red"');
    expect(html).toContain('data-question="settled" data-color="green"');
    expect(html).toContain('data-question="failClosed" data-color="amber"');
    const words = text(html);
    expect(words).toContain("Reserved before spending Act 90.0 % The provider billed 10 % more than Ceilings charged.");
    expect(words).toContain("Fail-closed health Check 3 unavailable refusals in 7 days");
    expect(words).toContain("Someone told Good last delivery succeeded");
    expect(words).toContain("Readiness Act 3 of 5 green");
  });

  it("an all-green card says so", () => {
    const green = answer("green", "ok");
    const html = text(renderToStaticMarkup(<ReadinessCard readiness={readiness({ reserved: green, failClosed: green, overall: "green" })} />));
    expect(html).toContain("Readiness Good 5 of 5 green");
  });

  it("the overview badge: worst color in words, n of 5 green, linked to the card", () => {
    const html = renderToStaticMarkup(
      <ReadinessBadge readiness={readiness({ overall: "amber", reserved: answer("amber", "not reconciled") })} href="/endpoints/sms.send#readiness" />,
    );
    expect(html).toContain('href="/endpoints/sms.send#readiness"');
    expect(html).toContain('data-color="amber"');
    expect(text(html)).toContain("Check Readiness: 3 of 5 green");
    expect(text(renderToStaticMarkup(<ReadinessBadge readiness={undefined} href="/x" />))).toContain("readiness not known");
  });
});
