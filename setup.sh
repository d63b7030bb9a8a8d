#!/usr/bin/env bash
# kiln set-up for a fresh Debian 12 machine.
#
#   ./setup.sh            install system packages and Go modules, build ./bin/kiln
#   ./setup.sh test       the default tier: every behaviour end to end once
#   ./setup.sh test long  the long tier: kill loops, corpus-wide matrices,
#                         cluster node kills, browser, benchmarks-as-tests
#   ./setup.sh ollama     rebuild the Ollama test server (install builds it once)
# CI runs all three (.ci/run); README.md "Tests" has the figures.
#
# Needs root (or sudo) for apt-get. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")"

export PATH="$PATH:/usr/local/go/bin:$HOME/go/bin"
export DEBIAN_FRONTEND=noninteractive

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# enable_contrib adds the contrib and non-free components (nvidia-cuda-toolkit
# lives there) to Debian's apt sources, in either format.
enable_contrib() {
	local f=/etc/apt/sources.list.d/debian.sources
	if [ -f "$f" ] && ! grep -q '^Components:.*contrib' "$f"; then
		as_root sed -i -E 's/^(Components:.*\bmain\b)(.*)$/\1 contrib non-free\2/' "$f"
		return 0
	fi
	f=/etc/apt/sources.list
	if [ -f "$f" ] && grep -qE '^deb .* main' "$f" && ! grep -qE '^deb .* main.*contrib' "$f"; then
		as_root sed -i -E 's/^(deb .* main)(.*)$/\1 contrib non-free\2/' "$f"
		return 0
	fi
	return 1
}

install() {
	# gcc/binutils: the c2x86 lane's reference compiler, assembler and linker.
	# nvidia-cuda-toolkit (nvcc 11.8, contrib/non-free), hipcc, libamdhip64-dev,
	# rocm-device-libs, llvm-15: the CUDA and HIP lanes (see the design notes).
	# bubblewrap, libseccomp-dev: sandbox layers. procps: process checks in tests.
	# python3-torch, libtorch-dev, pybind11-dev, ninja-build, g++: the torch2cuda
	# lane's judge on the CPU (Debian's CPU build of PyTorch 1.13; a GPU host
	# brings its own CUDA build). chromium: the dashboard's headless browser test.
	local pkgs=(gcc g++ libc6-dev binutils make ca-certificates git procps util-linux
		nvidia-cuda-toolkit hipcc libamdhip64-dev rocm-device-libs llvm-15 lld-15 libhiprand-dev librocrand-dev
		bubblewrap python3-torch libtorch-dev pybind11-dev ninja-build chromium)
	# clang-15: the c2x86 peer suite checks that clang's -S output passes the lane.
	# nlohmann-json3-dev, libstb-dev: headers the ollama module's zip leaves out
	# (the test server, see build_ollama).
	pkgs+=(clang-15 nlohmann-json3-dev libstb-dev)
	local missing=()
	for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
	if ! command -v go >/dev/null 2>&1; then missing+=(golang-go); fi
	if [ "${#missing[@]}" -gt 0 ]; then
		echo "setup: installing ${missing[*]}"
		enable_contrib || true
		as_root apt-get update -q
		as_root apt-get install -y -q --no-install-recommends "${missing[@]}"
	fi
	# go.mod names the Go release; an older go fetches it from the module proxy.
	export GOTOOLCHAIN=auto
	go version
	go mod download
	mkdir -p bin
	go build -o bin/kiln ./cmd/kiln
	# The sandbox trampoline: kiln finds it beside itself (see sandboxes.Config.InitBinary).
	go build -o bin/kiln-sandbox-init ./sandboxes/kiln-sandbox-init
	echo "setup: built $(pwd)/bin/kiln and $(pwd)/bin/kiln-sandbox-init"
	./bin/kiln doctor || true
	build_ollama
}

# build_ollama builds the Ollama server the interop tests run
# (agent/ollama/ollamatest), from the ollama module version go.mod pins,
# once per machine: into $HOME/.cache/kiln/ollama/VERSION/ollama. The module
# zip lacks llama.cpp's vendored headers: nlohmann json and stb come from
# Debian, miniaudio (audio input only) from a stand-in header of ours.
build_ollama() {
	local v dir
	v=$(go list -m -f '{{.Version}}' github.com/ollama/ollama)
	dir="$HOME/.cache/kiln/ollama/$v"
	if [ -x "$dir/ollama" ] && [ "${1:-}" != force ]; then
		echo "setup: ollama $v server at $dir/ollama"
		return 0
	fi
	echo "setup: building the ollama $v server for the interop tests (about 10 minutes on 2 cores, once)"
	mkdir -p "$dir"
	CGO_ENABLED=1 CGO_CPPFLAGS="-I$(pwd)/agent/ollama/ollamatest/include -I/usr/include/stb" GOBIN="$dir" GOFLAGS=-mod=mod \
		go install -ldflags "-X github.com/ollama/ollama/version.Version=${v#v}" "github.com/ollama/ollama@$v"
	echo "setup: built $dir/ollama"
}

# long_packages lists the packages whose files the long build tag changes
# (a *_test.go file with //go:build long or !long). Only tests may carry the
# tag, so every other package's tests are the same in both tiers.
long_packages() {
	local bad
	bad=$(grep -rlE --include='*.go' '^//go:build.*\blong\b' . | grep -v '_test\.go$' || true)
	if [ -n "$bad" ]; then
		echo "setup: the long build tag is for test files only: $bad" >&2
		return 1
	fi
	local f='{{.ImportPath}} {{.GoFiles}} {{.TestGoFiles}} {{.XTestGoFiles}}'
	comm -13 <(go list -f "$f" ./... | sort) <(go list -tags long -f "$f" ./... | sort) | cut -d' ' -f1
}

run_tests() {
	export GOTOOLCHAIN=auto
	# The tests' sandboxes start their runs with the small trampoline
	# binary, not by re-executing each (large) test binary.
	mkdir -p bin
	go build -o bin/kiln-sandbox-init ./sandboxes/kiln-sandbox-init
	export KILN_SANDBOX_INIT="$PWD/bin/kiln-sandbox-init"
	# -p 2: the reference machines have 2 cores; the sandbox and corpus tests run real compilers.
	case "${1:-}" in
	"")
		go vet ./...
		go run .ci/funclen.go -warn 100 -max 100 . # no function over 100 lines
		# The longest packages first, so that both slots stay busy to the end.
		go test -p 2 -timeout 40m ./cmd/kiln ./tools/torch2cuda ./tools/cudasynth ./tools/ptx2cuda ./...
		;;
	long)
		# The packages the tag changes, built with it: there the default
		# tier's tests run at full size (corpus-wide, 50 kills, ...) beside
		# the long-only ones. The other packages' tests are those of
		# ./setup.sh test, which CI runs first.
		local pkgs
		pkgs=$(long_packages)
		[ -n "$pkgs" ] || { echo "setup: no package has long tests" >&2; return 1; }
		echo "setup: long tier in" $pkgs
		go vet -tags long $pkgs
		go test -p 2 -tags long -timeout 60m $pkgs
		;;
	*) echo "usage: $0 test [long]" >&2; return 2 ;;
	esac
}

case "${1:-install}" in
install) install ;;
ollama) build_ollama force ;;
test) run_tests "${2:-}" ;;
*) echo "usage: $0 [install|test [long]|ollama]" >&2; exit 2 ;;
esac
