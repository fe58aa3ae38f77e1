# Sourced by the f64 experiment builds (here and in ../dmma-shapes), in the
# folder of their kernels, with $root the repository's root.
dmma_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

generate() { # letter stencil tiling-keys: the suite's stencil in f64 with [tiling.cuda] set
    sed 's/dtype *= *"f32"/dtype = "f64"/' "$root/examples/suite/stencils/$2.stencil.toml" > "$1_$2.toml"
    printf '\n[tiling.cuda]\n%b\n' "$3" >> "$1_$2.toml"
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/$1_$2.toml" cuda) > "$1_$2_f64.cu"
}

dmma_variant() { # letter stencil macros...: star_dmma.cu with the macros defined
    local v=$1 s=$2; shift 2
    { for m in "$@"; do echo "#define $m"; done; cat "$dmma_dir/star_dmma.cu"; } > "${v}_${s}_f64.cu"
    # the harness takes the first launcher it finds: keep only this stencil's
    local other=acoustic25; [ "$s" = acoustic25 ] && other=star3d25
    sed -i "/stencils_cuda__${other}__update_u/d" "${v}_${s}_f64.cu"
}
