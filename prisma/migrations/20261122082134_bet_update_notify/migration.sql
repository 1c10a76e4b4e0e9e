-- Wake-up for the realtime publisher (realtime/publisher.ts): one NOTIFY on channel `bet_updates`
-- per INSERT statement into the outbox, delivered when the writing transaction commits. The payload
-- is empty on purpose: the table is the truth, listeners re-read it from their last seq.
CREATE FUNCTION "bet_update_notify"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('bet_updates', '');
  RETURN NULL;
END;
$$;

CREATE TRIGGER "BetUpdate_notify"
  AFTER INSERT ON "BetUpdate"
  FOR EACH STATEMENT
  EXECUTE FUNCTION "bet_update_notify"();
