#!/usr/bin/env bash
# Builds mpi-check and mpi-bench here (no GPU needed: nvcc from the pinned
# PyPI wheels, as .ci/run installs it) into .device/mpi, with run.sh, and
# copies the system's OpenMPI (Debian's libopenmpi-dev openmpi-bin, installed
# here) into .device/ompi, relocatable through OPAL_PREFIX, for the GPU
# machine, which downloads nothing. Both folders are ignored by git; carry
# them to the device and run `bash .device/mpi/run.sh all` there.
set -euo pipefail
cd "$(dirname "$0")/../.."
CUDA_VENV="${HOME}/.cache/cuda13"
export CUDA_PATH="$("${CUDA_VENV}/bin/python" -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')"
export PATH="${CUDA_PATH}/bin:${PATH}"
mkdir -p .device/mpi/cuda .device/mpi/cpu
STENCIL_CUDA_ARCH="${STENCIL_CUDA_ARCH:-sm_90}" cargo build --release -p stencil-mpi-tests --features mpi,cuda --bins
cp target/release/mpi-check target/release/mpi-bench .device/mpi/cuda/
# The host's ranks with AVX-512 (the GPU machine's Xeon); `--target` keeps the
# flags off the build scripts.
RUSTFLAGS="-C target-cpu=x86-64-v4" cargo build --release -p stencil-mpi-tests --features mpi --bins \
    --target x86_64-unknown-linux-gnu
cp target/x86_64-unknown-linux-gnu/release/mpi-bench .device/mpi/cpu/
cp scripts/mpi/run.sh .device/mpi/run.sh

# OpenMPI: mpirun, its libraries and components, PMIx, their help files, and
# the shared libraries they need beyond the C runtime. The components of
# fabrics a single machine does not use (UCX, OFI, verbs, PSM) and OpenSHMEM
# are left out: 13 MB instead of 40.
D=.device/ompi
L=/usr/lib/x86_64-linux-gnu
rm -rf "$D" && mkdir -p "$D/usr/bin" "$D/lib" "$D/usr/lib/x86_64-linux-gnu" "$D/usr/share" "$D/etc"
cp /usr/bin/orterun "$D/usr/bin/"
cp -rL "$L/openmpi" "$L/pmix2" "$D/usr/lib/x86_64-linux-gnu/"
cp -rL /usr/share/openmpi "$D/usr/share/"
cp -rL /etc/openmpi "$D/etc/" 2>/dev/null || true
for f in /usr/bin/orterun "$L/libmpi.so.40" $(find "$L/openmpi" "$L/pmix2" -name '*.so*'); do
    ldd "$f" 2>/dev/null | awk '/=>/ {print $3}'
done | sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux-x86-64|libgcc_s|libstdc\+\+)\.so' \
    | while read -r lib; do cp -L "$lib" "$D/lib/"; done
cp -L "$L/libgomp.so.1" "$D/lib/"
(cd "$D/usr/lib/x86_64-linux-gnu/openmpi/lib" && rm -rf include pkgconfig libmpi_java.so libmpi_usempi* libmpi_mpifh.so \
    liboshmem.so libmpi_cxx.so libmpi.so libopen-pal.so libopen-rte.so libmca_common_*.so)
rm -rf "$D/usr/lib/x86_64-linux-gnu/openmpi/include"
(cd "$D/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3" && rm -f mca_pml_ucx.so mca_osc_ucx.so mca_spml_* mca_sshmem_* \
    mca_scoll_* mca_atomic_* mca_btl_openib.so mca_mtl_* mca_btl_ofi.so mca_btl_usnic.so mca_btl_uct.so mca_memheap_* \
    mca_coll_hcoll.so mca_pml_yalla.so)
(cd "$D/lib" && rm -f liboshmem.so.40 libmpi_mpifh.so.40 libuc*.so.0 libfabric.so.1 libpsm* libibverbs.so.1 \
    librdmacm.so.1 libefa.so.1 libinfinipath.so.4 libmca_common_ucx.so.40 libmca_common_ofi.so.10 \
    libmca_common_verbs.so.40 libnl-*)
rm -rf "$D/usr/lib/x86_64-linux-gnu/pmix2/include" "$D/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix."*
du -sh .device/mpi "$D"
