// What a DATABASE_URL names, without loading any database client: the configuration reads
// it as well as the code that opens the database.
export type DatabaseKind = "sqlite" | "postgresql";

export function databaseKind(url: string): DatabaseKind {
  return /^postgres(ql)?:\/\//.test(url) ? "postgresql" : "sqlite";
}

export function sqliteFilePath(url: string): string {
  return url.replace(/^file:/, "");
}
