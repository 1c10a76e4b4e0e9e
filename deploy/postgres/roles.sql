-- Database roles of the production topology, one per kind of work (least privilege):
--   :"migrator"  owns the schema: runs the migrations (the one-shot `migrate` service);
--   :"writer"    reads and writes rows: the indexer and the outbox publisher (which prunes);
--   :"reader"    reads rows only: subgraphs, gateways, realtime nodes;
--   bets_usage_writer  the gateways' schema usage recording (SCHEMA_USAGE_DATABASE_URL): the usage
--                      tables only, granted by their migration (20261127110000_schema_usage).
-- Tables are created later by the migrator, so privileges are granted as DEFAULT PRIVILEGES of
-- the migrator's objects. Idempotent: safe to run again. Run with psql as a superuser, e.g.
--   psql -v migrator=bets_migrator -v migrator_password=… -v writer=bets_writer \
--        -v writer_password=… -v reader=bets_reader -v reader_password=… -d bets -f roles.sql
\set ON_ERROR_STOP on

SELECT format('CREATE ROLE %I LOGIN', :'migrator') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'migrator') \gexec
SELECT format('CREATE ROLE %I LOGIN', :'writer') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'writer') \gexec
SELECT format('CREATE ROLE %I LOGIN', :'reader') WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'reader') \gexec
ALTER ROLE :"migrator" PASSWORD :'migrator_password';
ALTER ROLE :"writer" PASSWORD :'writer_password';
ALTER ROLE :"reader" PASSWORD :'reader_password';
SELECT 'CREATE ROLE bets_usage_writer LOGIN' WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'bets_usage_writer') \gexec
-- Its password only when given (-v usage_writer_password=…): without one it cannot log in.
\if :{?usage_writer_password}
SELECT format('ALTER ROLE bets_usage_writer PASSWORD %L', :'usage_writer_password') \gexec
\endif

-- A reader's sessions refuse writes even if a grant slips through.
ALTER ROLE :"reader" SET default_transaction_read_only = on;

SELECT format('GRANT CONNECT ON DATABASE %I TO %I, %I, %I', current_database(), :'migrator', :'writer', :'reader') \gexec
GRANT USAGE, CREATE ON SCHEMA public TO :"migrator";
GRANT USAGE ON SCHEMA public TO :"writer", :"reader";
SELECT format('GRANT CONNECT ON DATABASE %I TO bets_usage_writer', current_database()) \gexec
GRANT USAGE ON SCHEMA public TO bets_usage_writer;

ALTER DEFAULT PRIVILEGES FOR ROLE :"migrator" IN SCHEMA public GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO :"writer";
ALTER DEFAULT PRIVILEGES FOR ROLE :"migrator" IN SCHEMA public GRANT USAGE, SELECT, UPDATE ON SEQUENCES TO :"writer";
ALTER DEFAULT PRIVILEGES FOR ROLE :"migrator" IN SCHEMA public GRANT SELECT ON TABLES TO :"reader";

-- Objects the migrator already made, when the script runs again on an existing database.
SELECT format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO %I', :'writer') \gexec
SELECT format('GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA public TO %I', :'writer') \gexec
SELECT format('GRANT SELECT ON ALL TABLES IN SCHEMA public TO %I', :'reader') \gexec
SELECT 'GRANT SELECT, INSERT, UPDATE, DELETE ON "SchemaUsageOperation", "SchemaUsageHourly" TO bets_usage_writer'
  WHERE to_regclass('public."SchemaUsageHourly"') IS NOT NULL \gexec
