// Package c2x86 is the C -> x86-64 assembly lane: a model reads a C
// function and writes GNU assembler (AT&T or .intel_syntax) for it; the
// lane assembles that, links it with the item's test driver and compares
// the program's output with the output of GCC's own build of the function.
// Answers in the style of `gcc -S` and `clang -S` (any -O, either syntax,
// their metadata directives included) are accepted: corpus_peer_test.go
// checks both compilers' output of the corpus and a mutant of each.
//
// # Items
//
// An item (tools.Item, Lane "c2x86") has:
//
//   - Files["function.c"]: the function(s) to translate. May include
//     standard headers (<math.h>, <string.h>, <stdlib.h>, ...).
//   - Files["driver.c"]: a main() that calls the function on test inputs and
//     prints the results to stdout. It must compile on its own: it declares
//     the prototypes (and any struct types) it needs itself, the definitions
//     come from the linked object. Extra headers ("*.h" files of the item)
//     are written next to both files, so `#include "function.h"` works when
//     an item ships one.
//   - Meta["function"]: the name of the main function (used in tool texts).
//
// [ItemFromFiles] and [ItemFromDir] build items from files on disk (the CLI
// entry point: build the item, then Verify the candidate's text).
//
// # Reference
//
// GCC compiles function.c with -O0 -fno-jump-tables -S (the seed paper's
// switch normalisation) into the reference assembly; driver.c is compiled
// once into driver.o; the reference assembly is then built exactly like a
// candidate and run (twice: a driver whose output differs between runs is
// rejected as a bad item). The expected stdout and exit status, the
// reference assembly and driver.o are cached by a hash of the item files,
// the flags and the toolchain versions, in memory (LRU) and in
// Config.CacheDir, so each attempt pays only for its own build and run.
//
// # Verification
//
// Stages, in order: "extract" (non-empty answer), "convert" (removal of
// the metadata-only directives GNU as rejects, such as clang's .addrsig,
// [StripMetadata], then the symbolic float converter, [ConvertFloats]),
// "assemble" (as --64), "link" (gcc -no-pie with driver.o and -lm;
// -no-pie so both RIP-relative and absolute addressing link), "run",
// "compare" (stdout and exit status). The driver calls the function
// through a shim that poisons what the ABI leaves undefined at a call
// (unused argument registers, rax, r10, r11, xmm8-15, the stack below the
// return address; see poison.go), so an answer reading a register it never
// wrote fails every time instead of by ASLR luck. Every
// compiler, assembler, linker and program run happens in a sandbox box.
// Failure classes: no_answer, assemble_error (converter or assembler
// errors, with line numbers), link_error, crash (signal), timeout,
// resource_limit (CPU, file size, output size), wrong_output (first
// differing lines).
//
// Known gap, for the isolation issue: the box sees the host's files, so
// code can read world-readable files at assembly time through macros that
// spell .incbin, or at run time with open(2); the converter rejects plain
// .incbin/.include only.
package c2x86

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
)

// LaneName is the lane's name in items and specs.
const LaneName = "c2x86"

// cacheVersion changes when the reference pipeline changes meaning.
const cacheVersion = "c2x86-ref-v2" // v2: the register-poisoning shim in driver.o

// File names inside a box.
const (
	answerFile   = "answer.s"
	answerObj    = "answer.o"
	programFile  = "program"
	driverObj    = "driver.o"
	referenceAsm = "reference.s"
)

// ErrBadItem means the item itself is unusable: files missing, the
// function or driver does not compile, the reference program fails or its
// output is not deterministic. Verify returns it as an error (no verdict).
var ErrBadItem = fmt.Errorf("c2x86: %w", tools.ErrBadItem)

// Config configures a Lane.
type Config struct {
	// Sandbox runs every tool. Required.
	Sandbox *sandboxes.Runner
	// GCC and AS are the compiler driver and assembler (looked up in the
	// sandbox's PATH unless absolute). Defaults "gcc" and "as".
	GCC string
	AS  string
	// LD and Objcopy put the register-poisoning shim into driver.o (see
	// poison.go). Defaults "ld" and "objcopy".
	LD      string
	Objcopy string
	// ReferenceFlags compile function.c into the reference assembly.
	// Default -O0 -fno-jump-tables.
	ReferenceFlags []string
	// DriverFlags compile driver.c. Default -O0 -w.
	DriverFlags []string
	// LinkFlags link the program (before the objects); Libs come after.
	// Defaults -no-pie -Wl,-z,noexecstack (a non-executable stack even
	// when the answer lacks .note.GNU-stack) and -lm.
	LinkFlags []string
	Libs      []string
	// CacheDir keeps reference results across restarts; "" keeps them in
	// memory only.
	CacheDir string
	// MemoryCacheEntries bounds the in-memory reference cache. Default 1024.
	MemoryCacheEntries int
	// BuildLimits bound gcc/as/ld runs; RunLimits bound the built program.
	// Zero fields take the defaults below, then the sandbox's.
	BuildLimits sandboxes.Limits
	RunLimits   sandboxes.Limits
	// DiagnosticLines bounds the lines of a diagnostic. Default 10.
	DiagnosticLines int
	// Logger receives debug records; nil discards.
	Logger *slog.Logger
}

// DefaultBuildLimits are the limits for compiler, assembler and linker.
func DefaultBuildLimits() sandboxes.Limits {
	return sandboxes.Limits{
		Wall: 30 * time.Second, CPU: 30 * time.Second, Memory: 2 << 30,
		FileSize: 64 << 20, Output: 64 << 10,
	}
}

// DefaultRunLimits are the limits for the built program. CPU is above Wall
// so that a plain infinite loop reads as a timeout.
func DefaultRunLimits() sandboxes.Limits {
	return sandboxes.Limits{
		Wall: 5 * time.Second, CPU: 10 * time.Second, Memory: 512 << 20,
		FileSize: 16 << 20, Procs: 32, Output: 1 << 20,
	}
}

func (c Config) withDefaults() Config {
	if c.GCC == "" {
		c.GCC = "gcc"
	}
	if c.AS == "" {
		c.AS = "as"
	}
	if c.LD == "" {
		c.LD = "ld"
	}
	if c.Objcopy == "" {
		c.Objcopy = "objcopy"
	}
	if c.ReferenceFlags == nil {
		c.ReferenceFlags = []string{"-O0", "-fno-jump-tables"}
	}
	if c.DriverFlags == nil {
		c.DriverFlags = []string{"-O0", "-w"}
	}
	if c.LinkFlags == nil {
		c.LinkFlags = []string{"-no-pie", "-Wl,-z,noexecstack"}
	}
	if c.Libs == nil {
		c.Libs = []string{"-lm"}
	}
	if c.MemoryCacheEntries == 0 {
		c.MemoryCacheEntries = 1024
	}
	c.BuildLimits = c.BuildLimits.WithDefaults(DefaultBuildLimits())
	c.RunLimits = c.RunLimits.WithDefaults(DefaultRunLimits())
	if c.DiagnosticLines == 0 {
		c.DiagnosticLines = 10
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

// Validate reports whether c is usable.
func (c Config) Validate() error {
	if c.Sandbox == nil {
		return errors.New("c2x86 config: sandbox runner is required")
	}
	if c.MemoryCacheEntries < 0 || c.DiagnosticLines < 0 {
		return errors.New("c2x86 config: negative size")
	}
	if c.CacheDir != "" && !filepath.IsAbs(c.CacheDir) {
		return fmt.Errorf("c2x86 config: cache dir %q is not absolute", c.CacheDir)
	}
	return nil
}

// Lane is the c2x86 lane. It is safe for concurrent use.
type Lane struct {
	cfg Config
	log *slog.Logger

	flight singleflight.Group

	mu        sync.Mutex
	toolchain string // "" until known
	lru       *list.List
	byKey     map[string]*list.Element
}

var _ tools.Lane = (*Lane)(nil)

// New returns a lane. The toolchain is probed on first use.
func New(cfg Config) (*Lane, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	if cfg.CacheDir != "" {
		if err := os.MkdirAll(cfg.CacheDir, 0o755); err != nil {
			return nil, fmt.Errorf("c2x86: cache dir: %w", err)
		}
	}
	return &Lane{cfg: cfg, log: cfg.Logger, lru: list.New(), byKey: map[string]*list.Element{}}, nil
}

// Name is "c2x86".
func (l *Lane) Name() string { return LaneName }

// Extract returns the assembly in a model's final message (see ExtractAsm).
func (l *Lane) Extract(text string) (string, bool) { return ExtractAsm(text) }

// ItemFromFiles builds an item from a function file, a driver file and the
// function's name; extra header files are added under their base names.
func ItemFromFiles(functionPath, driverPath, function string, headers ...string) (tools.Item, error) {
	item := tools.Item{Lane: LaneName, Files: map[string]string{}, Meta: map[string]string{"function": function}}
	// A fixed order, and every unreadable file reported at once, so the
	// error is the same from run to run and names all that is wrong.
	var errs []error
	for _, f := range []struct{ name, path string }{{"function.c", functionPath}, {"driver.c", driverPath}} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", f.name, err))
			continue
		}
		item.Files[f.name] = string(b)
	}
	if len(errs) > 0 {
		return tools.Item{}, fmt.Errorf("c2x86 item: %w", errors.Join(errs...))
	}
	for _, h := range headers {
		b, err := os.ReadFile(h)
		if err != nil {
			return tools.Item{}, fmt.Errorf("c2x86 item: %w", err)
		}
		item.Files[filepath.Base(h)] = string(b)
	}
	return item, nil
}

// ItemFromDir builds an item from a directory holding function.c, driver.c,
// optional *.h files and an optional meta.json whose "function" names the
// function (other string fields and a "categories" list go to Meta too).
func ItemFromDir(dir string) (tools.Item, error) {
	headers, _ := filepath.Glob(filepath.Join(dir, "*.h"))
	item, err := ItemFromFiles(filepath.Join(dir, "function.c"), filepath.Join(dir, "driver.c"), "", headers...)
	if err != nil {
		return tools.Item{}, err
	}
	delete(item.Meta, "function")
	b, err := os.ReadFile(filepath.Join(dir, "meta.json"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return tools.Item{}, fmt.Errorf("c2x86 item: %w", err)
	}
	if err == nil {
		var meta map[string]any
		if err := json.Unmarshal(b, &meta); err != nil {
			return tools.Item{}, fmt.Errorf("c2x86 item: %s: %w", filepath.Join(dir, "meta.json"), err)
		}
		for k, v := range meta {
			switch v := v.(type) {
			case string:
				item.Meta[k] = v
			case []any:
				var parts []string
				for _, x := range v {
					if s, ok := x.(string); ok {
						parts = append(parts, s)
					}
				}
				item.Meta[k] = strings.Join(parts, ",")
			}
		}
	}
	return item, nil
}

// checkItem validates the files of an item.
func checkItem(item tools.Item) error {
	for _, f := range []string{"function.c", "driver.c"} {
		if strings.TrimSpace(item.Files[f]) == "" {
			return fmt.Errorf("%w: %s missing", ErrBadItem, f)
		}
	}
	for name := range item.Files {
		if name != filepath.Base(name) || strings.HasPrefix(name, ".") {
			return fmt.Errorf("%w: file name %q", ErrBadItem, name)
		}
	}
	return nil
}

// writeItem writes the item's sources into a box.
func writeItem(box *sandboxes.Box, item tools.Item) error {
	for name, content := range item.Files {
		if name == "function.c" || name == "driver.c" || strings.HasSuffix(name, ".h") {
			if err := box.WriteFile(name, []byte(content), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}

// Verify judges answer (assembly text, as Extract returns it) against item.
func (l *Lane) Verify(ctx context.Context, item tools.Item, answer string) (tools.Verdict, error) {
	v := newVerdict()
	start := time.Now()
	if strings.TrimSpace(answer) == "" {
		v.stage("extract", false, "no assembly in the answer", time.Since(start))
		v.fail(tools.ClassNoAnswer, "no assembly found: put the complete assembly in one ```asm fenced block")
		return v.Verdict, nil
	}
	v.stage("extract", true, "", time.Since(start))
	v.Artifacts["answer.s"] = []byte(answer)

	start = time.Now()
	converted, st, stripped, err := prepareAsm(answer)
	if err != nil {
		v.stage("convert", false, err.Error(), time.Since(start))
		v.fail(tools.ClassAssembleError, err.Error())
		return v.Verdict, nil
	}
	detail := fmt.Sprintf("%d constants, %d comments rewritten", st.Constants, st.Comments)
	if s := stripped.String(); s != "" {
		detail += "; " + s
	}
	v.stage("convert", true, detail, time.Since(start))
	v.Measurements["converted_constants"] = float64(st.Constants)
	if n := stripped.Total(); n > 0 {
		v.Measurements["stripped_directives"] = float64(n)
	}
	if converted != answer {
		v.Artifacts["converted.s"] = []byte(converted)
	}

	ref, err := l.Reference(ctx, item)
	if err != nil {
		return tools.Verdict{}, err
	}
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return tools.Verdict{}, fmt.Errorf("c2x86 verify: %w", err)
	}
	defer box.Close()
	if err := l.buildAndCheck(ctx, box, converted, ref, v); err != nil {
		return tools.Verdict{}, fmt.Errorf("c2x86 verify: %w", err)
	}
	return v.Verdict, nil
}

// prepareAsm is the "convert" stage: it strips the metadata-only
// directives GNU as rejects ([StripMetadata]), then converts symbolic
// floats ([ConvertFloats]). Line numbers are kept.
func prepareAsm(answer string) (string, ConvertStats, StripStats, error) {
	stripped, ss := StripMetadata(answer)
	converted, cs, err := ConvertFloats(answerFile, stripped)
	return converted, cs, ss, err
}

// build assembles asm and links it with the driver object in box,
// recording the "assemble" and "link" stages. ok is false when a stage
// failed (v then holds the class and diagnostic).
func (l *Lane) build(ctx context.Context, box *sandboxes.Box, asm string, driver []byte, v *verdictBuilder) (ok bool, err error) {
	if err := box.WriteFile(answerFile, []byte(asm), 0o644); err != nil {
		return false, err
	}
	if err := box.WriteFile(driverObj, driver, 0o644); err != nil {
		return false, err
	}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{l.cfg.AS, "--64", "-o", answerObj, answerFile}, Limits: l.cfg.BuildLimits})
	if err != nil {
		return false, fmt.Errorf("assemble: %w", err)
	}
	v.Measurements["assemble_ms"] = ms(res.Wall)
	if !res.OK() {
		diag := toolFailure(res, assemblerDiagnostic(string(res.Stderr), asm, l.cfg.DiagnosticLines))
		v.stage("assemble", false, diag, res.Wall)
		v.fail(buildClass(res, tools.ClassAssembleError), diag)
		return false, nil
	}
	v.stage("assemble", true, firstLines(string(res.Stderr), l.cfg.DiagnosticLines), res.Wall)

	argv := append([]string{l.cfg.GCC}, l.cfg.LinkFlags...)
	argv = append(argv, "-o", programFile, driverObj, answerObj)
	argv = append(argv, l.cfg.Libs...)
	res, err = box.Run(ctx, sandboxes.Spec{Argv: argv, Limits: l.cfg.BuildLimits})
	if err != nil {
		return false, fmt.Errorf("link: %w", err)
	}
	v.Measurements["link_ms"] = ms(res.Wall)
	if !res.OK() {
		diag := toolFailure(res, linkerDiagnostic(string(res.Stderr), l.cfg.DiagnosticLines))
		v.stage("link", false, diag, res.Wall)
		v.fail(buildClass(res, tools.ClassLinkError), diag)
		return false, nil
	}
	v.stage("link", true, "", res.Wall)
	return true, nil
}

// runProgram runs the linked program in box.
func (l *Lane) runProgram(ctx context.Context, box *sandboxes.Box) (sandboxes.Result, error) {
	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"./" + programFile}, Limits: l.cfg.RunLimits, KillOnOutputCap: true})
	if err != nil {
		return res, fmt.Errorf("run: %w", err)
	}
	return res, nil
}

// buildAndCheck runs assemble, link, run and compare for converted
// assembly, recording stages into v.
func (l *Lane) buildAndCheck(ctx context.Context, box *sandboxes.Box, asm string, ref *Reference, v *verdictBuilder) error {
	ok, err := l.build(ctx, box, asm, ref.DriverObject, v)
	if err != nil || !ok {
		return err
	}
	res, err := l.runProgram(ctx, box)
	if err != nil {
		return err
	}
	v.Measurements["run_ms"] = ms(res.Wall)
	v.Measurements["run_cpu_ms"] = ms(res.CPU)
	v.Measurements["output_bytes"] = float64(len(res.Stdout))
	v.Artifacts["stdout"] = res.Stdout
	if len(res.Stderr) > 0 {
		v.Artifacts["stderr"] = res.Stderr
	}
	if class, bad := runClass(res); bad {
		diag := "the program " + res.Describe() + "." + outputProgress(ref.Output, res.Stdout)
		if s := firstLines(string(res.Stderr), 3); s != "" {
			diag += "\nstderr: " + s
		}
		v.stage("run", false, diag, res.Wall)
		v.fail(class, diag)
		return nil
	}
	v.stage("run", true, res.Describe(), res.Wall)

	start := time.Now()
	diff := tools.DiffLines(ref.Output, res.Stdout, l.cfg.DiagnosticLines)
	if diff == "" && res.ExitCode == ref.ExitCode {
		v.stage("compare", true, fmt.Sprintf("%d bytes match", len(res.Stdout)), time.Since(start))
		v.Pass = true
		return nil
	}
	var diag strings.Builder
	diag.WriteString("the output differs from the reference")
	if diff != "" {
		diag.WriteString(":\n" + diff)
	}
	if res.ExitCode != ref.ExitCode {
		fmt.Fprintf(&diag, "\nexit status %d, expected %d", res.ExitCode, ref.ExitCode)
	}
	v.stage("compare", false, diag.String(), time.Since(start))
	v.fail(tools.ClassWrongOutput, diag.String())
	return nil
}

// runClass maps a run that did not exit on its own to a failure class.
func runClass(res sandboxes.Result) (tools.FailureClass, bool) {
	switch res.Outcome() {
	case sandboxes.OutcomeTimeout:
		return tools.ClassTimeout, true
	case sandboxes.OutcomeResourceLimit:
		return tools.ClassResourceLimit, true
	case sandboxes.OutcomeCrashed:
		return tools.ClassCrash, true
	}
	return tools.ClassNone, false
}

// toolFailure describes a failed build step: its diagnostic, or why the
// sandbox ended it.
func toolFailure(res sandboxes.Result, diag string) string {
	if res.Outcome() == sandboxes.OutcomeExited {
		if diag == "" {
			return res.Describe()
		}
		return diag
	}
	return res.Describe() + "\n" + diag
}

// buildClass maps a failed build step to a class: limits and timeouts are
// their own classes, everything else is the step's error class.
func buildClass(res sandboxes.Result, def tools.FailureClass) tools.FailureClass {
	switch res.Outcome() {
	case sandboxes.OutcomeTimeout:
		return tools.ClassTimeout
	case sandboxes.OutcomeResourceLimit:
		return tools.ClassResourceLimit
	}
	return def
}

// outputProgress says how much of the expected output was produced.
func outputProgress(want, got []byte) string {
	wl := bytes.Split(want, []byte("\n"))
	gl := bytes.Split(got, []byte("\n"))
	n := 0
	for n < len(wl)-1 && n < len(gl)-1 && bytes.Equal(wl[n], gl[n]) {
		n++
	}
	return fmt.Sprintf(" Before that it printed %d of the %d expected output lines correctly.", n, max(len(wl)-1, 0))
}

// assemblerDiagnostic keeps the first error and warning lines of the
// assembler and quotes the offending source lines.
func assemblerDiagnostic(stderr, src string, maxLines int) string {
	srcLines := strings.Split(src, "\n")
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.Contains(line, ": Error: ") && !strings.Contains(line, ": Warning: ") {
			continue
		}
		if len(out) >= 2*maxLines {
			break
		}
		out = append(out, line)
		// answer.s:12: Error: ... -> quote line 12
		rest, ok := strings.CutPrefix(line, answerFile+":")
		if !ok {
			continue
		}
		num, _, _ := strings.Cut(rest, ":")
		var n int
		if _, err := fmt.Sscanf(num, "%d", &n); err == nil && n >= 1 && n <= len(srcLines) {
			out = append(out, "    | "+clip(strings.TrimRight(srcLines[n-1], " \t\r"), 160))
		}
	}
	if len(out) == 0 {
		return firstLines(stderr, maxLines)
	}
	return strings.Join(out, "\n")
}

// linkerDiagnostic keeps the linker's first lines, without the driver's
// path noise.
func linkerDiagnostic(stderr string, maxLines int) string {
	var out []string
	for _, line := range strings.Split(stderr, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "collect2:") ||
			strings.Contains(line, "missing .note.GNU-stack") || strings.Contains(line, "NOTE: This behaviour is deprecated") {
			continue
		}
		if i := strings.Index(line, "/ld: "); i >= 0 && strings.HasPrefix(line, "/") {
			line = "ld: " + line[i+len("/ld: "):]
		}
		out = append(out, clip(line, 240))
		if len(out) >= maxLines {
			break
		}
	}
	return strings.Join(out, "\n")
}

func firstLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = append(lines[:n], fmt.Sprintf("... (%d more lines)", len(lines)-n))
	}
	for i, l := range lines {
		lines[i] = clip(l, 240)
	}
	return strings.Join(lines, "\n")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// verdictBuilder accumulates stages.
type verdictBuilder struct{ tools.Verdict }

func newVerdict() *verdictBuilder {
	return &verdictBuilder{tools.Verdict{Measurements: map[string]float64{}, Artifacts: map[string][]byte{}}}
}

func (v *verdictBuilder) stage(name string, ok bool, detail string, d time.Duration) {
	v.Stages = append(v.Stages, tools.Stage{Name: name, OK: ok, Detail: detail, Duration: d})
	v.Stage = name
}

func (v *verdictBuilder) fail(class tools.FailureClass, diag string) {
	v.Pass, v.Class, v.Diagnostic = false, class, diag
}

// Reference is what an item's answers are judged against.
type Reference struct {
	// Key is the cache key (hash of the item files, flags and toolchain).
	Key string `json:"key"`
	// Asm is GCC's reference assembly (-O0 -fno-jump-tables -S).
	Asm string `json:"asm"`
	// DriverObject is driver.c compiled.
	DriverObject []byte `json:"driver_o"`
	// Output and ExitCode are what the reference program printed and
	// returned.
	Output   []byte `json:"output"`
	ExitCode int    `json:"exit_code"`
	// Toolchain names the gcc and as versions.
	Toolchain string `json:"toolchain"`
	// Poison says how the driver's call poisons undefined registers and
	// stack (see poison.go), or why it does not.
	Poison string `json:"poison"`
}

// Reference returns item's reference, computing it at most once per cache
// key (concurrent callers share one computation). Errors wrapping
// ErrBadItem blame the item.
func (l *Lane) Reference(ctx context.Context, item tools.Item) (*Reference, error) {
	if err := checkItem(item); err != nil {
		return nil, err
	}
	tc, err := l.toolchainID(ctx)
	if err != nil {
		return nil, err
	}
	key := l.cacheKey(item, tc)
	// Cache hits and computed references go to the sandbox runner's
	// metrics; callers that wait for another's computation count as neither.
	metrics := l.cfg.Sandbox.Metrics()
	if ref := l.memGet(key); ref != nil {
		metrics.CompileCache(LaneName, true)
		return ref, nil
	}
	ch := l.flight.DoChan(key, func() (any, error) {
		// Detached from one caller's cancellation: others may be waiting.
		// Build limits bound it.
		if ref := l.diskGet(key); ref != nil {
			metrics.CompileCache(LaneName, true)
			l.memPut(ref)
			return ref, nil
		}
		metrics.CompileCache(LaneName, false)
		ref, err := l.computeReference(context.WithoutCancel(ctx), item, key, tc)
		if err != nil {
			return nil, err
		}
		l.diskPut(ref)
		l.memPut(ref)
		return ref, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		return r.Val.(*Reference), nil
	case <-ctx.Done():
		return nil, fmt.Errorf("c2x86 reference: %w", context.Cause(ctx))
	}
}

func (l *Lane) cacheKey(item tools.Item, toolchain string) string {
	h := sha256.New()
	field := func(s string) { fmt.Fprintf(h, "%d:%s;", len(s), s) }
	field(cacheVersion)
	field(toolchain)
	for _, fl := range [][]string{l.cfg.ReferenceFlags, l.cfg.DriverFlags, l.cfg.LinkFlags, l.cfg.Libs} {
		field(strings.Join(fl, "\x00"))
	}
	names := make([]string, 0, len(item.Files))
	for n := range item.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		field(n)
		field(item.Files[n])
	}
	return hex.EncodeToString(h.Sum(nil))
}

// toolchainID is "gcc --version | as --version" (first lines), probed once
// in the sandbox.
func (l *Lane) toolchainID(ctx context.Context) (string, error) {
	l.mu.Lock()
	tc := l.toolchain
	l.mu.Unlock()
	if tc != "" {
		return tc, nil
	}
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return "", fmt.Errorf("c2x86 toolchain: %w", err)
	}
	defer box.Close()
	var parts []string
	for _, argv := range [][]string{{l.cfg.GCC, "--version"}, {l.cfg.AS, "--version"}} {
		res, err := box.Run(ctx, sandboxes.Spec{Argv: argv, Limits: l.cfg.BuildLimits})
		if err != nil {
			return "", fmt.Errorf("c2x86 toolchain: %s: %w", argv[0], err)
		}
		if !res.OK() {
			return "", fmt.Errorf("c2x86 toolchain: %s --version: %s", argv[0], res.Describe())
		}
		first, _, _ := strings.Cut(string(res.Stdout), "\n")
		parts = append(parts, strings.TrimSpace(first))
	}
	tc = strings.Join(parts, " | ")
	l.mu.Lock()
	l.toolchain = tc
	l.mu.Unlock()
	return tc, nil
}

// Toolchain returns the gcc and as versions (probing them if needed).
func (l *Lane) Toolchain(ctx context.Context) (string, error) { return l.toolchainID(ctx) }

func (l *Lane) computeReference(ctx context.Context, item tools.Item, key, tc string) (*Reference, error) {
	box, err := l.cfg.Sandbox.Open(ctx)
	if err != nil {
		return nil, fmt.Errorf("c2x86 reference: %w", err)
	}
	defer box.Close()
	if err := writeItem(box, item); err != nil {
		return nil, fmt.Errorf("c2x86 reference: %w", err)
	}
	compile := func(what string, argv []string) error {
		res, err := box.Run(ctx, sandboxes.Spec{Argv: argv, Limits: l.cfg.BuildLimits})
		if err != nil {
			return fmt.Errorf("c2x86 reference: %s: %w", what, err)
		}
		if !res.OK() {
			return fmt.Errorf("%w: %s: %s: %s", ErrBadItem, what, res.Describe(), firstLines(string(res.Stderr), l.cfg.DiagnosticLines))
		}
		return nil
	}
	argv := append(append([]string{l.cfg.GCC}, l.cfg.ReferenceFlags...), "-S", "-o", referenceAsm, "function.c")
	if err := compile("compile function.c", argv); err != nil {
		return nil, err
	}
	argv = append(append([]string{l.cfg.GCC}, l.cfg.DriverFlags...), "-c", "-o", driverObj, "driver.c")
	if err := compile("compile driver.c", argv); err != nil {
		return nil, err
	}
	asm, err := box.ReadFile(referenceAsm, 16<<20)
	if err != nil {
		return nil, fmt.Errorf("c2x86 reference: %w", err)
	}
	plain, err := box.ReadFile(driverObj, 64<<20)
	if err != nil {
		return nil, fmt.Errorf("c2x86 reference: %w", err)
	}
	ref := &Reference{Key: key, Asm: string(asm), DriverObject: plain, Toolchain: tc}
	// Build the reference assembly exactly as a candidate, then run it
	// twice to catch drivers whose output is not deterministic.
	runs, err := l.runReference(ctx, box, ref.Asm, plain)
	if err != nil {
		return nil, err
	}
	poison := l.poisonDriver(ctx, box, item, ref.Asm, runs[0])
	ref.Poison = poison.String()
	if poison.Off == "" {
		if ref.DriverObject, err = box.ReadFile(driverObj, 64<<20); err != nil {
			return nil, fmt.Errorf("c2x86 reference: %w", err)
		}
	}
	ref.Output, ref.ExitCode = runs[0].Stdout, runs[0].ExitCode
	l.log.Debug("c2x86 reference built", "key", key[:12], "function", item.Meta["function"], "output_bytes", len(ref.Output),
		"poison", ref.Poison)
	return ref, nil
}

// runReference builds the reference assembly with driver and runs it
// twice; a program that fails or prints differently the second time
// makes the item bad.
func (l *Lane) runReference(ctx context.Context, box *sandboxes.Box, asm string, driver []byte) ([2]sandboxes.Result, error) {
	var runs [2]sandboxes.Result
	v := newVerdict()
	ok, err := l.build(ctx, box, asm, driver, v)
	if err != nil {
		return runs, fmt.Errorf("c2x86 reference: %w", err)
	}
	if !ok {
		return runs, fmt.Errorf("%w: reference assembly fails at %s: %s", ErrBadItem, v.Stage, v.Diagnostic)
	}
	for i := range runs {
		res, err := l.runProgram(ctx, box)
		if err != nil {
			return runs, fmt.Errorf("c2x86 reference: %w", err)
		}
		if res.Outcome() != sandboxes.OutcomeExited || res.StdoutTruncated {
			return runs, fmt.Errorf("%w: reference program %s (stdout truncated: %v)", ErrBadItem, res.Describe(), res.StdoutTruncated)
		}
		runs[i] = res
	}
	if !bytes.Equal(runs[0].Stdout, runs[1].Stdout) || runs[0].ExitCode != runs[1].ExitCode {
		return runs, fmt.Errorf("%w: the reference program's output differs between two runs:\n%s",
			ErrBadItem, tools.DiffLines(runs[0].Stdout, runs[1].Stdout, 5))
	}
	return runs, nil
}
