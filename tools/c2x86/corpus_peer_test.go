package c2x86

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kiln-dev/kiln/prompts"
	"github.com/kiln-dev/kiln/sandboxes"
	"github.com/kiln-dev/kiln/tools"
)

// The peer suite: answers written by the compilers people and models learn
// from, not by us. Every corpus item is compiled with gcc and clang-15 at
// -O0..-O3 (and -masm=intel); each assembly must pass the lane's real
// verifier (sandbox, GNU as, ld), and a behaviour-changing mutant of each
// must fail. The default tier checks one item per category, each in one
// configuration, every configuration once (TestPeerCompilersSample); the
// long build tag checks those items in every configuration, and the whole
// corpus (corpus_peer_long_test.go).

// peerConfig is one compiler configuration whose -S output the lane must
// accept.
type peerConfig struct {
	cc    string   // compiler command
	flags []string // before -S
}

func (c peerConfig) name() string { return c.cc + " " + strings.Join(c.flags, " ") }

func (c peerConfig) intel() bool { return slices.Contains(c.flags, "-masm=intel") }

// peerConfigs are the twelve configurations: gcc and clang-15 at -O0..-O3
// in AT&T syntax, and both at -O0 and -O2 in Intel syntax.
func peerConfigs() []peerConfig {
	var out []peerConfig
	for _, cc := range []string{"gcc", "clang-15"} {
		for _, o := range []string{"-O0", "-O1", "-O2", "-O3"} {
			out = append(out, peerConfig{cc: cc, flags: []string{o}})
		}
		for _, o := range []string{"-O0", "-O2"} {
			out = append(out, peerConfig{cc: cc, flags: []string{o, "-masm=intel"}})
		}
	}
	return out
}

// peerSample is one item per category: the first item (by id) whose first
// category it is, else the first item not yet picked that carries it.
func peerSample(items []prompts.CorpusItem) []prompts.CorpusItem {
	var out []prompts.CorpusItem
	picked := map[string]bool{}
	for _, c := range CorpusSpec().Categories {
		pick := -1
		for i, it := range items {
			if picked[it.ID] || !it.HasCategory(c) {
				continue
			}
			if pick < 0 || it.Categories[0] == c && items[pick].Categories[0] != c {
				pick = i
			}
		}
		if pick >= 0 {
			picked[items[pick].ID] = true
			out = append(out, items[pick])
		}
	}
	return out
}

// TestPeerCompilersSample runs the peer suite on one corpus item per
// category: in the default tier (and with -short) each item in one
// configuration, the twelve items covering the twelve configurations;
// with -tags long each item in every configuration.
func TestPeerCompilersSample(t *testing.T) {
	t.Parallel()
	items, err := LoadBuiltinCorpus()
	if err != nil {
		t.Fatal(err)
	}
	sample := peerSample(items)
	if len(sample) != len(CorpusSpec().Categories) {
		t.Fatalf("sample has %d items for %d categories", len(sample), len(CorpusSpec().Categories))
	}
	runPeerSuite(t, sample, longTier)
}

// peerTally counts one configuration's results.
type peerTally struct {
	asm, pass               int
	killed                  map[string]int // by operator
	killClass               map[string]int // by failure class
	equivalent, unassembled int
	symTried, symPass       int // assemblies also checked with symbolic constants
	noKill                  int
}

// peerStats collects tallies across parallel subtests.
type peerStats struct {
	mu     sync.Mutex
	by     map[string]*peerTally
	equivs []string
	ubs    []string // mutants whose output changes from run to run
}

func (s *peerStats) tally(cfg string, f func(*peerTally)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.by[cfg] == nil {
		s.by[cfg] = &peerTally{killed: map[string]int{}, killClass: map[string]int{}}
	}
	f(s.by[cfg])
}

// runPeerSuite checks items in every configuration (matrix), else each
// item in one configuration, and logs a table of the results.
func runPeerSuite(t *testing.T, items []prompts.CorpusItem, matrix bool) {
	start := time.Now()
	stats := &peerStats{by: map[string]*peerTally{}}
	configs := peerConfigs()
	diagonal := testing.Short() || !matrix
	if diagonal {
		if len(items) < len(configs) {
			t.Fatalf("%d items cannot cover the %d configurations one item each", len(items), len(configs))
		}
		t.Logf("each item in one configuration (item i in configuration (i+6) mod %d; every configuration: -tags long)", len(configs))
	}
	t.Run("configs", func(t *testing.T) {
		for ci, cfg := range configs {
			t.Run(strings.ReplaceAll(cfg.name(), " ", "_"), func(t *testing.T) {
				t.Parallel()
				if _, err := exec.LookPath(cfg.cc); err != nil {
					t.Skipf("%s not found in PATH: install Debian's %s package (setup.sh does) to check its output", cfg.cc, cfg.cc)
				}
				for i, it := range items {
					if diagonal && (i+6)%len(configs) != ci {
						continue
					}
					t.Run(it.ID, func(t *testing.T) {
						t.Parallel()
						checkPeer(t, cfg, it, i, stats)
					})
				}
			})
		}
	})
	logPeerStats(t, stats, len(items), time.Since(start))
}

// checkPeer verifies cfg's assembly of it (must pass) and its mutants
// (the first behaviour-changing one must fail).
func checkPeer(t *testing.T, cfg peerConfig, it prompts.CorpusItem, index int, stats *peerStats) {
	item := tools.Item{Lane: LaneName, Files: it.Files, Meta: map[string]string{"function": it.Function}}
	asm := compilePeer(t, cfg, it)
	// The answer goes through extraction as a model would send it.
	msg := "Here is the x86-64 assembly for `" + it.Function + "`:\n\n```asm\n" + asm + "```\n"
	got, ok := ExtractAsm(msg)
	if !ok || got != asm {
		t.Fatalf("extraction changed the compiler's text (ok %v)", ok)
	}
	if bare, ok := ExtractAsm("```\n" + asm + "```\n"); !ok || bare != asm {
		t.Errorf("an unlabelled fence of this assembly is not recognised as assembly (ok %v)", ok)
	}
	v := verify(t, item, got)
	stats.tally(cfg.name(), func(p *peerTally) { p.asm++ })
	if !v.Pass {
		t.Fatalf("%s: class %s at %s: %s", cfg.name(), v.Class, v.Stage, v.Diagnostic)
	}
	stats.tally(cfg.name(), func(p *peerTally) { p.pass++ })
	if strings.Contains(asm, ".addrsig") != strings.Contains(v.Stages[1].Detail, ".addrsig (") {
		t.Errorf("convert stage detail %q does not match the .addrsig directives of the answer", v.Stages[1].Detail)
	}
	// clang's constants written symbolically, as a model would: the
	// converter must give back clang's words.
	if sym, n := symbolise(asm); n > 0 {
		v := verify(t, item, sym)
		ok := v.Pass && v.Measurements["converted_constants"] == float64(n)
		if !ok {
			t.Errorf("%d constants written as .float/.double: class %s at %s (%v converted): %s", n, v.Class, v.Stage,
				v.Measurements["converted_constants"], v.Diagnostic)
		}
		stats.tally(cfg.name(), func(p *peerTally) {
			p.symTried++
			if ok {
				p.symPass++
			}
		})
	}
	killPeerMutant(t, cfg, item, asm, index, stats)
}

// clangConstRE matches a constant as clang prints it with its value:
// ".long 0x40c00000 # float 6", ".quad 0x3fb999999999999a # double 0.1".
var clangConstRE = regexp.MustCompile(`(?m)^(\s*)\.(long|quad)(\s+)0x[0-9a-f]+\s+# (float|double) (-?[0-9][0-9.]*(?:e[-+]?[0-9]+)?)\s*$`)

// symbolise rewrites clang's commented constants into .float/.double with
// the value clang printed; n is the number rewritten.
func symbolise(asm string) (string, int) {
	n := 0
	out := clangConstRE.ReplaceAllStringFunc(asm, func(m string) string {
		n++
		return clangConstRE.ReplaceAllString(m, "$1.$4$3$5")
	})
	return out, n
}

// compilePeer compiles function.c of it with cfg (outside the sandbox:
// a test fixture from our own corpus).
func compilePeer(t *testing.T, cfg peerConfig, it prompts.CorpusItem) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range it.Files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := append(append([]string{}, cfg.flags...), "-S", "-o", "-", "function.c")
	cmd := exec.Command(cfg.cc, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", cfg.name(), err)
	}
	return string(out)
}

// killPeerMutant tries the mutants of asm in order until one changes the
// program's behaviour; the verifier must fail that one. A mutant the
// verifier passes is checked by building and running it outside the lane:
// if its output equals the reference it is equivalent (counted and
// logged), otherwise the verifier is wrong.
func killPeerMutant(t *testing.T, cfg peerConfig, item tools.Item, asm string, index int, stats *peerStats) {
	cands := peerMutants(asm, cfg.intel(), index, 8)
	if len(cands) == 0 {
		stats.tally(cfg.name(), func(p *peerTally) { p.noKill++ })
		t.Errorf("%s: no mutation site in the assembly", cfg.name())
		return
	}
	var tried []string
	for _, m := range cands {
		v := verify(t, item, m.asm)
		switch {
		case v.Pass:
			same, stable := sameAsReference(t, item, m.asm)
			if !stable {
				// Undefined behaviour (an out-of-bounds read of the stack
				// canary, say): the output changes from run to run, and the
				// verifier's one run may match the reference by luck.
				tried = append(tried, m.desc+" (nondeterministic)")
				stats.mu.Lock()
				stats.ubs = append(stats.ubs, fmt.Sprintf("%s %s: %s", cfg.name(), item.Meta["function"], m.desc))
				stats.mu.Unlock()
				continue
			}
			if !same {
				t.Fatalf("%s: mutant %s passes, but its program's output differs from the reference", cfg.name(), m.desc)
			}
			tried = append(tried, m.desc+" (equivalent)")
			stats.tally(cfg.name(), func(p *peerTally) { p.equivalent++ })
			stats.mu.Lock()
			stats.equivs = append(stats.equivs, fmt.Sprintf("%s %s: %s", cfg.name(), item.Meta["function"], m.desc))
			stats.mu.Unlock()
		case v.Class == tools.ClassAssembleError || v.Class == tools.ClassLinkError:
			tried = append(tried, m.desc+" ("+string(v.Class)+")")
			stats.tally(cfg.name(), func(p *peerTally) { p.unassembled++ })
		case v.Class == tools.ClassWrongOutput || v.Class == tools.ClassCrash || v.Class == tools.ClassTimeout ||
			v.Class == tools.ClassResourceLimit && v.Stage == "run":
			// resource_limit: a mutant looping on a print floods its output;
			// whether the output cap or the time limit stops it first depends
			// on the host's load (seen once in the long tier)
			stats.tally(cfg.name(), func(p *peerTally) { p.killed[m.op]++; p.killClass[string(v.Class)]++ })
			return
		default:
			t.Fatalf("%s: mutant %s: unexpected class %s at %s: %s", cfg.name(), m.desc, v.Class, v.Stage, v.Diagnostic)
		}
	}
	stats.tally(cfg.name(), func(p *peerTally) { p.noKill++ })
	t.Errorf("%s: no behaviour-changing mutant among %d tried: %s", cfg.name(), len(tried), strings.Join(tried, "; "))
}

// sameAsReference builds asm with the driver in a sandbox box, without the
// lane's pipeline (only .addrsig lines are dropped, by a regexp), runs it
// three times and compares its output and exit status with the
// reference's: same when every run matches, stable when the runs agree
// with each other.
func sameAsReference(t *testing.T, item tools.Item, asm string) (same, stable bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	ref, err := testLane.Reference(ctx, item)
	if err != nil {
		t.Fatal(err)
	}
	box, err := testRunner.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer box.Close()
	plain := regexp.MustCompile(`(?m)^\s*\.addrsig.*$`).ReplaceAllString(asm, "")
	if err := box.WriteFile("m.s", []byte(plain), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := box.WriteFile("d.o", ref.DriverObject, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := box.Run(ctx, sandboxes.Spec{Argv: []string{"gcc", "-no-pie", "-o", "p", "d.o", "m.s", "-lm"}, Limits: DefaultBuildLimits()})
	if err != nil || !res.OK() {
		t.Fatalf("oracle build: %v %s %s", err, res.Describe(), res.Stderr)
	}
	same, stable = true, true
	var first string
	for i := range 3 {
		res, err = box.Run(ctx, sandboxes.Spec{Argv: []string{"./p"}, Limits: sandboxes.Limits{Wall: 5 * time.Second}})
		if err != nil {
			t.Fatal(err)
		}
		same = same && res.Outcome() == sandboxes.OutcomeExited && string(res.Stdout) == string(ref.Output) && res.ExitCode == ref.ExitCode
		got := fmt.Sprintf("%s %d %s", res.Outcome(), res.ExitCode, res.Stdout)
		if i == 0 {
			first = got
		}
		stable = stable && got == first
	}
	return same, stable
}

// logPeerStats logs one line per configuration and the equivalent mutants.
func logPeerStats(t *testing.T, stats *peerStats, items int, took time.Duration) {
	stats.mu.Lock()
	defer stats.mu.Unlock()
	names := make([]string, 0, len(stats.by))
	for n := range stats.by {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "peer suite: %d items, %d configurations checked, %v\n", items, len(names), took.Round(time.Second))
	fmt.Fprintf(&b, "| configuration | pass | symbolic pass | mutants killed (by operator) | killed as | equivalent | not assembled | no kill |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|\n")
	for _, n := range names {
		p := stats.by[n]
		fmt.Fprintf(&b, "| `%s` | %d/%d | %d/%d | %d %s | %s | %d | %d | %d |\n", n, p.pass, p.asm, p.symPass, p.symTried, sum(p.killed), counts(p.killed),
			counts(p.killClass), p.equivalent, p.unassembled, p.noKill)
	}
	sort.Strings(stats.ubs)
	for _, e := range stats.ubs {
		fmt.Fprintf(&b, "nondeterministic mutant (undefined behaviour; passed the verifier once by luck, skipped): %s\n", e)
	}
	sort.Strings(stats.equivs)
	for _, e := range stats.equivs {
		fmt.Fprintf(&b, "equivalent mutant: %s\n", e)
	}
	t.Log(b.String())
}

func sum(m map[string]int) int {
	n := 0
	for _, c := range m {
		n += c
	}
	return n
}

func counts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// peerMutant is asm with one behaviour-changing edit.
type peerMutant struct {
	op   string // one of peerOps
	desc string // line number and the edit
	asm  string
}

// Mutation operators, in the order a rotation starts from: flip a
// condition code (jcc, setcc), add 1 to an immediate, swap add and sub,
// flip a high bit of a constant in .rodata/.data, swap SSE mul and div,
// replace an arithmetic or logic instruction with nop.
var peerOps = []string{"cond", "imm", "addsub", "data", "muldiv", "drop"}

// peerMutants returns up to max mutants of asm: the operators' sites
// interleaved (first site of each operator, then second, ...), starting
// with operator index mod len(peerOps) so the corpus exercises them all.
func peerMutants(asm string, intel bool, index, max int) []peerMutant {
	lines := strings.Split(asm, "\n")
	sites := map[string][]peerMutant{}
	section := ".text"
	for i, line := range lines {
		code, _, _ := strings.Cut(line, "#")
		code = strings.TrimSpace(code)
		if code == "" || strings.HasSuffix(code, ":") {
			continue
		}
		if s, ok := sectionOf(code); ok {
			section = s
			continue
		}
		for _, op := range peerOps {
			if repl, ok := mutateLine(op, code, intel, section); ok {
				mutated := slices.Clone(lines)
				mutated[i] = "\t" + repl
				sites[op] = append(sites[op], peerMutant{op: op, desc: fmt.Sprintf("%s line %d %q -> %q", op, i+1, code, repl),
					asm: strings.Join(mutated, "\n")})
			}
		}
	}
	var out []peerMutant
	for k := 0; len(out) < max; k++ {
		added := false
		for j := range peerOps {
			op := peerOps[(index+j)%len(peerOps)]
			if k < len(sites[op]) && len(out) < max {
				out = append(out, sites[op][k])
				added = true
			}
		}
		if !added {
			break
		}
	}
	return out
}

// sectionOf returns the section a section-switching directive selects.
func sectionOf(code string) (string, bool) {
	f := strings.Fields(strings.ReplaceAll(code, ",", " "))
	switch f[0] {
	case ".text", ".data", ".bss":
		return f[0], true
	case ".section":
		if len(f) > 1 {
			return strings.Trim(f[1], `"`), true
		}
	}
	return "", false
}

var (
	numRE    = regexp.MustCompile(`^-?(0x[0-9a-fA-F]+|[0-9]+)$`)
	stackReg = regexp.MustCompile(`%?\b[re]?sp\b`)
)

// mutateLine applies operator op to one code line (comment stripped); ok
// is false when op does not apply.
func mutateLine(op, code string, intel bool, section string) (string, bool) {
	mn, rest, _ := strings.Cut(strings.Replace(code, "\t", " ", 1), " ")
	rest = strings.TrimSpace(rest)
	inText := section == ".text" || strings.HasPrefix(section, ".text.")
	switch op {
	case "cond":
		if !inText {
			return "", false
		}
		for _, p := range []string{"j", "set"} {
			if cc, ok := strings.CutPrefix(mn, p); ok && mn != "jmp" && validCC(cc) {
				return p + invertCC(cc) + "\t" + rest, true
			}
		}
	case "imm":
		if inText && !stackReg.MatchString(rest) && !strings.HasPrefix(mn, ".") {
			return mutateImm(mn, rest, intel)
		}
	case "addsub":
		if !inText || stackReg.MatchString(rest) {
			return "", false
		}
		if m := addSubRE.FindStringSubmatch(mn); m != nil {
			swap := map[string]string{"add": "sub", "sub": "add"}[m[1]]
			return swap + m[2] + "\t" + rest, true
		}
	case "muldiv":
		if m := mulDivRE.FindStringSubmatch(mn); inText && m != nil {
			swap := map[string]string{"mul": "div", "div": "mul"}[m[1]]
			return swap + m[2] + "\t" + rest, true
		}
	case "drop":
		if inText && dropRE.MatchString(mn) && mn != "notrack" && !stackReg.MatchString(rest) {
			return "nop", true
		}
	case "data":
		if strings.HasPrefix(section, ".rodata") || strings.HasPrefix(section, ".data") {
			return mutateData(mn, rest)
		}
	}
	return "", false
}

// mutateImm adds 1 to the immediate operand (AT&T: the first, $N; Intel:
// the last, a bare number).
func mutateImm(mn, rest string, intel bool) (string, bool) {
	ops := strings.Split(rest, ",")
	k := 0
	if intel {
		k = len(ops) - 1
	}
	s := strings.TrimSpace(ops[k])
	if !intel {
		if !strings.HasPrefix(s, "$") {
			return "", false
		}
		s = s[1:]
	}
	if !numRE.MatchString(s) {
		return "", false
	}
	n, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return "", false
	}
	ops[k] = strings.Replace(ops[k], s, strconv.FormatInt(n+1, 10), 1)
	return mn + "\t" + strings.Join(ops, ","), true
}

// mutateData flips a high bit of the first value of a .long (bit 30: a
// float's top exponent bit), .quad (bit 62) or .byte (bit 5).
func mutateData(mn, rest string) (string, bool) {
	bit := map[string]uint{".long": 30, ".quad": 62, ".byte": 5}[mn]
	first, more, _ := strings.Cut(rest, ",")
	first = strings.TrimSpace(first)
	if bit == 0 || !numRE.MatchString(first) {
		return "", false
	}
	n, err := strconv.ParseInt(first, 0, 64)
	if err != nil {
		u, err2 := strconv.ParseUint(first, 0, 64)
		if err2 != nil {
			return "", false
		}
		n = int64(u)
	}
	out := mn + "\t" + strconv.FormatInt(n^(1<<bit), 10)
	if more != "" {
		out += "," + more
	}
	return out, true
}

var (
	addSubRE = regexp.MustCompile(`^(add|sub)([bwlq]|ss|sd|ps|pd)?$`)
	mulDivRE = regexp.MustCompile(`^(mul|div)(ss|sd)$`)
	dropRE   = regexp.MustCompile(`^(bswap|neg|not|inc|dec|xor|and|or|sh[lr]|sa[lr]|ro[lr]|i?mul|i?div|sqrt|lea)[a-z]*$`)
)

// validCC reports whether cc is a condition code GNU as knows after j/set.
func validCC(cc string) bool {
	switch strings.TrimPrefix(cc, "n") {
	case "e", "z", "l", "le", "g", "ge", "b", "be", "a", "ae", "s", "p", "o", "c":
		return true
	}
	return false
}

// invertCC negates a condition code: ne <-> e, l <-> nl, ...
func invertCC(cc string) string {
	if rest, ok := strings.CutPrefix(cc, "n"); ok {
		return rest
	}
	return "n" + cc
}
