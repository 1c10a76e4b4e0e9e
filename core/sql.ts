// SQL text helpers shared by the database seam, migrations, the test database harness and the
// benchmarks: one quoting rule for identifiers that cannot be bound as parameters.

/** A PostgreSQL identifier (database, schema, constraint name) as a quoted SQL identifier. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
