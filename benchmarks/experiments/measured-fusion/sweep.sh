#!/bin/bash
# Small-grid sweep of every suite stencil, every variant, both dtypes (the product at HEAD).
set -u
cd .device
xz -dk suite.xz && chmod +x suite attr
nvidia-smi --query-gpu=name,temperature.gpu,clocks.sm --format=csv > $OUT/smi-before.txt
./attr > $OUT/attr.txt 2>&1
S3="--stencil j3d7pt --stencil j3d13pt --stencil j3d17pt --stencil j3d27pt --stencil poisson --stencil star3d25 --stencil wave3d --stencil acoustic25"
S2="--stencil j2d5pt --stencil j2d9pt --stencil j2d9pt-gol --stencil j2d25pt --stencil wave2d"
mkdir -p $OUT/sweep
for n in 64 100 160; do
  timeout 150 ./suite --backend cuda $S3 --size3 $n --reps 3 --json $OUT/sweep/3d-$n.json > $OUT/sweep/3d-$n.txt 2>&1
done
for n in 1024 2048 4096; do
  timeout 120 ./suite --backend cuda $S2 --size2 $n --reps 3 --json $OUT/sweep/2d-$n.json > $OUT/sweep/2d-$n.txt 2>&1
done
nvidia-smi --query-gpu=name,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv > $OUT/smi-after.txt
cd $OUT && tar czf sweep.tgz sweep && rm -rf sweep
