//go:build long

package c2x86

// longTier: -tags long checks TestPeerCompilersSample's items in every
// configuration (and the whole corpus so, TestPeerCompilersCorpus).
const longTier = true
