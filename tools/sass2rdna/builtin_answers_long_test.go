//go:build long

package sass2rdna

import "testing"

// TestBuiltinAnswersRest is TestBuiltinAnswers over the answers the default
// tier leaves out: with it, every builtin answer is verified once.
func TestBuiltinAnswersRest(t *testing.T) {
	checkBuiltinAnswers(t, func(i int) bool { return i%builtinSample != 0 })
}
