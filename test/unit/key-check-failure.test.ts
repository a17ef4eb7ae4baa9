// What the Connection page says when the gateway does not take a key check or a device creation:
// the gateway's own words and HTTP status where it gave them, never only an error's kind.
import { expect, it } from "vitest";
import { GatewayRejectedError, GatewayServerError, GatewayUnauthorizedError } from "../../app/gateway/errors";
import { describeKeyCheckFailure } from "../../app/shops/onboarding.server";

it("a failing gateway is named by its HTTP status, to try again later", () => {
  expect(describeKeyCheckFailure(new GatewayServerError(502))).toEqual({ ok: false, kind: "gateway_error", message: "The gateway failed to answer (HTTP 502). Try again in a few minutes." });
});

it("a refusal gives the gateway's own reason when it gave one", () => {
  expect(describeKeyCheckFailure(new GatewayRejectedError(400, "name: Ensure this field has no more than 128 characters.")).message).toBe(
    "The gateway refused the request (HTTP 400): name: Ensure this field has no more than 128 characters.",
  );
  expect(describeKeyCheckFailure(new GatewayRejectedError(405, null)).message).toBe("The gateway refused the request (HTTP 405).");
});

it("a refused key points at the key field", () => {
  expect(describeKeyCheckFailure(new GatewayUnauthorizedError(403))).toMatchObject({ kind: "unauthorized", field: "deviceKey" });
});
