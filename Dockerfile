# One image for every service; docker-compose.yml picks the command.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY . .
USER node
EXPOSE 4000
CMD ["npx", "tsx", "gateway/main.ts"]
