// Prisma CLI configuration. Prisma runs fully offline here: the JS schema engine with a
// driver adapter (libsql for SQLite, pg for PostgreSQL), chosen by DATABASE_URL.
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { defineConfig } from "prisma/config";
import { PrismaLibSQL } from "@prisma/adapter-libsql";
import { PrismaPg } from "@prisma/adapter-pg";

const url = process.env.DATABASE_URL ?? "file:./data/app.db";
const isPostgres = /^postgres(ql)?:\/\//.test(url);

export default defineConfig({
  experimental: { adapter: true },
  engine: "js",
  schema: isPostgres ? "prisma/postgresql/schema.prisma" : "prisma/schema.prisma",
  migrations: { path: isPostgres ? "prisma/postgresql/migrations" : "prisma/migrations" },
  adapter: async () => {
    if (isPostgres) return new PrismaPg({ connectionString: url });
    const file = url.replace(/^file:/, "");
    if (file !== ":memory:") mkdirSync(dirname(file), { recursive: true });
    return new PrismaLibSQL({ url });
  },
});
