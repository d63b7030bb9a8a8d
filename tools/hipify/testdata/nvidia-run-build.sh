#!/bin/sh
# Builds each testdata program twice for sm_90: the CUDA original and its HIP
# translation (HIP on NVIDIA, Debian HIP 5.2 headers, nvcc 11.8).
set -e
T=${T:-/work/main/tools/hipify/testdata}
for f in $T/cuda/*.cu; do
  b=$(basename $f .cu)
  extra=""; [ "$b" = 17_driver_api ] && extra="-lcuda"
  nvcc -arch=sm_90 $f -o $b.cuda $extra 2>/dev/null
  arch="-arch=sm_90"; grep -q '__ballot(\|__any(\|__all(' $T/hip/$b.hip && arch="-arch=compute_60 -code=sm_90"
  if grep -q 'hipify-test: amd-only' $f; then echo "$b: amd-only, no HIP binary"; continue; fi
  nvcc -x cu -D__HIP_PLATFORM_NVIDIA__ $arch $T/hip/$b.hip -o $b.hip $extra 2>/dev/null
done
