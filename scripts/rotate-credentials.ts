// `npm run credentials:rotate`: once every instance encrypts with the new key (first in
// CREDENTIALS_ENCRYPTION_KEYS, the old one kept after it; README.md has the order of the
// deploys), re-seals every stored credential with the new key. The app can keep serving
// meanwhile: a shop whose credentials change during the run keeps the change. Once it reports
// 0 shops left on old keys, the old key can be removed from the list.
import { env } from "../app/config/env.server";
import { openConfiguredDatabase } from "../app/db/database.server";
import { createCredentialCipher } from "../app/shops/credential-cipher.server";
import { rotateCredentialEncryption, shopsOnOldKeys } from "../app/shops/shop-credentials.server";

const config = env();
// Its pool size as the app's (DATABASE_POOL_SIZE), on PostgreSQL.
const { db } = openConfiguredDatabase(config);
const cipher = createCredentialCipher(config.CREDENTIALS_ENCRYPTION_KEYS);
const changed = await rotateCredentialEncryption(db, cipher);
const left = await shopsOnOldKeys(db, cipher);
console.log(`Re-sealed the credentials of ${changed} shop(s) with key "${config.CREDENTIALS_ENCRYPTION_KEYS[0]!.id}"; ${left} shop(s) left on old keys.`);
await db.$disconnect();
