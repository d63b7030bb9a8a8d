// Package toolchain finds the compilers, assemblers and disassemblers kiln's
// lanes drive, records their versions (every verdict carries them) and
// checks, by compiling a tiny program per target, which targets each one can
// really build on this host. It also owns the RDNA3 device-library fix-up
// and a content-addressed cache of compile outputs shared by the lanes.
//
// # Registry
//
// [Detect] looks up gcc, as, ld, nvcc, cuobjdump, hipcc, clang, llvm-mc,
// llvm-dis and llvm-as in Config.Path, reads their versions, derives the
// RDNA3 device libraries (below), probes the targets in parallel and looks
// for an NVIDIA GPU (nvidia-smi, /dev/nvidia*). Probes compile trusted,
// fixed programs, so they run the toolchains directly, not in a sandbox.
// Probe results are cached in Config.ProbeCache, keyed by every tool's path,
// size, modification time and version, so a repeated `kiln doctor` only
// pays for the version reads (tens of milliseconds).
//
// Targets ([TargetHost], [TargetSM86], [TargetSM90], [TargetGFX1030],
// [TargetGFX1100], [TargetHIPNvidia]) per tool:
//
//	gcc        host         gcc -o p p.c
//	as, ld     host         as --64 p.s; ld p.o
//	clang      host         clang -c p.c
//	nvcc       host sm_86 sm_90  one executable with -gencode for sm_86 and sm_90
//	                        (on failure, nvcc -cubin -arch=sm_XX per target)
//	           hip-nvidia   nvcc -x cu -D__HIP_PLATFORM_NVIDIA__ -c h.hip
//	cuobjdump  sm_86 sm_90  cuobjdump -sass of the probe's fatbin names the kernel
//	hipcc      gfx1030      HIP_PLATFORM=amd hipcc --offload-arch=gfx1030 --cuda-device-only -S
//	           gfx1100      the same with --rocm-device-lib-path=<derived dir>
//	           host         --cuda-host-only -S
//	llvm-mc    gfx1030 gfx1100  llvm-mc -triple=amdgcn-amd-amdhsa -mcpu=gfxNNNN
//
// Sandboxes show only the system folders: pass [Registry.SandboxPaths]
// (Debian's /etc/nvcc.profile, the derived device libraries, tools under
// /opt) as sandboxes.Config.ReadOnlyPaths, so detect before creating the
// sandbox runner. [Registry.Report] is what `kiln doctor --json` prints;
// [FromReport] rebuilds a registry from it without probing (a GPU host
// replaying a compile cache filled elsewhere, with [DetectGPU] for its own
// GPU).
//
// # RDNA3 device libraries
//
// Debian's rocm-device-libs (ROCm 5.2) lack oclc_isa_version_1100.bc, so
// hipcc refuses --offload-arch=gfx1100. The file only defines the ISA
// version constant: [DeriveRDNA3DeviceLibs] rewrites the gfx1030 one
// (llvm-dis, 10300 -> 11000, llvm-as) into a folder of our own
// (Config.DeviceLibDir) that also links every other .bc of the system
// folder; compilers get it with --rocm-device-lib-path ([Registry.HIPArgs]).
//
// # Cache
//
// [Cache] keeps compile outputs (files, stdout, stderr, exit status) by a
// key that callers derive with [Key] from the sources, flags and toolchain
// versions: in memory (LRU, bounded in bytes) and on disk, where file
// contents are stored once by their SHA-256 and entries are small JSON
// manifests naming them. [Cache.Do] computes a missing entry once for all
// concurrent callers.
package toolchain
