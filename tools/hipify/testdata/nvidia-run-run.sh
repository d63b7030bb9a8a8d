#!/bin/sh
# Runs each pair and compares stdout + exit status.
cd "$(dirname "$0")"
pass=0; fail=0
for c in *.cuda; do
  b=${c%.cuda}
  ./$c > $OUT/$b.cuda.out 2>&1; rc1=$?
  if [ ! -x $b.hip ]; then echo "$b: cuda rc=$rc1 (no HIP binary)"; cat $OUT/$b.cuda.out; continue; fi
  ./$b.hip > $OUT/$b.hip.out 2>&1; rc2=$?
  if [ $rc1 = $rc2 ] && cmp -s $OUT/$b.cuda.out $OUT/$b.hip.out; then pass=$((pass+1)); echo "$b: SAME (rc=$rc1)"; else fail=$((fail+1)); echo "$b: DIFF cuda rc=$rc1 hip rc=$rc2"; fi
  sed 's/^/    /' $OUT/$b.cuda.out | head -5
done
echo "same=$pass different=$fail"
