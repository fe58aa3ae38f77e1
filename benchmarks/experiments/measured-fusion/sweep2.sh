#!/bin/bash
# Calibration of the small-grid rule: the product at HEAD (43c38b1) between the sweep's sizes.
set -u
cd .device
[ -x suite ] || { xz -dk suite.xz && chmod +x suite; }
S3="--stencil j3d7pt --stencil j3d13pt --stencil j3d17pt --stencil j3d27pt --stencil poisson --stencil star3d25 --stencil wave3d --stencil acoustic25"
S2="--stencil j2d5pt --stencil j2d9pt --stencil j2d9pt-gol --stencil j2d25pt --stencil wave2d"
V="--variant auto --variant stream_q4_v --variant stream_s2_v_w --variant stream_s4_v --variant stream_s4 --variant temporal --variant persistent"
mkdir -p $OUT/sweep2
for n in 112 128 144; do
  timeout 100 ./suite --backend cuda $S3 $V --size3 $n --reps 3 --json $OUT/sweep2/3d-$n.json > $OUT/sweep2/3d-$n.txt 2>&1
done
for s in 40,256,256 512,96,96; do
  timeout 100 ./suite --backend cuda $S3 $V --shape3 $s --reps 3 --json $OUT/sweep2/3d-$s.json > $OUT/sweep2/3d-$s.txt 2>&1
done
for n in 1280 1536 1792 3072; do
  timeout 100 ./suite --backend cuda $S2 $V --size2 $n --reps 3 --json $OUT/sweep2/2d-$n.json > $OUT/sweep2/2d-$n.txt 2>&1
done
for n in 192 256 320 384 448 512; do
  timeout 100 ./suite --backend cuda --stencil wave3d --dtype f32 $V --size3 $n --reps 3 --json $OUT/sweep2/wave3d-$n.json > $OUT/sweep2/wave3d-$n.txt 2>&1
done
nvidia-smi --query-gpu=name,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv > $OUT/smi-after.txt
cd $OUT && tar czf sweep2.tgz sweep2 && rm -rf sweep2
