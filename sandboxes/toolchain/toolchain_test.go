package toolchain

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseVersion(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tool, out, want string
	}{
		{NVCC, "nvcc: NVIDIA (R) Cuda compiler driver\nCopyright (c) 2005-2022 NVIDIA Corporation\nBuilt on Wed_Sep_21\n" +
			"Cuda compilation tools, release 11.8, V11.8.89\nBuild cuda_11.8.r11.8/compiler.31833905_0\n",
			"Cuda compilation tools, release 11.8, V11.8.89"},
		{HIPCC, "HIP version: 5.2.21153-0\nDebian clang version 15.0.6\nTarget: x86_64-pc-linux-gnu\n",
			"HIP version: 5.2.21153-0; Debian clang version 15.0.6"},
		{LLVMMC, "Debian LLVM version 15.0.6\n  Optimized build.\n", "Debian LLVM version 15.0.6"},
		{LLVMDis, "LLVM (http://llvm.org/):\n  Debian LLVM version 15.0.6\n", "Debian LLVM version 15.0.6"},
		{GCC, "gcc (Debian 12.2.0-14) 12.2.0\nCopyright (C) 2022\n", "gcc (Debian 12.2.0-14) 12.2.0"},
		{AS, "\n\nGNU assembler (GNU Binutils for Debian) 2.40\n", "GNU assembler (GNU Binutils for Debian) 2.40"},
		{NVCC, "no version here\n", ""},
	}
	for _, tc := range tests {
		if got := parseVersion(tc.tool, tc.out); got != tc.want {
			t.Errorf("parseVersion(%s) = %q, want %q", tc.tool, got, tc.want)
		}
	}
}

func TestRetargetISAVersion(t *testing.T) {
	t.Parallel()
	const ll = "@__oclc_ISA_version = linkonce_odr protected local_unnamed_addr addrspace(4) constant i32 10300, align 4\n"
	got, err := retargetISAVersion(ll, 10300, 11000)
	if err != nil || !strings.Contains(got, "constant i32 11000, align 4") || strings.Contains(got, "10300") {
		t.Fatalf("retarget = %q, %v", got, err)
	}
	for _, bad := range []string{"nothing", ll + ll} {
		if _, err := retargetISAVersion(bad, 10300, 11000); err == nil {
			t.Errorf("retarget(%q) succeeded; want an error (zero or two constants)", bad)
		}
	}
}

// writeScript makes an executable shell script.
func writeScript(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestDetectFakeTools runs Detect over scripts standing in for the tools:
// versions are read, a failing compiler's targets are recorded as failed
// with its message, and missing tools are reported with their packages.
func TestDetectFakeTools(t *testing.T) {
	t.Parallel()
	bin := t.TempDir()
	writeScript(t, bin, "gcc", `case "$1" in --version) echo "gcc (Fake) 99.1";; *) exit 0;; esac`+"\n")
	writeScript(t, bin, "nvcc", `case "$1" in --version) printf 'nvcc: fake\nCuda compilation tools, release 99.0, V99.0.1\n';;`+
		` *) echo "nvcc fatal   : fake compiler refuses" >&2; exit 1;; esac`+"\n")
	writeScript(t, bin, "nvidia-smi", `echo "NVIDIA H100 80GB HBM3, 550.54.15"`+"\n")
	dev := t.TempDir()
	if err := os.WriteFile(filepath.Join(dev, "nvidia0"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Detect(context.Background(), Config{Path: bin, DevDir: dev, WorkDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	gcc, ok := r.Get(GCC)
	if !ok || gcc.Version != "gcc (Fake) 99.1" || !gcc.Supports(TargetHost) {
		t.Errorf("gcc = %+v, %v; want found, version read, host verified", gcc, ok)
	}
	nvcc, ok := r.Get(NVCC)
	if !ok || nvcc.Version != "Cuda compilation tools, release 99.0, V99.0.1" {
		t.Fatalf("nvcc = %+v, %v", nvcc, ok)
	}
	if len(nvcc.Targets) != 0 {
		t.Errorf("nvcc targets %v; the fake fails every compile", nvcc.Targets)
	}
	for _, tg := range []string{TargetHost, TargetSM86, TargetSM90, TargetHIPNvidia} {
		if !strings.Contains(nvcc.Failed[tg], "fake compiler refuses") {
			t.Errorf("nvcc %s failure = %q; want the compiler's message", tg, nvcc.Failed[tg])
		}
	}
	err = r.Require(NVCC, TargetSM90)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "sm_90") {
		t.Errorf("Require(nvcc, sm_90) = %v; want ErrUnavailable naming sm_90", err)
	}
	if err := r.Require(HIPCC); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Require(hipcc) = %v; want ErrUnavailable", err)
	}
	if err := r.Require(GCC, TargetHost); err != nil {
		t.Errorf("Require(gcc, host) = %v", err)
	}
	if _, ok := r.Get(HIPCC); ok {
		t.Error("hipcc found in a folder without it")
	}
	v := r.Versions()
	if len(v) != 2 || v[GCC] == "" || v[NVCC] == "" {
		t.Errorf("Versions() = %v; want gcc and nvcc only", v)
	}
	g := r.GPU()
	if !g.Present || len(g.Devices) != 1 || len(g.Names) != 1 || g.Names[0] != "NVIDIA H100 80GB HBM3" || g.Driver != "550.54.15" {
		t.Errorf("GPU = %+v", g)
	}
	rep := r.Report()
	joined := strings.Join(rep.Problems, "\n")
	for _, want := range []string{"hipcc: ", "hipcc libamdhip64-dev rocm-device-libs", "nvcc: cannot build sm_90"} {
		if !strings.Contains(joined, want) {
			t.Errorf("problems lack %q:\n%s", want, joined)
		}
	}
	// The report survives JSON and rebuilds an equal registry.
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	re := FromReport(back)
	if got := re.Versions(); len(got) != 2 || got[NVCC] != v[NVCC] {
		t.Errorf("FromReport versions = %v, want %v", got, v)
	}
	if re.Supports(GCC, TargetHost) != true || re.Supports(NVCC, TargetSM90) {
		t.Error("FromReport lost targets")
	}
	if g := re.WithGPU(GPU{}).GPU(); g.Present {
		t.Error("WithGPU did not replace the GPU")
	}
}

func TestValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []Config{{DeviceLibDir: "rel"}, {WorkDir: "x/y"}, {Parallel: -1}, {ProbeCache: "cache.json"}} {
		if err := c.Validate(); err == nil {
			t.Errorf("Validate(%+v) = nil", c)
		}
	}
	if _, err := Detect(context.Background(), Config{DevDir: "dev"}); err == nil {
		t.Error("Detect with a relative dev dir succeeded")
	}
}

// needTools skips a test on a host without the real toolchains (CI and the
// development hosts have them: nvidia-cuda-toolkit, hipcc, llvm-15).
func needTools(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if _, err := exec.LookPath(n); err != nil {
			t.Skipf("%s not installed", n)
		}
	}
}

func TestDeriveRDNA3DeviceLibs(t *testing.T) {
	t.Parallel()
	needTools(t, "llvm-dis-15", "llvm-as-15")
	src := defaultROCmDeviceLibDirs[0]
	if _, err := os.Stat(filepath.Join(src, rdna2ISAFile)); err != nil {
		t.Skip("rocm-device-libs not installed")
	}
	dst := filepath.Join(t.TempDir(), "devlibs")
	ctx := context.Background()
	if err := DeriveRDNA3DeviceLibs(ctx, "/usr/bin/llvm-dis-15", "/usr/bin/llvm-as-15", src, dst); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("llvm-dis-15", "-o", "-", filepath.Join(dst, rdna3ISAFile)).Output()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "constant i32 11000") {
		t.Errorf("derived library does not define ISA version 11000:\n%s", out)
	}
	for _, name := range []string{"ocml.bc", "ockl.bc", "oclc_isa_version_1030.bc", "oclc_wavefrontsize64_off.bc"} {
		if _, err := os.Stat(filepath.Join(dst, name)); err != nil {
			t.Errorf("%s not linked into the derived folder: %v", name, err)
		}
	}
	fi1, _ := os.Stat(filepath.Join(dst, rdna3ISAFile))
	time.Sleep(10 * time.Millisecond)
	if err := DeriveRDNA3DeviceLibs(ctx, "/usr/bin/llvm-dis-15", "/usr/bin/llvm-as-15", src, dst); err != nil {
		t.Fatal(err)
	}
	fi2, _ := os.Stat(filepath.Join(dst, rdna3ISAFile))
	if !fi1.ModTime().Equal(fi2.ModTime()) {
		t.Error("a second derivation rewrote the file; the stamp should make it a no-op")
	}
	if err := DeriveRDNA3DeviceLibs(ctx, "/usr/bin/llvm-dis-15", "/usr/bin/llvm-as-15", t.TempDir(), dst); err == nil {
		t.Error("derivation from a folder without the gfx1030 library succeeded")
	}
}

// TestDetectReal probes the real toolchains: every target kiln's GPU lanes
// need must be verified, and a second detection reuses the probe cache.
func TestDetectReal(t *testing.T) {
	t.Parallel()
	needTools(t, "nvcc", "cuobjdump", "hipcc", "llvm-mc-15", "llvm-dis-15", "llvm-as-15", "gcc")
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := Config{DeviceLibDir: filepath.Join(dir, "devlibs"), ProbeCache: filepath.Join(dir, "probe.json"), WorkDir: dir}
	ctx := context.Background()
	start := time.Now()
	r, err := Detect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cold := time.Since(start)
	want := map[string][]string{
		GCC: {TargetHost}, AS: {TargetHost}, LD: {TargetHost}, Clang: {TargetHost},
		NVCC:      {TargetHIPNvidia, TargetHost, TargetSM86, TargetSM90},
		CUObjdump: {TargetSM86, TargetSM90},
		HIPCC:     {TargetGFX1030, TargetGFX1100, TargetHost},
		LLVMMC:    {TargetGFX1030, TargetGFX1100},
	}
	for name, targets := range want {
		tool, ok := r.Get(name)
		if !ok {
			t.Errorf("%s not found: %s", name, r.tools[name].Error)
			continue
		}
		if !slices.Equal(tool.Targets, targets) {
			t.Errorf("%s targets = %v, want %v (failed: %v)", name, tool.Targets, targets, tool.Failed)
		}
	}
	if v := r.Versions()[NVCC]; !strings.Contains(v, "release") {
		t.Errorf("nvcc version %q", v)
	}
	if hip, _ := r.Get(HIPCC); !slices.Contains(hip.Env, "HIP_PLATFORM=amd") {
		t.Errorf("hipcc env %v lacks HIP_PLATFORM=amd", hip.Env)
	}
	if r.DeviceLibDir() != cfg.DeviceLibDir {
		t.Errorf("device lib dir %q, want %q (problems: %v)", r.DeviceLibDir(), cfg.DeviceLibDir, r.Report().Problems)
	}
	if args := r.HIPArgs(TargetGFX1100); !slices.Contains(args, "--rocm-device-lib-path="+cfg.DeviceLibDir) {
		t.Errorf("HIPArgs = %v", args)
	}
	paths := r.SandboxPaths()
	if !slices.Contains(paths, "/etc/nvcc.profile") || !slices.Contains(paths, cfg.DeviceLibDir) {
		t.Errorf("SandboxPaths = %v; want /etc/nvcc.profile and the device lib dir", paths)
	}
	if len(r.Report().Problems) != 0 {
		t.Errorf("problems on a complete host: %v", r.Report().Problems)
	}

	start = time.Now()
	r2, err := Detect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	warm := time.Since(start)
	nv, _ := r2.Get(NVCC)
	if !nv.Cached || !slices.Equal(nv.Targets, want[NVCC]) {
		t.Errorf("second detection: nvcc %+v; want cached targets", nv)
	}
	t.Logf("detection: cold %v, with the probe cache %v", cold, warm)
	if warm > 5*time.Second {
		t.Errorf("cached detection took %v", warm)
	}
}
