# One image for every service; docker-compose.yml picks the command (an entry point of bin/).
# Node 24 is the active LTS line (several dependencies want Node >= 22.12).
FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
# Production dependencies only (deploy/image.test.ts checks every entry point needs nothing else).
RUN npm ci --omit=dev --no-audit --no-fund
COPY . .
# The live page (web/dist/), served as files by the gateway.
RUN npm run build
USER node
EXPOSE 4000
CMD ["npx", "tsx", "bin/gateway.ts"]
