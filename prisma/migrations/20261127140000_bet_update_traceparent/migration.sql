-- The W3C trace context of the commit that wrote each outbox row (issue 23): nullable, null when the
-- writer does not trace, so existing rows and untraced writers cost nothing but the null bit.
ALTER TABLE "BetUpdate" ADD COLUMN "traceparent" TEXT;
