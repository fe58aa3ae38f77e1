#!/usr/bin/env bash
# Builds the CUDA and HIP-on-CUDA test binaries and the suite runner here (no GPU needed; nvcc
# from the pinned PyPI wheels, as .ci/run installs it) and stages them, with
# run.sh, in .device/ (ignored by git) for a machine with an NVIDIA GPU.
set -euo pipefail
cd "$(dirname "$0")/../.."
CUDA_VENV="${HOME}/.cache/cuda13"
export CUDA_PATH="$("${CUDA_VENV}/bin/python" -c 'import nvidia, os; print(os.path.join(list(nvidia.__path__)[0], "cu13"))')"
export PATH="${CUDA_PATH}/bin:${PATH}"
rm -rf .device && mkdir -p .device
# One architecture (the GPU machine's H100, sm_90): the CUDA test binary is then
# 83 MB stripped (103 MB with sm_80 too); still over the device machine's 64 MiB
# transfer, which takes it built from part of the specs at a time.
STENCIL_CUDA_ARCH="${STENCIL_CUDA_ARCH:-sm_90}" cargo test -p stencil-tests -p stencil-sys-template --features stencil-tests/cuda,stencil-sys-template/cuda \
    --no-run --message-format=json | python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"] \
            and m["target"]["name"] in ("cross_backend", "heat2d", "runtime_errors"):
        shutil.copy(m["executable"], ".device/" + m["target"]["name"])
'
# The HIP variants, their source compiled by nvcc through tests/hip-on-cuda (HIP calls mapped onto CUDA).
STENCIL_CUDA_ARCH="${STENCIL_CUDA_ARCH:-sm_90}" cargo test -p stencil-tests --features hip-on-cuda \
    --no-run --message-format=json | python3 -c '
import json, shutil, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "cross_backend":
        shutil.copy(m["executable"], ".device/cross_backend_hip")
'
STENCIL_CUDA_ARCH="${STENCIL_CUDA_ARCH:-sm_90}" cargo build --release -p suite --features cuda
cp target/release/suite scripts/gpu/run.sh examples/suite/baseline.py .device/
strip .device/cross_backend .device/cross_backend_hip .device/heat2d .device/runtime_errors .device/suite
ls -la .device
