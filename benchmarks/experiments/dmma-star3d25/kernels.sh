# Sourced by the f64 experiment builds (here and in ../dmma-shapes), in the
# folder of their kernels, with $root the repository's root.
dmma_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

generate() { # letter stencil tiling-keys: the suite's stencil in f64 with [tiling.cuda] set
    sed 's/dtype *= *"f32"/dtype = "f64"/' "$root/examples/suite/stencils/$2.stencil.toml" > "$1_$2.toml"
    printf '\n[tiling.cuda]\n%b\n' "$3" >> "$1_$2.toml"
    (cd "$root" && cargo run -q -p stencil-build --example generate -- "$OLDPWD/$1_$2.toml" cuda) > "$1_$2_f64.cu"
}

baselines() { # [script letter]: A (`stream`) and T (`tensor`) of star3d25 and acoustic25; with a script, also T rewritten by it (python3 SCRIPT IN OUT) into the letter's kernel
    for s in star3d25 acoustic25; do
        generate A $s 'strategy = "stream"'
        generate T $s 'strategy = "tensor"'
        if [ $# -eq 2 ]; then
            python3 "$1" "T_${s}_f64.cu" "$2_${s}_f64.cu"
        fi
    done
}

dmma_variant() { # letter stencil macros...: star_dmma.cu with the macros defined
    local v=$1 s=$2; shift 2
    { for m in "$@"; do echo "#define $m"; done; cat "$dmma_dir/star_dmma.cu"; } > "${v}_${s}_f64.cu"
    # the harness takes the first launcher it finds: keep only this stencil's
    local other=acoustic25; [ "$s" = acoustic25 ] && other=star3d25
    sed -i "/stencils_cuda__${other}__update_u/d" "${v}_${s}_f64.cu"
}
