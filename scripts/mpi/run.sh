#!/usr/bin/env bash
# Runs on the GPU machine, from the repository root, what scripts/mpi/stage.sh
# staged in .device/mpi and .device/ompi (carry both): `check`, mpi-check with
# the boxes on the GPU over 1, 2 and 4 ranks sharing it; `gpu`, mpi-bench on
# the GPU (j3d7pt f32 512^3 over ranks along z, the interior overlapped with
# the exchange and not, halos device to device and through the host; j3d7pt
# f64 and acoustic25); `mps`, the f32 runs under MPS; `cpu`, ranks x threads on
# the host's cores; `all`, the three; `multi`, one rank a GPU on a machine of
# several (weak and strong scaling). JSON lines and logs go to $OUT.
set -uo pipefail
OUT="${OUT:-out}"; mkdir -p "$OUT"
R=$PWD/.device
export OPAL_PREFIX=$R/ompi/usr
export PMIX_INSTALL_PREFIX=$R/ompi/usr/lib/x86_64-linux-gnu/pmix2
export PMIX_MCA_mca_base_component_path=$R/ompi/usr/lib/x86_64-linux-gnu/pmix2/lib/pmix
export LD_LIBRARY_PATH=$R/ompi/lib:$R/ompi/usr/lib/x86_64-linux-gnu/openmpi/lib:$LD_LIBRARY_PATH
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader,tcp OMPI_MCA_btl_vader_single_copy_mechanism=none
export OMPI_MCA_mca_base_component_show_load_errors=0
chmod +x $R/ompi/usr/bin/orterun $R/mpi/*/* 2>/dev/null
MPIRUN="$R/ompi/usr/bin/orterun --allow-run-as-root --oversubscribe --bind-to none"
MODE=${1:-all}
{
nvidia-smi -L; nproc
$MPIRUN -np 2 hostname
} > $OUT/env.txt 2>&1
cat $OUT/env.txt
if [ "$MODE" = all ] || [ "$MODE" = check ]; then
for n in 1 2 4; do timeout 200 $MPIRUN -np $n -x OMP_NUM_THREADS=1 $R/mpi/cuda/mpi-check 2>&1 | grep -v "^$" | tail -12; done > $OUT/check.txt
cat $OUT/check.txt
fi
if [ "$MODE" = all ] || [ "$MODE" = gpu ]; then
# Ranks along z sharing the GPU: halos device to device (the default) and
# through the host, the interior overlapped with the exchange and not.
bench() { # ranks, stencil shape, steps an exchange, dims, then overlap|serial and device|host
  timeout 100 $MPIRUN -np $1 $R/mpi/cuda/mpi-bench $2 200 $3 $4 $5 $6 2>&1 | grep '^{'
}
{
for n in 1 2 4; do for mode in overlap serial; do for halos in device host; do
  [ $n = 1 ] && [ $halos = host ] && continue
  bench $n "j3d7pt_f32 512,512,512" 1 $n,1,1 $mode $halos
done; done; done
for s in "j3d7pt 512,512,512" "acoustic25 512,512,512"; do
  for n in 2 4; do for mode in overlap serial; do for halos in device host; do
    bench $n "$s" 1 $n,1,1 $mode $halos
  done; done; done
  for n in 1 2 4; do bench $n "$s" 4 auto overlap device; done
done
} > $OUT/gpu-bench.jsonl
cat $OUT/gpu-bench.jsonl
fi
if [ "$MODE" = mps ]; then
# The same ranks under MPS (kernels of the ranks' processes run at once,
# not in turns), where the machine has its control daemon; stopped after.
if command -v nvidia-cuda-mps-control >/dev/null; then
  export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps-pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps-log
  mkdir -p $CUDA_MPS_PIPE_DIRECTORY $CUDA_MPS_LOG_DIRECTORY
  MPIRUN="$MPIRUN -x CUDA_MPS_PIPE_DIRECTORY -x CUDA_MPS_LOG_DIRECTORY"
  if nvidia-cuda-mps-control -d; then
    {
    for n in 2 4; do for mode in overlap serial; do for halos in device host; do
      timeout 100 $MPIRUN -np $n $R/mpi/cuda/mpi-bench j3d7pt_f32 512,512,512 200 1 $n,1,1 $mode $halos 2>&1 | grep '^{'
    done; done; done
    } > $OUT/mps-bench.jsonl
    echo quit | nvidia-cuda-mps-control
  fi
else
  echo "no nvidia-cuda-mps-control" > $OUT/mps-bench.jsonl
fi
cat $OUT/mps-bench.jsonl
fi
if [ "$MODE" = all ] || [ "$MODE" = cpu ]; then
for s in "j3d7pt 512,512,512" "j3d7pt_f32 512,512,512"; do
  for pt in 1x16 2x8 4x4 8x2 16x1; do
    n=${pt%x*}; t=${pt#*x}
    for k in 1 4; do
      timeout 100 $MPIRUN -np $n -x OMP_NUM_THREADS=$t -x OMP_PROC_BIND=false $R/mpi/cpu/mpi-bench $s 20 $k 2>&1 | grep '^{'
    done
  done
done > $OUT/cpu-bench.jsonl
cat $OUT/cpu-bench.jsonl
fi
if [ "$MODE" = multi ]; then
# Issue 64, on a machine of several GPUs: one rank a GPU (DeviceChoice::NodeRank), NVLink multicast off.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
G=$(nvidia-smi -L | wc -l)
X="-x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS"
{
timeout 200 $MPIRUN $X -np $G -x OMP_NUM_THREADS=1 $R/mpi/cuda/mpi-check 2>&1 | grep -v "^$" | tail -3
# Issue 63's measure: 512^3 f32 over 4 ranks along z, one GPU each, the
# interior stepped while the halos travel and not, halos device to device.
if [ "$G" -ge 4 ]; then for mode in overlap serial; do
  timeout 100 $MPIRUN $X -np 4 $R/mpi/cuda/mpi-bench j3d7pt_f32 512,512,512 200 1 4,1,1 $mode 2>&1 | grep '^{'
done; fi
for n in $(seq 1 $G); do
  # Weak: 1024^3 f32 a GPU, split along the slowest axis.
  timeout 200 $MPIRUN $X -np $n $R/mpi/cuda/mpi-bench j3d7pt_f32 $((1024 * n)),1024,1024 200 1 $n,1,1 overlap 2>&1 | grep '^{'
  timeout 200 $MPIRUN $X -np $n $R/mpi/cuda/mpi-bench j3d7pt_f32 $((1024 * n)),1024,1024 200 1 $n,1,1 serial 2>&1 | grep '^{'
  # Strong: a grid that fills one GPU.
  for s in "j3d7pt_f32 1536,1536,1536" "j3d7pt 1280,1280,1280" "acoustic25 1024,1024,1024"; do
    timeout 200 $MPIRUN $X -np $n $R/mpi/cuda/mpi-bench $s 200 1 $n,1,1 overlap 2>&1 | grep '^{'
  done
done
} > $OUT/multi.jsonl 2>&1
cat $OUT/multi.jsonl
fi
