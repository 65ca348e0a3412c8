# Sourced by the checks of the collection as it ships (sanity, docs-lint, artifact-check).
# shellcheck shell=bash

# install_artifact TOP WORK: build the collection at TOP with galaxy.yml's build_ignore into WORK,
# and install it into WORK/collections, as a user's collections path holds it.
install_artifact() {
  local top=$1 work=$2
  ansible-galaxy collection build --output-path "$work" "$top" >/dev/null
  ansible-galaxy collection install --force --no-deps --collections-path "$work/collections" \
    "$work"/pharos-hpc-*.tar.gz 2>&1 | grep -v -e 'is not part of the configured' -e '^Starting' \
    -e '^Process' -e '^Installing' -e 'was installed successfully' || true
}
