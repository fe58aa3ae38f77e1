#!/bin/bash
# auto before (suite-old, 43c38b1) and after (suite, measured fusion) on small to large grids.
set -u
cd .device
for b in suite-old suite; do [ -x $b ] || { xz -dc $b.xz > $b && chmod +x $b; }; done
nvidia-smi --query-gpu=name,temperature.gpu,clocks.sm --format=csv > $OUT/smi-before.txt
S3="--stencil j3d7pt --stencil j3d13pt --stencil j3d17pt --stencil j3d27pt --stencil poisson --stencil star3d25 --stencil wave3d --stencil acoustic25"
S2="--stencil j2d5pt --stencil j2d9pt --stencil j2d9pt-gol --stencil j2d25pt --stencil wave2d"
mkdir -p $OUT/ab
for b in suite-old suite; do
  for n in 64 100 128 160 256; do
    timeout 100 ./$b --backend cuda $S3 --variant auto --size3 $n --reps 3 --json $OUT/ab/$b-3d-$n.json > $OUT/ab/$b-3d-$n.txt 2>&1
  done
  for n in 1024 2048 4096; do
    timeout 100 ./$b --backend cuda $S2 --variant auto --size2 $n --reps 3 --json $OUT/ab/$b-2d-$n.json > $OUT/ab/$b-2d-$n.txt 2>&1
  done
done
# The suite's grids, every stencil: auto before and after, and the single steps (the done condition's rows).
timeout 200 ./suite-old --backend cuda --variant auto --reps 3 --json $OUT/ab/suite-old-default.json > $OUT/ab/suite-old-default.txt 2>&1
timeout 240 ./suite --backend cuda --variant auto --variant stream_q4_v --variant tensor --reps 3 --json $OUT/ab/suite-default.json > $OUT/ab/suite-default.txt 2>&1
nvidia-smi --query-gpu=name,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv > $OUT/smi-after.txt
cd $OUT && tar czf ab.tgz ab && rm -rf ab
