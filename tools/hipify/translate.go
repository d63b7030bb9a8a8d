package hipify

import (
	"sort"
	"strings"
)

// Issue is one CUDA construct the translator could not carry over to HIP.
type Issue struct {
	Line, Col int    // 1-based; Col counts bytes, as gcc and clang do
	Construct string // the identifier, or "#include <path>"
	Reason    string
}

// Result is a translation.
type Result struct {
	// HIP is the translated source. It is produced even when there are
	// Unsupported constructs (they are left as they were), so a caller may
	// still look at it; it is not a valid HIP program unless OK.
	HIP string
	// Replacements counts the rewrites made: identifiers renamed, include
	// paths rewritten, and the hip_runtime.h include added.
	Replacements int
	// Unsupported lists the constructs left untranslated, in source order.
	Unsupported []Issue
}

// OK reports whether every CUDA construct was translated.
func (r Result) OK() bool { return len(r.Unsupported) == 0 }

// Translate translates CUDA source to HIP with the built-in table.
func Translate(src string) (Result, error) { return Table().Translate(src) }

// edit replaces src[start:end] with text (an insertion when start == end).
type edit struct {
	start, end int
	text       string
}

// kernelMarkers are identifiers that show a file is CUDA device code, which
// nvcc compiles with cuda_runtime.h included implicitly; hipcc (and nvcc on
// a .hip file) need the HIP runtime header spelled out.
func isKernelMarker(name string) bool {
	switch name {
	case "__global__", "__device__", "__shared__", "__constant__", "__managed__",
		"threadIdx", "blockIdx", "blockDim", "gridDim", "warpSize", "__syncthreads", "dim3":
		return true
	}
	return false
}

// hipRuntimeHeader is the include the translator adds when the source uses
// CUDA without including a runtime header.
const hipRuntimeHeader = "hip/hip_runtime.h"

// Translate translates CUDA source to HIP: whole identifiers outside
// comments and literals are renamed per the table, #include paths are
// rewritten, call arguments are edited where an entry says so, and every
// CUDA construct the table marks unsupported (or does not know, through its
// globs) is recorded as an Issue. Kernel launches (<<<grid, block, shmem,
// stream>>>) are kept: hipcc and nvcc both accept them. The only error is a
// *SyntaxError for source the lexer cannot classify.
func (m *Mapping) Translate(src string) (Result, error) {
	li := newLineIndex(src)
	toks, err := lex(src, li)
	if err != nil {
		return Result{}, err
	}
	tr := &translation{m: m, src: src, li: li, sig: significantTokens(toks)}
	tr.userMacros = tr.definedMacros()
	tr.declared = declaredNames(src, tr.sig)
	tr.usesCG = tr.hasIdent("cooperative_groups")

	for i := 0; i < len(tr.sig); i++ {
		t := tr.sig[i]
		if tr.inDropped(t.start) {
			continue
		}
		switch t.kind {
		case tokHeader:
			tr.header(t)
		case tokIdent:
			tr.ident(i)
		}
	}

	if tr.usesCUDA && !tr.runtimeFirst {
		tr.edits = append(tr.edits, edit{0, 0, "#include <" + hipRuntimeHeader + ">\n"})
		tr.nReplace++
	}
	return Result{HIP: applyEdits(src, tr.edits), Replacements: tr.nReplace, Unsupported: tr.issues}, nil
}

// translation is the state of one Mapping.Translate: the source and its
// significant tokens, what the file defines and declares itself, and the
// edits and issues found so far.
type translation struct {
	m   *Mapping
	src string
	li  lineIndex
	// sig holds the significant tokens (no blanks, newlines, comments).
	sig []token
	// userMacros are the names the file #defines; declared, those it
	// declares (declaredNames).
	userMacros map[string]bool
	declared   map[string]bool
	// usesCG: the file names cooperative_groups.
	usesCG bool

	edits    []edit
	issues   []Issue
	dropped  [][2]int // byte ranges deleted by drop actions
	nReplace int
	usesCUDA bool
	// runtimeFirst: hip_runtime.h is included before any other HIP
	// header. HIP 5.2's hip_cooperative_groups.h (and others) compile
	// only after it, where CUDA's headers stand alone.
	runtimeFirst bool
	otherHIP     bool
}

// significantTokens drops blanks, newlines and comments from toks.
func significantTokens(toks []token) []token {
	sig := make([]token, 0, len(toks)/2)
	for _, t := range toks {
		switch t.kind {
		case tokSpace, tokNewline, tokComment:
		default:
			sig = append(sig, t)
		}
	}
	return sig
}

// text is the source text of significant token i ("" out of range).
func (tr *translation) text(i int) string {
	if i < 0 || i >= len(tr.sig) {
		return ""
	}
	return tr.src[tr.sig[i].start:tr.sig[i].end]
}

// isPunct reports whether significant token i is the punctuator p.
func (tr *translation) isPunct(i int, p string) bool {
	return i >= 0 && i < len(tr.sig) && tr.sig[i].kind == tokPunct && tr.text(i) == p
}

// definedMacros returns the names the file #defines: they are its own,
// whatever they look like.
func (tr *translation) definedMacros() map[string]bool {
	sig := tr.sig
	userMacros := map[string]bool{}
	for i := range sig {
		if sig[i].dir == "#" && sig[i].kind == tokIdent && tr.text(i) == "define" &&
			i+1 < len(sig) && sig[i+1].kind == tokIdent && sig[i+1].dir == "define" {
			userMacros[tr.text(i+1)] = true
		}
	}
	return userMacros
}

// hasIdent reports whether the identifier name occurs in the source.
func (tr *translation) hasIdent(name string) bool {
	for i := range tr.sig {
		if tr.sig[i].kind == tokIdent && tr.text(i) == name {
			return true
		}
	}
	return false
}

// sawHIPHeader notes an include of the HIP header path, for runtimeFirst.
func (tr *translation) sawHIPHeader(path string) {
	switch {
	case path == hipRuntimeHeader:
		if !tr.otherHIP {
			tr.runtimeFirst = true
		}
	case strings.HasPrefix(path, "hip/") || strings.HasPrefix(path, "hiprand/"):
		tr.otherHIP = true
	}
}

// issue records an untranslated construct at byte offset off.
func (tr *translation) issue(off int, construct, reason string) {
	l, c := tr.li.pos(off)
	tr.issues = append(tr.issues, Issue{Line: l, Col: c, Construct: construct, Reason: reason})
}

// inDropped reports whether off lies in a deleted argument; offsets only
// grow, so ranges already passed are forgotten.
func (tr *translation) inDropped(off int) bool {
	live := tr.dropped[:0]
	in := false
	for _, r := range tr.dropped {
		if r[1] <= off {
			continue
		}
		live = append(live, r)
		if off >= r[0] {
			in = true
		}
	}
	tr.dropped = live
	return in
}

// header translates the #include path token t: a CUDA header is renamed or
// recorded as unsupported; any other is only noted (sawHIPHeader).
func (tr *translation) header(t token) {
	path := tr.src[t.start+1 : t.end-1]
	e, ok := tr.m.LookupHeader(path)
	if !ok {
		tr.sawHIPHeader(path)
		return
	}
	switch e.Kind {
	case KindHeader:
		tr.edits = append(tr.edits, edit{t.start + 1, t.end - 1, e.HIP})
		tr.nReplace++
		tr.usesCUDA = true
		tr.sawHIPHeader(e.HIP)
	case KindUnsupportedHeader:
		tr.issue(t.start, "#include "+tr.src[t.start:t.end], e.Reason)
	}
}

// ident translates the identifier sig[i] outside directive names and macro
// definitions: an exact table entry is applied (entry); a name only the
// table's globs know is an issue when they mark it unsupported, unless the
// file defines or declares it itself.
func (tr *translation) ident(i int) {
	t := tr.sig[i]
	if t.dir == "#" {
		return // '#' and the directive name
	}
	name := tr.text(i)
	if t.dir == "define" && i > 0 && tr.sig[i-1].dir == "#" {
		return // the macro being defined
	}
	if t.dir == "undef" {
		return
	}
	if isKernelMarker(name) {
		tr.usesCUDA = true
	}
	afterMember := tr.isPunct(i-1, ".") || tr.isPunct(i-1, "->")
	afterScope := tr.isPunct(i-1, "::")
	e, exact := tr.m.idents[name]
	if !exact {
		// A name the file declares itself is its own, except the
		// reserved __nv prefix: declaring libdevice's __nv_* functions
		// (extern "C" __device__ ...) does not make them exist on AMD.
		if afterMember || tr.userMacros[name] || (tr.declared[name] && !strings.HasPrefix(name, "__nv")) {
			return
		}
		g, ok := tr.m.Lookup(name)
		if ok && g.Kind == KindUnsupported {
			tr.issue(t.start, name, g.Reason)
		}
		return
	}
	tr.entry(i, name, e, afterMember, afterScope)
}

// entry applies the exact table entry e to the identifier sig[i] (name):
// a rename, with its argument action, or an issue, depending on the
// entry's kind and where the name stands (after '.' or '->', after '::',
// before '(', '::' or '<', tested by #ifdef or defined()).
func (tr *translation) entry(i int, name string, e Entry, afterMember, afterScope bool) {
	t := tr.sig[i]
	switch {
	case e.Kind == KindKeep:
	case e.Kind == KindUnsupported:
		tr.issue(t.start, name, e.Reason)
	case e.Kind == KindUnsupportedMember:
		if afterMember {
			tr.issue(t.start, name, e.Reason)
		}
	case e.Kind == KindUnsupportedCG:
		if tr.usesCG && (afterMember || afterScope) && tr.isPunct(i+1, "(") {
			tr.issue(t.start, name, e.Reason)
		}
	case e.Kind == KindUnsupportedScope:
		if !afterMember && tr.isPunct(i+1, "::") {
			tr.issue(t.start, name, e.Reason)
		}
	case e.Kind == KindUnsupportedTemplate:
		if !afterMember && tr.isPunct(i+1, "<") {
			tr.issue(t.start, name, e.Reason)
		}
	case e.Kind == KindDefined:
		if afterMember {
			break
		}
		tested := (t.dir == "ifdef" || t.dir == "ifndef") && tr.sig[i-1].dir == "#" ||
			tr.text(i-1) == "defined" ||
			(tr.isPunct(i-1, "(") && tr.text(i-2) == "defined")
		if !tested {
			tr.issue(t.start, name, "only tests for definition (#ifdef, defined()) translate: its value has no HIP equivalent")
			break
		}
		tr.edits = append(tr.edits, edit{t.start, t.end, e.HIP})
		tr.nReplace++
		tr.usesCUDA = true
	case e.Kind == KindMember:
		if afterMember {
			tr.edits = append(tr.edits, edit{t.start, t.end, e.HIP})
			tr.nReplace++
		}
	case e.Kind.renames():
		if afterMember {
			break
		}
		tr.usesCUDA = true
		if len(e.Actions) > 0 {
			a := e.Actions[0]
			ed, drop, why := argEdit(tr.src, tr.sig, i, a)
			if why != "" {
				tr.issue(t.start, name, why)
				break
			}
			tr.edits = append(tr.edits, ed...)
			if drop[1] > drop[0] {
				tr.dropped = append(tr.dropped, drop)
			}
		}
		tr.edits = append(tr.edits, edit{t.start, t.end, e.HIP})
		tr.nReplace++
	}
}

// applyEdits returns src with edits applied, in order of position
// (insertions before replacements at the same offset); it sorts edits.
func applyEdits(src string, edits []edit) string {
	sort.SliceStable(edits, func(a, b int) bool {
		if edits[a].start != edits[b].start {
			return edits[a].start < edits[b].start
		}
		return edits[a].end < edits[b].end // insertions first
	})
	var out strings.Builder
	out.Grow(len(src) + len(src)/8)
	pos := 0
	for _, e := range edits {
		if e.start < pos {
			continue // inside a dropped argument (edits never overlap otherwise)
		}
		out.WriteString(src[pos:e.start])
		out.WriteString(e.text)
		pos = e.end
	}
	out.WriteString(src[pos:])
	return out.String()
}

// argEdit applies action a to the call whose callee is sig[callee]. It
// returns the edits, the byte range deleted (for drop), or why it cannot.
func argEdit(src string, sig []token, callee int, a Action) ([]edit, [2]int, string) {
	open := callee + 1
	if open >= len(sig) || sig[open].kind != tokPunct || src[sig[open].start:sig[open].end] != "(" {
		return nil, [2]int{}, "the table rewrites this call's arguments, but it is not called here"
	}
	// args[k] = [first, last] significant-token index of argument k.
	var args [][2]int
	depth := 0
	first := open + 1
	closed := false
	for j := open + 1; j < len(sig) && !closed; j++ {
		if sig[j].kind != tokPunct {
			continue
		}
		if k := templateClose(src, sig, j); k > 0 {
			j = k // kern<float, 16>: its comma does not split arguments
			continue
		}
		switch src[sig[j].start:sig[j].end] {
		case "(", "[", "{":
			depth++
		case ")", "]", "}":
			if depth > 0 {
				depth--
				continue
			}
			if j > first {
				args = append(args, [2]int{first, j - 1})
			}
			closed = true
		case ",":
			if depth == 0 {
				args = append(args, [2]int{first, j - 1})
				first = j + 1
			}
		}
	}
	if !closed {
		return nil, [2]int{}, "unbalanced parentheses in the call's arguments"
	}
	if a.Arg > len(args) || args[a.Arg-1][1] < args[a.Arg-1][0] {
		return nil, [2]int{}, "the call lacks the argument the table rewrites"
	}
	arg := args[a.Arg-1]
	start, end := sig[arg[0]].start, sig[arg[1]].end
	switch a.Op {
	case "wrap":
		return []edit{{start, start, a.Func + "("}, {end, end, ")"}}, [2]int{}, ""
	default: // drop
		var r [2]int
		switch {
		case len(args) == 1:
			r = [2]int{start, end}
		case a.Arg < len(args):
			r = [2]int{start, sig[args[a.Arg][0]].start}
		default: // the last of several: take the comma before it
			r = [2]int{sig[args[a.Arg-2][1]].end, end}
		}
		return []edit{{r[0], r[1], ""}}, r, ""
	}
}

// declaredNames returns the identifiers the source itself declares, in the
// simple forms "T name", "T* name", "T& name" followed by = ; , ( ) [ { or :,
// where T is an identifier that is not an expression keyword. A name that
// only a glob of the table would flag (cudaStatus, cuda_ok) is the file's
// own once declared there. Exact table entries are never overridden.
func declaredNames(src string, sig []token) map[string]bool {
	out := map[string]bool{}
	text := func(i int) string { return src[sig[i].start:sig[i].end] }
	for i := 1; i+1 < len(sig); i++ {
		if sig[i].kind != tokIdent || sig[i].dir == "#" {
			continue
		}
		switch text(i + 1) {
		case "=", ";", ",", "(", ")", "[", "{", ":":
		default:
			continue
		}
		j := i - 1
		stars := 0
		for j >= 0 && sig[j].kind == tokPunct && (text(j) == "*" || text(j) == "&") {
			j--
			stars++
		}
		if j < 0 || sig[j].kind != tokIdent || exprKeyword(text(j)) {
			continue
		}
		if stars > 0 {
			// "a * name(...)" reads as an expression unless the type
			// starts a declaration.
			k := j - 1
			for k >= 0 && sig[k].kind == tokIdent && declSpecifier(text(k)) {
				k--
			}
			if k >= 0 && !(sig[k].kind == tokPunct && strings.Contains(";{}(,", text(k))) {
				continue
			}
		}
		out[text(i)] = true
	}
	return out
}

// exprKeyword reports keywords that may stand right before an expression,
// so "return cudaFoo;" is not a declaration of cudaFoo.
func exprKeyword(w string) bool {
	switch w {
	case "return", "case", "else", "do", "sizeof", "throw", "new", "delete", "goto",
		"co_return", "co_yield", "co_await", "alignof", "decltype", "typeid", "not",
		"and", "or", "xor", "bitand", "bitor", "compl", "not_eq", "and_eq", "or_eq",
		"xor_eq", "if", "while", "for", "switch", "operator", "template", "typename":
		return true
	}
	return false
}

// declSpecifier reports words that may precede a declaration's type.
func declSpecifier(w string) bool {
	switch w {
	case "const", "static", "extern", "volatile", "inline", "constexpr", "unsigned",
		"signed", "struct", "class", "union", "enum", "register", "thread_local",
		"mutable", "__device__", "__host__", "__global__", "__shared__", "__constant__",
		"__managed__", "__forceinline__", "__noinline__", "__restrict__", "auto":
		return true
	}
	return false
}

// templateClose returns the index of the '>' closing a template argument
// list opened by the '<' at sig[j], or 0 when sig[j] does not open one. It
// is a heuristic (C++ needs name lookup to know): the '<' follows an
// identifier, the list holds only names, numbers, '::', ',', '*', '&' and
// nested lists, and the token after '>' cannot continue a comparison.
func templateClose(src string, sig []token, j int) int {
	text := func(i int) string { return src[sig[i].start:sig[i].end] }
	if text(j) != "<" || j == 0 || sig[j-1].kind != tokIdent {
		return 0
	}
	depth := 0
	for k := j; k < len(sig); k++ {
		switch sig[k].kind {
		case tokIdent, tokNumber:
			continue
		case tokPunct:
		default:
			return 0
		}
		switch text(k) {
		case "<":
			depth++
		case ">":
			depth--
			if depth > 0 {
				continue
			}
			if k+1 < len(sig) {
				switch text(k + 1) {
				case "(", ")", ",", "::", "{", ";", ">":
					return k
				}
			}
			return 0
		case ",", "::", "*", "&":
		default:
			return 0
		}
	}
	return 0
}
