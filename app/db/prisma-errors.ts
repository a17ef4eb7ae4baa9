// What a refused write means, told from the Prisma error it threw. Both generated clients
// (SQLite, PostgreSQL) share one runtime, so one check serves both databases.
import { Prisma } from "../../generated/prisma/sqlite/client";

/** The write broke a unique constraint: the row it meant to add is there already (P2002). */
export function isUniqueViolation(error: unknown): boolean {
  return error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002";
}
