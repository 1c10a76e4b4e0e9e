-- A stored proof's numbers (pi_a, pi_c: arrays of them; pi_b: an array of such arrays) and its
-- public signals are canonical decimal strings (no sign, no leading zero, no exponent), checked
-- once when the row is written. The subgraphs serve these lists as read (subgraphs/kit/executor.ts
-- storeCheckedLists) instead of checking ~1 500 numbers again in every betResults(100) answer; a
-- number of 78 digits or more is still held to 2^256-1 there (no bound here: PostgreSQL's regular
-- expressions with a bounded repeat cost 30 times as much). jsonb prints an array of strings as
-- ["1", "2"], so each list is matched as that text (~30 us a row; a JSON path per element cost
-- more). A proof without a list passes (NULL). The indexer writes these from the BetSettled
-- event's uint256 fields (chain/betvault.ts toSnarkjsProof), so it never meets the check.
-- NOT VALID: added without reading the table (adding a checked constraint would scan it, ~30 s per
-- million results here, under a lock that stops its reads); the next migration validates the rows
-- already there under a lock that stops neither reads nor writes.
ALTER TABLE "BetResult" ADD CONSTRAINT "BetResult_proof_numbers_canonical" CHECK (
  ("proof"->'pi_a')::text ~ '^\[("(0|[1-9][0-9]*)"(, "(0|[1-9][0-9]*)")*)?\]$'
  AND ("proof"->'pi_c')::text ~ '^\[("(0|[1-9][0-9]*)"(, "(0|[1-9][0-9]*)")*)?\]$'
  AND ("proof"->'pi_b')::text ~ '^\[(\[("(0|[1-9][0-9]*)"(, "(0|[1-9][0-9]*)")*)?\](, \[("(0|[1-9][0-9]*)"(, "(0|[1-9][0-9]*)")*)?\])*)?\]$'
  AND to_jsonb("publicSignals")::text ~ '^\[("(0|[1-9][0-9]*)"(, "(0|[1-9][0-9]*)")*)?\]$'
) NOT VALID;
