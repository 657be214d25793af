import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import { EndpointFieldInputs, type EndpointFieldsText } from "./endpoint-fields";
import { partRowsOf, previewParts } from "./part-rows";

// The priced parts of the endpoint forms, rendered as the server first sends them: each part's
// preview in words, each bad input's error at its own field, and what was typed kept as typed.

const fields: EndpointFieldsText = {
  name: "GPT-4o",
  unit: "tokens",
  parts: [
    { name: "input", price: "0.0000025" },
    { name: "output", price: "0.5abc" },
  ],
  currency: "USD",
  planAllowance: "",
  billingDay: "1",
  perCallMax: "16000",
  throttlePerMinute: "",
  throttleFailOpen: false,
};

describe("the endpoint form's priced parts", () => {
  it("previews a price per 1M tokens, keeps a bad price as typed and shows its error at the field", () => {
    const html = renderToStaticMarkup(
      <EndpointFieldInputs
        value={fields}
        onChange={() => {}}
        state={{
          status: "error",
          error: "parts[1].price must be …",
          fieldErrors: { "parts[1].price": "price must be a plain decimal of the currency per unit, such as 0.0000025, got '0.5abc'" },
        }}
      />,
    );
    expect(html).toContain("$2.50 per 1M tokens");
    expect(html).toContain('value="0.5abc"');
    expect(html).toContain('data-testid="field-error-parts[1].price"');
    expect(html).toContain("got &#x27;0.5abc&#x27;");
    // Both parts travel to the server as one field, exactly as typed.
    expect(html).toContain(`name="parts" value="${JSON.stringify(fields.parts).replaceAll('"', "&quot;")}"`);
  });

  it("keeps at least one part: the only part cannot be removed", () => {
    const html = renderToStaticMarkup(
      <EndpointFieldInputs
        value={{ ...fields, parts: [{ name: "units", price: "0.0079" }], unit: "messages" }}
        onChange={() => {}}
        state={{ status: "idle" }}
      />,
    );
    expect(html).toContain("$0.0079 per message");
    expect(html).toMatch(/<button[^>]*disabled=""[^>]*data-testid="remove-part-0"/);
  });

  it("fills the edit form from the database exactly, and previews only prices that read", () => {
    expect(
      partRowsOf([
        { name: "input", pricePico: 3_000_000 },
        { name: "output", pricePico: 15_000_000 },
      ]),
    ).toEqual([
      { name: "input", price: "0.000003" },
      { name: "output", price: "0.000015" },
    ]);
    // A worst case is never stated from a part left out: no preview until every price reads.
    expect(previewParts(fields.parts)).toBeUndefined();
    expect(
      previewParts([
        { name: "input", price: "0.0000025" },
        { name: "output", price: "0.00001" },
      ]),
    ).toEqual([
      { name: "input", pricePico: 2_500_000 },
      { name: "output", pricePico: 10_000_000 },
    ]);
  });
});
