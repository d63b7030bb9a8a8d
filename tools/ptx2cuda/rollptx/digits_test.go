package rollptx

import (
	"math"
	"strconv"
	"testing"
)

func TestDigits(t *testing.T) {
	t.Parallel()
	check := func(v int64) {
		if got, want := digits(v), int32(len(strconv.FormatInt(v, 10))); got != want {
			t.Errorf("digits(%d) = %d, want %d", v, got, want)
		}
	}
	for _, v := range []int64{0, 1, 9, 10, 11, 99, 100, 999, 1000, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		check(v)
		check(-v)
	}
	for p := int64(1); p < math.MaxInt64/10; p *= 10 {
		for _, v := range []int64{p - 1, p, p + 1, 2 * p, 9 * p} {
			check(v)
			check(-v)
		}
	}
}
