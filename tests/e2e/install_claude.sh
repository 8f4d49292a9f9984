#!/usr/bin/env bash
# Install the pinned Claude Code client used by the end-to-end tests.
#
# Idempotent: when the pinned version is already installed in the cache directory,
# nothing is downloaded. Prints the absolute path of the `claude` binary on success.
#
#   GOVERNANCE_E2E_CACHE  cache directory (default: .e2e-cache/ in this checkout, so nothing is
#                         written to the home directory; npm's own cache goes there too)
#   CLAUDE_CODE_VERSION   version to install (default: the pinned 2.1.330)
set -euo pipefail

version="${CLAUDE_CODE_VERSION:-2.1.330}"
checkout="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cache="${GOVERNANCE_E2E_CACHE:-${checkout}/.e2e-cache}"
export npm_config_cache="${cache}/npm"
prefix="${cache}/claude-code-${version}"
pkg_dir="${prefix}/node_modules/@anthropic-ai/claude-code"
native="${prefix}/node_modules/@anthropic-ai/claude-code-linux-x64/claude"

installed_version() {
    [ -f "${pkg_dir}/package.json" ] || return 1
    node -e 'process.stdout.write(require(process.argv[1]).version)' "${pkg_dir}/package.json"
}

find_binary() {
    # The package ships a per-platform native binary; prefer it over the node launcher.
    local candidate
    for candidate in "${native}" "${prefix}/node_modules/.bin/claude"; do
        if [ -x "${candidate}" ]; then
            printf '%s\n' "${candidate}"
            return 0
        fi
    done
    candidate="$(find "${prefix}/node_modules/@anthropic-ai" -maxdepth 2 -type f -name claude \
        -perm -u+x 2>/dev/null | head -n 1)"
    [ -n "${candidate}" ] || return 1
    printf '%s\n' "${candidate}"
}

if ! command -v npm >/dev/null 2>&1; then
    echo "install_claude.sh: npm is not installed (apt-get install nodejs npm)" >&2
    exit 3
fi

if [ "$(installed_version 2>/dev/null || true)" != "${version}" ] || ! find_binary >/dev/null; then
    mkdir -p "${prefix}"
    tmp="$(mktemp -d "${cache}/.install.XXXXXX")"
    trap 'rm -rf "${tmp}"' EXIT
    # --ignore-scripts: the postinstall is not needed (the native binary comes as an
    # optional dependency) and the package asks for a newer node than Debian ships.
    npm install --prefix "${tmp}" --no-audit --no-fund --no-save --ignore-scripts \
        --loglevel=error "@anthropic-ai/claude-code@${version}" >&2
    rm -rf "${prefix}"
    mv "${tmp}" "${prefix}"
    trap - EXIT
fi

binary="$(find_binary)" || {
    echo "install_claude.sh: no claude binary found under ${prefix}" >&2
    exit 4
}
"${binary}" --version >/dev/null 2>&1 || {
    echo "install_claude.sh: ${binary} does not run" >&2
    exit 5
}
printf '%s\n' "${binary}"
