#!/usr/bin/env bash
# The published crates as a user gets them: `cargo publish --dry-run` for
# stencil-rt and stencil-build (each packaged and built alone, against
# crates.io), then a crate made outside the workspace from the template,
# its dependencies pointed at the unpacked `.crate` files (as a registry
# would serve them), built and tested: both dtypes of its spec, through
# slices and `ndarray` arrays, on the OpenMP backend and the reference. Also the packaged stencil-build's own
# tests, which must not need the repository.
#
# Usage: scripts/packages/check.sh [SCRATCH_DIR]   (default: a new temporary folder)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
scratch=${1:-$(mktemp -d)}
mkdir -p "$scratch"

cargo publish --dry-run --allow-dirty -p stencil-rt
cargo publish --dry-run --allow-dirty -p stencil-build

# The .crate files (the dry runs checked them), unpacked as a registry serves them.
cargo package --allow-dirty --no-verify -p stencil-rt -p stencil-build
rm -rf "$scratch/crates" "$scratch/user"
mkdir -p "$scratch/crates"
for krate in stencil-rt stencil-build; do
    tar -xzf "target/package/$krate-0.1.0.crate" -C "$scratch/crates"
done
# Packaged files carry one fixed time: touched, a rerun in the same folder rebuilds them.
find "$scratch/crates" -type f -exec touch {} +

# A user's crate: the template, outside the workspace, on the unpacked crates.
cp -r stencil-sys-template "$scratch/user"
sed -i -e "s|path = \"../stencil-rt\"|path = \"$scratch/crates/stencil-rt-0.1.0\"|" \
    -e "s|path = \"../stencil-build\"|path = \"$scratch/crates/stencil-build-0.1.0\"|" \
    "$scratch/user/Cargo.toml"
grep -q "$scratch/crates" "$scratch/user/Cargo.toml"
cp Cargo.lock "$scratch/user/Cargo.lock"
# The workspace's builds need not have downloaded every crate the user's
# features pull in (ndarray's build dependencies); fetched at the locked versions.
(cd "$scratch/user" && cargo fetch)
(cd "$scratch/user" && CARGO_TARGET_DIR="$scratch/target" cargo test --offline --features ndarray)

# The packaged generator's own tests, in its unpacked folder.
(cd "$scratch/crates/stencil-build-0.1.0" && cargo fetch && CARGO_TARGET_DIR="$scratch/target" cargo test --offline --lib --tests)
echo "packages: ok ($root)"
