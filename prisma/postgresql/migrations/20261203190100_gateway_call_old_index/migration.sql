-- migrate: no-transaction
-- The index the one before replaces (its columns begin the new one's). Dropped CONCURRENTLY:
-- the calls of the instances still serving are not held off meanwhile.
DROP INDEX CONCURRENTLY IF EXISTS "GatewayCall_deviceHash_at_idx";
