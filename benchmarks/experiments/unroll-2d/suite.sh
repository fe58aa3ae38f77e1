#!/bin/bash
# The suite's 2-D stencils on the H100 after the row unroll (README.md): every single-step
# variant beside `auto` on the suite's grid, then `auto` on 2048^2 and 4096^2.
set -u
cd .device
xz -dk suite.xz && chmod +x suite
nvidia-smi --query-gpu=name,temperature.gpu,clocks.sm --format=csv > $OUT/smi-before.txt
S2="--stencil j2d5pt --stencil j2d9pt --stencil j2d9pt-gol --stencil j2d25pt --stencil wave2d"
V="--variant naive --variant tiled --variant stream --variant stream_s4 --variant stream_s4_v --variant stream_s2_v_w --variant stream_q4_v --variant temporal --variant auto"
timeout 300 ./suite --backend cuda $S2 $V --reps 3 --json $OUT/suite-2d.json --markdown $OUT/suite-2d.md > $OUT/suite-2d.txt 2>&1
for n in 2048 4096; do
  timeout 100 ./suite --backend cuda $S2 --variant auto --size2 $n --reps 3 --json $OUT/suite-2d-$n.json > $OUT/suite-2d-$n.txt 2>&1
done
nvidia-smi --query-gpu=name,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv > $OUT/smi-after.txt
