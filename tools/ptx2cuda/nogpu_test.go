//go:build !gpu

package ptx2cuda

// gpuPhase is false in the ordinary test binary: the GPU check's folder
// is being written (TestPrepareGPUCheck), not completed.
const gpuPhase = false
