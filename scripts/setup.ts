// `npm run setup`: applies the committed migrations to DATABASE_URL (SQLite by default).
import { applyMigrations } from "../app/db/migrate.server";
import { env } from "../app/config/env.server";

const url = env().DATABASE_URL;
const applied = await applyMigrations(url);
console.log(applied.length ? `Applied migrations: ${applied.join(", ")}` : "Database is up to date.");
