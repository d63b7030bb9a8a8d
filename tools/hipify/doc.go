// Package hipify translates CUDA source to HIP with a rule table, for the
// cuda2hip lane (the CASS pipeline, section 3.3, ran AMD's hipify for this
// step and discarded the files it could not convert).
//
// # Use
//
//	r, err := hipify.Translate(cudaSrc) // built-in table
//	if err != nil { ... }               // *SyntaxError: unterminated comment or raw string
//	if !r.OK() { ... }                  // r.Unsupported: []Issue{Line, Col, Construct, Reason}
//	use(r.HIP, r.Replacements)
//
//	m, err := hipify.LoadTable(f)       // built-in table extended by a file
//	r, err = m.Translate(cudaSrc)
//
// # What it does
//
// The source is tokenised (comments, string, character and raw string
// literals, numbers, identifiers, preprocessing directives), and only whole
// identifiers outside comments and literals are rewritten; #include paths are
// the one thing rewritten inside delimiters. The rules are data: table.txt,
// embedded, documents its own format (renames by class: api, type, enum,
// macro, intrinsic, driver, library, member; header paths; the unsupported
// kinds; call-argument actions drop=N and wrap=N:FUNC). Exact entries win over
// globs; a table given to LoadTable or Extend overrides the built-in one.
//
// Anything CUDA-specific the table does not translate is an Issue with its
// line and column (1-based, columns in bytes like gcc), never a silent pass:
// explicit entries (inline PTX asm, texture references, warp intrinsics
// missing from HIP 5.2, cuBLAS/cuFFT/... calls and headers, libcu++ cuda::,
// Thrust, CUB, WMMA, CUDA graphs, __CUDA_ARCH__ used for its value,
// cudaDeviceProp fields hipDeviceProp_t lacks, cooperative-groups calls HIP 5.2
// lacks) and catch-all globs for unknown names: cuda[A-Z]*, cu[A-Z]*, CU[a-z]*,
// CU_*, CUDA_*, CUDART_*, __CUDA_*, __nv*, cublas*, cufft*, curand*, ... A name
// the file itself #defines or declares (T name, T* name followed by = ; , ( ) [
// { :) is the file's own and is not caught by a glob: cudaStatus, CUDA_CHECK.
// Unsupported constructs are left as they were in Result.HIP.
//
// Kernel launches keep the triple-chevron syntax: hipcc and nvcc both
// compile kernel<<<grid, block, shmem, stream>>>(args), and AMD's hipify keeps
// it too, so the CASS pairs look like ours. The translator adds
// #include <hip/hip_runtime.h> at the top when the file uses CUDA but does not
// include the HIP runtime first (nvcc includes cuda_runtime.h implicitly, and
// HIP 5.2's hip_cooperative_groups.h compiles only after hip_runtime.h).
//
// Warp intrinsics: HIP 5.2 has no *_sync forms, so __shfl*_sync,
// __ballot_sync, __any_sync and __all_sync lose their mask argument
// (__shfl_down_sync(m, v, o) -> __shfl_down(v, o)). That is exact when the
// mask names all active lanes (the usual full mask); __ballot returns a 64-bit
// mask in HIP, exact on wave32 (RDNA). __activemask, __syncwarp, __match_*,
// __reduce_*_sync have no HIP 5.2 form and are Issues.
//
// # Compiling the result (measured with Debian 12 packages)
//
// AMD, HIP 5.2 (hipcc libamdhip64-dev rocm-device-libs; libhiprand-dev and
// librocrand-dev for cuRAND programs):
//
//	HIP_PLATFORM=amd hipcc --offload-arch=gfx1030 -c x.hip -o x.o
//
// HIP_PLATFORM=amd is needed because hipcc picks NVIDIA when nvcc is present.
// gfx1100 (RDNA3) needs the derived oclc_isa_version_1100.bc (see design.md).
//
// NVIDIA, HIP on nvcc 11.8 (nvidia-cuda-toolkit) with Debian's
// /usr/include/hip (found on the default include path, no -I needed):
//
//	nvcc -x cu -D__HIP_PLATFORM_NVIDIA__ -arch=sm_90 -c x.hip -o x.o
//
// If the translation uses __ballot/__any/__all, use
// -arch=compute_60 -code=sm_90 instead: HIP 5.2's NVIDIA headers leave those
// names to CUDA's pre-Volta intrinsics, which CUDA 11.8 rejects for
// compute_70 and newer. Known HIP 5.2 NVIDIA-path gaps: hipMalloc/hipFree do
// not take hipDeviceptr_t (so translated cuMemAlloc/cuMemFree compile only for
// AMD), hipLaunchHostFunc and make_hipComplex are missing, and
// hipGetDeviceProperties leaves managedMemory at 0.
//
// The tests compile every program of testdata/cuda both ways (they skip only
// when hipcc or nvcc is not installed); testdata/nvidia-run.md records the
// translated programs run against their CUDA originals on an H200.
//
// # Limits
//
// The translator sees one file: a CUDA macro defined in an included header
// of the user's is flagged where used, and code in #if 0 or inactive branches
// is checked like the rest. Template argument lists inside rewritten calls are
// recognised heuristically (name<...> followed by ( ) , :: { ; or >).
// Constructs HIP accepts with other semantics are kept as they are:
// __launch_bounds__'s second argument (minimum blocks per multiprocessor in
// CUDA, minimum waves per execution unit in HIP) and warpSize-dependent code
// on wave64 AMD GPUs.
package hipify
