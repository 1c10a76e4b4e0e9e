-- CreateTable
CREATE TABLE "Token" (
    "chainId" BIGINT NOT NULL,
    "address" TEXT NOT NULL,
    "symbol" TEXT NOT NULL,
    "decimals" INTEGER NOT NULL,

    CONSTRAINT "Token_pkey" PRIMARY KEY ("chainId","address")
);

-- AddForeignKey
ALTER TABLE "Token" ADD CONSTRAINT "Token_chainId_fkey" FOREIGN KEY ("chainId") REFERENCES "Network"("chainId") ON DELETE CASCADE ON UPDATE CASCADE;


-- Hand-written: the tokens of bets indexed before this migration, so that every served bet has its
-- token row. The native coin gets ETH / 18 until the indexer's next start rewrites it from the
-- network's nativeCurrency setting. Other tokens (the BetVault contract emits only the native coin)
-- get the fallback of a token whose metadata cannot be read, UNKNOWN / 0 (indexer/tokens.ts).
INSERT INTO "Token" ("chainId", "address", "symbol", "decimals")
SELECT DISTINCT "chainId", "token",
  CASE WHEN "token" = '0x0000000000000000000000000000000000000000' THEN 'ETH' ELSE 'UNKNOWN' END,
  CASE WHEN "token" = '0x0000000000000000000000000000000000000000' THEN 18 ELSE 0 END
FROM "Bet"
ON CONFLICT DO NOTHING;
