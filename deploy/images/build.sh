#!/usr/bin/env bash
# Builds every image docker-compose.yml needs, from Debian's packages and the npm registry alone
# (no image registry is needed): the offline base (debootstrap --variant=minbase bookworm, then
# docker import), the project image (Dockerfile), PostgreSQL 15, Redis 7, nginx, Prometheus and
# the local chain (anvil). Run as root on a machine whose Docker daemon runs:
#   deploy/images/build.sh            build what is missing or stale (Docker's layer cache)
#   deploy/images/build.sh --no-cache rebuild every layer (the base is kept)
# Builds run one at a time with host networking (RUN steps reach Debian's mirror and the npm
# registry from the host's network; no bridge address is ever used).
set -euo pipefail
cd "$(dirname "$0")/../.."

BASE_IMAGE="${BASE_IMAGE:-local/debian:bookworm-min}"
# The debootstrap output as imported; BASE_IMAGE adds the host's own CA certificates to it.
ROOTFS_IMAGE="${ROOTFS_IMAGE:-local/debian:bookworm-minbase}"
DEBIAN_MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
NPM_REGISTRY="${NPM_REGISTRY:-$(npm config get registry 2>/dev/null || echo https://registry.npmjs.org/)}"
NPM_REGISTRY="${NPM_REGISTRY%/}"
extra=("$@")

# The image names docker-compose.yml and deploy/compose.host.yml use.
PROJECT_IMAGE=bet-results-api:latest
declare -A IMAGES=(
  [postgres]=bet-results/postgres:15
  [redis]=bet-results/redis:7
  [nginx]=bet-results/nginx:1.22
  [prometheus]=bet-results/prometheus:2
  [anvil]=bet-results/anvil:1.7.1
)

seconds() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(seconds)" 'BEGIN { printf "%.1f", b - a }'; }
log() { printf '== %s\n' "$*"; }

started=$(seconds)

if docker image inspect "$ROOTFS_IMAGE" >/dev/null 2>&1; then
  log "rootfs $ROOTFS_IMAGE: present"
else
  step=$(seconds)
  rootfs=$(mktemp -d /tmp/bookworm-minbase.XXXXXX)
  trap 'rm -rf "$rootfs"' EXIT
  log "rootfs $ROOTFS_IMAGE: debootstrap --variant=minbase bookworm ($DEBIAN_MIRROR)"
  debootstrap --variant=minbase bookworm "$rootfs" "$DEBIAN_MIRROR" >/tmp/debootstrap-bookworm.log 2>&1 ||
    { tail -n 20 /tmp/debootstrap-bookworm.log >&2; exit 1; }
  # apt in the builds: no recommends, no docs (smaller layers, the same packages).
  printf 'APT::Install-Recommends "false";\nAPT::Install-Suggests "false";\n' >"$rootfs/etc/apt/apt.conf.d/90container"
  printf 'path-exclude /usr/share/doc/*\npath-exclude /usr/share/man/*\npath-exclude /usr/share/locale/*\n' >"$rootfs/etc/dpkg/dpkg.cfg.d/90container"
  rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
  tar -C "$rootfs" -c . | docker import --change 'CMD ["/bin/bash"]' - "$ROOTFS_IMAGE" >/dev/null
  rm -rf "$rootfs"
  trap - EXIT
  log "rootfs $ROOTFS_IMAGE: $(elapsed "$step") s"
fi

# The host's locally added CA certificates (/usr/local/share/ca-certificates, e.g. a TLS-inspecting
# proxy's) go into the base, so the builds' downloads trust what the host trusts: images install
# ca-certificates where they fetch over HTTPS, which picks them up.
step=$(seconds)
cadir=$(mktemp -d /tmp/base-ca.XXXXXX)
cp /usr/local/share/ca-certificates/*.crt "$cadir"/ 2>/dev/null || true
printf 'FROM %s\nCOPY . /usr/local/share/ca-certificates/\n' "$ROOTFS_IMAGE" >"$cadir/Dockerfile"
printf 'Dockerfile\n' >"$cadir/.dockerignore"
DOCKER_BUILDKIT=0 docker build --quiet -t "$BASE_IMAGE" "$cadir" >/dev/null
rm -rf "$cadir"
log "base $BASE_IMAGE: $(elapsed "$step") s"

build() {
  local tag=$1 dockerfile=$2 context=$3 step
  step=$(seconds)
  log "build $tag ($dockerfile)"
  # The legacy builder: one step at a time (the machine's cores are shared) with its layer cache.
  DOCKER_BUILDKIT=0 docker build --quiet --network host \
    --build-arg BASE="$BASE_IMAGE" --build-arg NPM_REGISTRY="$NPM_REGISTRY" \
    -f "$dockerfile" -t "$tag" "${extra[@]}" "$context" >/dev/null
  log "build $tag: $(elapsed "$step") s"
}

build "$PROJECT_IMAGE" Dockerfile .
for name in postgres redis nginx prometheus anvil; do
  build "${IMAGES[$name]}" "deploy/images/$name/Dockerfile" "deploy/images/$name"
done

docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E '^(bet-results|local/debian)' || true
log "all images: $(elapsed "$started") s"
