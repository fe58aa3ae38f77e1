# Sourced by build-acoustic.sh, build-cells.sh and build-quads.sh, with $root
# the repository's root: acoustic25 f32 kernels generated from the suite's spec.
spec="$root/examples/suite/stencils/acoustic25.stencil.toml"

generate() { # file [tiling.cuda] lines
    local f=$1; shift
    { cat "$spec"; if [ $# -gt 0 ]; then printf '\n[tiling.cuda]\n'; printf '%s\n' "$@"; fi; } > spec.toml
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/spec.toml" cuda) > "$f"
}

unsplit() { # in out: 4fb9046's launcher without the single steps on rows of whole 64-byte lines
    grep -q ' && n2 % 16 != 0) {' "$1"
    sed 's/ && n2 % 16 != 0) {/) {/' "$1" > "$2"
}
