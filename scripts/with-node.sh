#!/usr/bin/env bash
# Runs a command on one of the Node.js lines this project supports, 22 or 24:
#
#   scripts/with-node.sh 24 npm test
#   scripts/with-node.sh 22 npm run bench
#
# When the `node` on PATH is already of that line, the command runs as it is. Otherwise the latest
# release of the line is installed once from the npm registry (the `node` package) into a cache
# outside the project, and the command runs with that Node first on PATH, so that npm, npx and every
# package script use it. Native addons built meanwhile (`npm ci`, `npm rebuild`) are built against
# that Node's own headers, which the package ships.
#
# PETSTORE_NODE_CACHE chooses the cache (default: ~/.cache/petstore-orders/node).
set -euo pipefail

usage() {
  echo "usage: scripts/with-node.sh <22|24> <command> [args...]" >&2
  exit 2
}
[ $# -ge 2 ] || usage
line=$1
shift
case "$line" in
  22 | 24) ;;
  *)
    echo "with-node.sh: Node.js line must be 22 or 24 (the lines this project supports), not '$line'" >&2
    exit 2
    ;;
esac

current=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || true)
if [ "$current" = "$line" ]; then
  exec "$@"
fi

cache=${PETSTORE_NODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/petstore-orders/node}
prefix="$cache/$line"
find_home() {
  # The `node` package installs the binary for this platform as node_modules/node/node_modules/node-<os>-<arch>.
  local bin
  for bin in "$prefix"/node_modules/node/node_modules/node-*/bin/node; do
    [ -x "$bin" ] && "$bin" --version >/dev/null 2>&1 && { dirname "$(dirname "$bin")"; return 0; }
  done
  return 1
}

if ! home=$(find_home); then
  echo "with-node.sh: installing Node.js $line into $prefix (once)" >&2
  mkdir -p "$prefix"
  # A lock, so that two commands started together do not install into the same folder at once.
  exec 9>"$prefix.lock"
  flock 9
  if ! home=$(find_home); then
    [ -f "$prefix/package.json" ] || echo '{"private": true}' >"$prefix/package.json"
    npm install --prefix "$prefix" --no-save --no-audit --no-fund --loglevel=error "node@$line" >&2
    home=$(find_home) || {
      echo "with-node.sh: npm installed node@$line, but no working node binary was found under $prefix" >&2
      exit 1
    }
  fi
  exec 9>&-
fi

export PATH="$home/bin:$PATH"
export npm_config_nodedir="$home"
# The commands the CLI suggests then start with this script, since the machine's own node would refuse them.
export PETSTORE_NODE_LINE="$line"
exec "$@"
