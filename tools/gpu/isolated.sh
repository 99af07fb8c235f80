#!/usr/bin/env bash
# Runs a command where this machine's own copies of the packages .gpu-deps carries are out of
# sight, so that a dry run of tools/gpu_check.sh proves the build needs nothing but the prepared
# packages: a private mount namespace (unshare; as root, or as a user with user namespaces) in
# which every file of those packages reads as empty (/dev/null bound over it) and apt's lists
# are an empty tmpfs. Other processes of the machine see nothing of it.
#
#   bash tools/gpu/isolated.sh COMMAND...
#
# Sets EAGERLM_GPU_ISOLATION for the command to what was done ("none: ..." where unshare is
# refused; the dry run then says so and relies on its dependency check alone).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
debs=$here/../../.gpu-deps/debs

if [[ -z "${EAGERLM_GPU_ISOLATION:-}" ]]; then
  for how in "--mount" "--user --map-root-user --mount"; do
    # shellcheck disable=SC2086
    if unshare $how --propagation private true 2>/dev/null; then
      exec unshare $how --propagation private env EAGERLM_GPU_ISOLATION=entering bash "$0" "$@"
    fi
  done
  export EAGERLM_GPU_ISOLATION="none: unshare refused here, the system's copies stay visible"
  exec "$@"
fi

# Inside the namespace. pkgconf and pkg-config give /usr/bin/pkg-config; libopenblas-dev the
# alternatives' links (they end in the files hidden here).
mapfile -t packages < <(cat "$debs/PACKAGES"; printf '%s\n' pkgconf pkg-config libopenblas-dev libopenblas0)
hidden=0
for pkg in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || continue
  while IFS= read -r f; do
    [[ -d "$f" || ! -e "$f" ]] && continue
    mount --bind /dev/null "$f"
    hidden=$((hidden + 1))
  done < <(dpkg-query -L "$pkg")
done
[[ -d /var/lib/apt/lists ]] && mount -t tmpfs tmpfs /var/lib/apt/lists
export EAGERLM_GPU_ISOLATION="mount namespace: ${hidden} files of the system's copies of the carried packages read as empty, apt lists empty"
exec "$@"
