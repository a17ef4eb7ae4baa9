// E-mail addresses for email_client as the gateway judges them: its order serializer checks
// the field with Django's EmailValidator (the cases below are mostly that validator's own
// test cases). The app's check and the sandbox's are both tested against these tables.

const label63 = "a".repeat(63);
const label64 = "a".repeat(64);

/** Addresses Django's EmailValidator takes, in the plain ASCII forms both checks take. */
export const EMAILS_THE_GATEWAY_TAKES: readonly string[] = [
  "email@here.com",
  "Shopper@Example.COM",
  "first.last@example.com",
  "!#$%&'*+/=?^_`{}|~-@example.com",
  "weirder-email@here.and.there.com",
  "example@valid-----hyphens.com",
  "example@valid-with-hyphens.com",
  "user@123.example.com",
  `example@atm.${label63}`,
  `example@${label63}.atm`,
  `example@${label63}.${"b".repeat(10)}.atm`,
  "shopper@xn--mller-kva.de",
  "shopper@example.xn--p1ai",
];

/** Addresses Django's EmailValidator refuses. */
export const EMAILS_THE_GATEWAY_REFUSES: readonly string[] = [
  "abc",
  "abc@",
  "abc@bar",
  "a @x.cz",
  "abc@.com",
  "something@@somewhere.com",
  "email@127.0.0.1",
  "a@b.c",
  "first..last@example.com",
  ".first@example.com",
  "first.@example.com",
  "josé@example.com",
  "user@sub_domain.com",
  "trailingdot@shouldfail.com.",
  "a\n@b.com",
  'test@example.com\n\n<script src="x.js">',
  // A domain label may not start or end with "-", nor run past 63 characters.
  "shopper@mail-.com",
  "example@invalid-.com",
  "example@-invalid.com",
  "example@invalid.com-",
  "example@inv-.alid-.com",
  "example@inv-.-alid.com",
  `example@atm.${label64}`,
  `example@${label64}.atm`,
  `example@${label64}.${"b".repeat(10)}.atm`,
  `shopper@${label64}.com`,
];

/**
 * Rarer forms Django's EmailValidator takes that the app's check refuses: a quoted local part,
 * an IP literal, "localhost", a Unicode domain, a top-level label with a digit. Leaving such an
 * address out of an order costs nothing the order needs.
 */
export const EMAILS_LEFT_OUT_THOUGH_VALID: readonly string[] = [
  '"test@test"@example.com',
  "email@[127.0.0.1]",
  "email@localhost",
  "user@müller.de",
  "example@atm.com1",
];
