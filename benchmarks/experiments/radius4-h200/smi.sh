# Sourced by this folder's run scripts: smi prints the GPU's name, driver,
# temperature, SM clock and throttle reasons on one line.
smi() { nvidia-smi --query-gpu=name,driver_version,temperature.gpu,clocks.sm,clocks_throttle_reasons.active --format=csv,noheader; }
