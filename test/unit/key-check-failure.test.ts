// What the Connection page says when the gateway does not take a key check or a device creation:
// the gateway's own words and HTTP status where it gave them, never only an error's kind.
import { expect, it } from "vitest";
import {
  GatewayInvalidRequestError,
  GatewayInvalidResponseError,
  GatewayNetworkError,
  GatewayNotFoundError,
  GatewayOutcomeUnknownError,
  GatewayQuotaExhaustedError,
  GatewayRejectedError,
  GatewayServerError,
  GatewayThrottledError,
  GatewayTimeoutError,
  GatewayUnauthorizedError,
  type GatewayError,
} from "../../app/gateway/errors";
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

it("every kind of failure is said in words, never by the error's kind", () => {
  const server = new GatewayServerError(500);
  const failures: GatewayError[] = [
    new GatewayUnauthorizedError(401),
    new GatewayRejectedError(404, null),
    new GatewayNotFoundError("Not found."),
    new GatewayThrottledError(30),
    server,
    new GatewayNetworkError("ECONNREFUSED", true),
    new GatewayTimeoutError(8_000),
    new GatewayInvalidResponseError(["results", 0], "expected a string"),
    new GatewayInvalidRequestError(["name"], "at most 128 characters"),
    new GatewayOutcomeUnknownError("create_device", null, { cause: server }),
    new GatewayQuotaExhaustedError("general_minute", new Date("2026-11-30T12:00:00Z")),
  ];
  for (const error of failures) {
    const { message } = describeKeyCheckFailure(error);
    expect(message, error.kind).not.toContain(error.kind);
    expect(message, error.kind).toMatch(/^The (gateway|request)/);
  }
});

it("a device whose calls for the day are spent is told when it can try again, not to try in a minute", () => {
  const minute = describeKeyCheckFailure(new GatewayQuotaExhaustedError("general_minute", new Date("2026-11-30T12:00:00Z")));
  expect(minute.message).toBe("The gateway is limiting requests for this device. Try again in a minute.");
  for (const window of ["general_day", "critical_day"] as const) {
    const day = describeKeyCheckFailure(new GatewayQuotaExhaustedError(window, new Date("2026-11-30T18:42:10Z")));
    expect(day).toMatchObject({ ok: false, kind: "gateway_error" });
    expect(day.message, window).toBe("The gateway's calls for this device are used up for the day. Try again after 2026-11-30 18:42:10 UTC.");
  }
});
