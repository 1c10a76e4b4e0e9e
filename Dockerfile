# One image for every service; docker-compose.yml picks the command (an entry point of bin/).
# Node 24 is the active LTS line (several dependencies want Node >= 22.12).
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
# A larger young generation (semi-spaces up to 32 MiB, above V8's default): serving a GraphQL
# answer allocates many short-lived objects, and fewer scavenges cut the CPU per request by about a
# tenth (BENCHMARKS.md). The npm scripts that serve pass the same flag.
ENV NODE_OPTIONS="--max-semi-space-size=32"
COPY package.json package-lock.json ./
# Production dependencies only (deploy/image.test.ts checks every entry point needs nothing else).
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
# The live page (web/dist/), served as files by the gateway.
RUN npm run build
USER node
EXPOSE 4000
CMD ["npx", "tsx", "bin/gateway.ts"]
