// `npm run credentials:rotate`: once every instance encrypts with the new key (first in
// CREDENTIALS_ENCRYPTION_KEYS, the old one kept after it; README.md has the order of the
// deploys), re-seals every stored credential and Shopify token with the new key (and seals the
// Shopify tokens still stored in clear). The app can keep serving meanwhile: a shop whose
// credentials or token change during the run keeps the change. A value none of the keys opens
// is listed by shop and left as it is; the run goes on with the others.
//
// Exit code: 0 once nothing is left on old keys (the old key can be removed from the list);
// 1 when some value could not be opened (see the shops listed); 2 when some values changed
// during the run and are still on old keys (run it again).
import { env } from "../app/config/env.server";
import { openConfiguredDatabase } from "../app/db/database.server";
import { createCredentialCipher } from "../app/shops/credential-cipher.server";
import { rotateCredentialEncryption, sessionsOnOldKeys, shopsOnOldKeys } from "../app/shops/shop-credentials.server";

const USAGE = `usage: npm run credentials:rotate
Re-seals every stored gateway credential and Shopify token in DATABASE_URL's database with the
first key of CREDENTIALS_ENCRYPTION_KEYS (set both, as the app's instances have them). Takes no
arguments; README.md ("Key rotation") has the order of the deploys around it.`;
const args = process.argv.slice(2);
if (args.length > 0) {
  const help = args.every((arg) => arg === "--help" || arg === "-h");
  (help ? console.log : console.error)(help ? USAGE : `unknown argument ${args[0]}\n${USAGE}`);
  process.exit(help ? 0 : 2);
}

const config = env();
// Its pool size as the app's (DATABASE_POOL_SIZE), on PostgreSQL.
const { db } = openConfiguredDatabase(config);
const cipher = createCredentialCipher(config.CREDENTIALS_ENCRYPTION_KEYS);
const report = await rotateCredentialEncryption(db, cipher);
const shopsLeft = await shopsOnOldKeys(db, cipher);
const sessionsLeft = await sessionsOnOldKeys(db, cipher);
await db.$disconnect();

console.log(`Re-sealed with key "${config.CREDENTIALS_ENCRYPTION_KEYS[0]!.id}": the credentials of ${report.shops} shop(s) and the Shopify tokens of ${report.sessions} session(s).`);
if (report.unreadable.length > 0) {
  console.error(`Could not open, with any configured key, values of ${report.unreadable.length} shop(s), left as they are:`);
  for (const { shopDomain, values } of report.unreadable) console.error(`  ${shopDomain}: ${values.join(", ")}`);
  console.error("Add the key that sealed them back to CREDENTIALS_ENCRYPTION_KEYS and run again, or have the merchant connect the gateway again (a Shopify token is replaced when the merchant next opens the app).");
}
console.log(`Left on old keys: ${shopsLeft} shop(s), ${sessionsLeft} session(s).`);
process.exitCode = report.unreadable.length > 0 ? 1 : shopsLeft + sessionsLeft > 0 ? 2 : 0;
