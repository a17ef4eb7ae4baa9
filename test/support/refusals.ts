// How many notifications the door refused, as the health page counts them: rows are per shop,
// reason and minute, each with its count.
import type { Database } from "../../app/db/database.server";

export async function refusalsCounted(db: Pick<Database, "rejectedWebhook">, where: { shopId: string; reason?: string }): Promise<number> {
  const summed = await db.rejectedWebhook.aggregate({ where, _sum: { count: true } });
  return summed._sum.count ?? 0;
}
