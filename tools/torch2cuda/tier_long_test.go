//go:build long

package torch2cuda

// longTier: -tags long builds every fixture candidate in TestJudgeOnCPU.
const longTier = true
