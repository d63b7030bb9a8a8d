//go:build !long

package torch2cuda

// longTier is false in the default tier: TestJudgeOnCPU builds the
// fixtures' shared extension once.
const longTier = false
