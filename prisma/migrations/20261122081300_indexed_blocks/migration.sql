-- CreateTable
CREATE TABLE "IndexedBlock" (
    "chainId" BIGINT NOT NULL,
    "number" BIGINT NOT NULL,
    "hash" TEXT NOT NULL,

    CONSTRAINT "IndexedBlock_pkey" PRIMARY KEY ("chainId","number")
);

-- AddForeignKey
ALTER TABLE "IndexedBlock" ADD CONSTRAINT "IndexedBlock_chainId_fkey" FOREIGN KEY ("chainId") REFERENCES "Network"("chainId") ON DELETE CASCADE ON UPDATE CASCADE;
