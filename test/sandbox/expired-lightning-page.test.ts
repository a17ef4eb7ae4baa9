// The sandbox's hosted page of an expired Lightning (BTCL) order offers no "pay" control: the
// order service refuses to pay an expired invoice (409), as the invoice expired with the order.
import { describe, expect, it } from "vitest";
import { createOrder, info, sandboxForThisFile } from "../sandbox/helpers.js";

const t = sandboxForThisFile();
const MINUTE = 60_000;

describe("the sandbox's hosted page of an expired Lightning (BTCL) order", () => {
  it("does not offer a 'pay' control the order service refuses (the invoice expired with the order)", async () => {
    const o = await createOrder(t.sandbox, { expected_output_amount: 20, fiat: "EUR", input_currency: "BTCL" });
    t.clock.advance(16 * MINUTE);
    expect((await info(t.sandbox, o.identifier)).status).toBe("EX");

    const html = await (await fetch(o.web_url)).text();
    const payButtons = [...html.matchAll(/<button type="submit" data-action="(pay_[a-z]+)" ([a-z]*)>/g)].map(([, action, disabled]) => ({ action, enabled: disabled !== "disabled" }));
    expect(payButtons.filter((b) => b.enabled), "enabled pay controls on the page").toEqual([]);
  });
});
