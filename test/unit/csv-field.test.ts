// One field of the payments CSV file: empty for nothing, quoted (quotes doubled) when it holds a
// quote, comma, semicolon, tab or line break, and a value a spreadsheet would run as a formula written as text.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { csvField, exportFileName } from "../../app/admin/payments-export.server";

describe("csvField", () => {
  it("writes plain values as they are, and nothing as an empty field", () => {
    expect(csvField(null)).toBe("");
    expect(csvField("")).toBe("");
    expect(csvField("49.90")).toBe("49.90");
    expect(csvField("0.012345678901234567")).toBe("0.012345678901234567");
  });

  it("quotes a field holding a quote, a comma or a line break, doubling its quotes", () => {
    expect(csvField('say "hi", then\nleave')).toBe('"say ""hi"", then\nleave"');
    expect(csvField("a\r\nb")).toBe('"a\r\nb"');
  });

  it("quotes a field holding a semicolon or a tab, which a spreadsheet splitting on them (a Spanish or German Excel) would cut into cells, one of them starting like a formula", () => {
    expect(csvField('0xab;=HYPERLINK("https://attacker.example")')).toBe('"0xab;=HYPERLINK(""https://attacker.example"")"');
    expect(csvField("a\t@SUM(A1)")).toBe('"a\t@SUM(A1)"');
  });

  it("writes a value starting like a formula as text", () => {
    for (const value of ["=1+1", "+1", "-1", "@SUM(A1)", "\tx", "\rx"]) expect(csvField(value).replace(/^"|"$/g, "")).toBe(`'${value}`);
  });

  it("reads back as the value, whatever it holds, once the apostrophe of a formula-like one is taken off", () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        const field = csvField(value);
        const unquoted = field.startsWith('"') ? field.slice(1, -1).replace(/""/g, '"') : field;
        expect(/^[=+\-@\t\r]/.test(value) ? unquoted.slice(1) : unquoted).toBe(value);
        // Unquoted, a field holds no character that would end or split it.
        if (!field.startsWith('"')) expect(field).not.toMatch(/[",;\t\r\n]/);
      }),
    );
  });

  it("names the file after the shop and the UTC day", () => {
    expect(exportFileName("demo-shop.myshopify.com", new Date("2026-11-30T23:59:59Z"))).toBe("payments-demo-shop-2026-11-30.csv");
  });
});
