package hipify

import (
	"bufio"
	_ "embed"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
)

//go:embed table.txt
var defaultTableText string

// Kind is the class of a table entry.
type Kind string

// Renaming kinds: the CUDA identifier is replaced by the HIP one. They differ
// only in what they document (and in the per-class tests).
const (
	KindAPI       Kind = "api"       // runtime API function
	KindType      Kind = "type"      // runtime type, struct or typedef
	KindEnum      Kind = "enum"      // enumerator or constant
	KindMacro     Kind = "macro"     // predefined or header macro
	KindIntrinsic Kind = "intrinsic" // device intrinsic
	KindDriver    Kind = "driver"    // driver API (cu*, CU*)
	KindLibrary   Kind = "library"   // library API (cuRAND -> hipRAND, cuComplex)
	// KindMember renames a struct member: only after . or -> (a
	// cudaDeviceProp field whose hipDeviceProp_t name differs).
	KindMember Kind = "member"
)

// Other kinds.
const (
	// KindHeader maps an #include path to its HIP counterpart.
	KindHeader Kind = "header"
	// KindUnsupportedHeader marks include paths (or globs) with no HIP
	// counterpart: an #include of one is an Issue.
	KindUnsupportedHeader Kind = "unsupported-header"
	// KindUnsupported marks identifiers (or globs) with no HIP counterpart:
	// every use is an Issue.
	KindUnsupported Kind = "unsupported"
	// KindUnsupportedMember marks a member that is an Issue after . or ->
	// (a cudaDeviceProp field hipDeviceProp_t lacks); elsewhere the name is
	// left alone.
	KindUnsupportedMember Kind = "unsupported-member"
	// KindUnsupportedCG marks a cooperative-groups function that is an Issue
	// when called after . -> or :: in a file that names the
	// cooperative_groups namespace (tile.ballot(), cg::this_thread()).
	KindUnsupportedCG Kind = "unsupported-cg"
	// KindUnsupportedScope marks a namespace that is an Issue where :: follows
	// it (cuda::std, thrust::).
	KindUnsupportedScope Kind = "unsupported-scope"
	// KindUnsupportedTemplate marks an identifier that is an Issue only
	// where a template argument list follows it (texture<float, 1> tex).
	KindUnsupportedTemplate Kind = "unsupported-template"
	// KindDefined renames a macro only where it is tested for definition
	// (#ifdef, #ifndef, defined(X)); any other use is an Issue, because
	// its value has no HIP equivalent (__CUDA_ARCH__ >= 700).
	KindDefined Kind = "defined"
	// KindKeep names identifiers (or globs) that are valid HIP as they
	// are; it silences a broader unsupported glob.
	KindKeep Kind = "keep"
)

func (k Kind) renames() bool {
	switch k {
	case KindAPI, KindType, KindEnum, KindMacro, KindIntrinsic, KindDriver, KindLibrary, KindMember:
		return true
	}
	return false
}

func (k Kind) valid() bool {
	switch k {
	case KindHeader, KindUnsupportedHeader, KindUnsupported, KindUnsupportedMember, KindUnsupportedCG,
		KindUnsupportedScope, KindUnsupportedTemplate, KindDefined, KindKeep:
		return true
	}
	return k.renames()
}

// Action edits the argument list of a call to a renamed identifier.
type Action struct {
	// Op is "drop" (delete argument Arg, with its comma) or "wrap"
	// (replace argument Arg by Func(argument)).
	Op   string
	Arg  int // 1-based
	Func string
}

func (a Action) String() string {
	if a.Op == "wrap" {
		return fmt.Sprintf("wrap=%d:%s", a.Arg, a.Func)
	}
	return fmt.Sprintf("%s=%d", a.Op, a.Arg)
}

// Entry is one line of the table.
type Entry struct {
	Kind Kind
	// CUDA is the identifier or include path matched; for the unsupported
	// and keep kinds it may be a glob (*, ?, [a-z]).
	CUDA string
	// HIP is the replacement (renaming kinds, header, defined).
	HIP string
	// Reason says why a construct is unsupported.
	Reason string
	// Actions edit the call's arguments (renaming kinds only).
	Actions []Action
	// Line is the entry's line in the table text it came from.
	Line int
}

type pattern struct {
	prefix string // literal part before the first metacharacter: a cheap pre-check
	re     *regexp.Regexp
	entry  Entry
}

func (p pattern) match(s string) bool {
	return strings.HasPrefix(s, p.prefix) && p.re.MatchString(s)
}

// Mapping is an immutable CUDA -> HIP translation table. Build one with
// Table or LoadTable; Extend returns a new Mapping.
type Mapping struct {
	idents     map[string]Entry
	headers    map[string]Entry
	idGlobs    []pattern // tried in order, first match wins
	headerGlob []pattern
}

// Table returns the built-in table (embedded table.txt), parsed once.
func Table() *Mapping { return builtinTable() }

var builtinTable = sync.OnceValue(func() *Mapping {
	m, err := (&Mapping{}).extend(strings.NewReader(defaultTableText))
	if err != nil {
		// The embedded table is tested; this cannot happen in a release.
		panic("hipify: built-in table: " + err.Error())
	}
	return m
})

// LoadTable returns the built-in table extended by the entries read from r
// (same format as table.txt). Entries in r replace built-in entries with the
// same CUDA name, and globs in r are tried before the built-in ones.
func LoadTable(r io.Reader) (*Mapping, error) {
	return Table().Extend(r)
}

// Extend returns a copy of m extended by the entries read from r; m itself
// is unchanged.
func (m *Mapping) Extend(r io.Reader) (*Mapping, error) {
	return m.extend(r)
}

func (m *Mapping) extend(r io.Reader) (*Mapping, error) {
	entries, err := parseTable(r)
	if err != nil {
		return nil, err
	}
	out := &Mapping{
		idents:  make(map[string]Entry, len(m.idents)+len(entries)),
		headers: make(map[string]Entry, len(m.headers)),
	}
	for k, v := range m.idents {
		out.idents[k] = v
	}
	for k, v := range m.headers {
		out.headers[k] = v
	}
	var idGlobs, headerGlobs []pattern
	for _, e := range entries {
		header := e.Kind == KindHeader || e.Kind == KindUnsupportedHeader
		if isGlob(e.CUDA) {
			p := pattern{prefix: e.CUDA[:strings.IndexAny(e.CUDA, "*?[")], re: globRegexp(e.CUDA), entry: e}
			if header {
				headerGlobs = append(headerGlobs, p)
			} else {
				idGlobs = append(idGlobs, p)
			}
			continue
		}
		if header {
			out.headers[e.CUDA] = e
		} else {
			out.idents[e.CUDA] = e
		}
	}
	out.idGlobs = append(idGlobs, m.idGlobs...)
	out.headerGlob = append(headerGlobs, m.headerGlob...)
	return out, nil
}

// Lookup returns the entry for the identifier name: an exact entry first,
// else the first glob that matches.
func (m *Mapping) Lookup(name string) (Entry, bool) {
	if e, ok := m.idents[name]; ok {
		return e, true
	}
	for _, p := range m.idGlobs {
		if p.match(name) {
			return p.entry, true
		}
	}
	return Entry{}, false
}

// LookupHeader returns the entry for an include path (without its < > or
// quotes): an exact entry first, else the first glob that matches.
func (m *Mapping) LookupHeader(path string) (Entry, bool) {
	if e, ok := m.headers[path]; ok {
		return e, true
	}
	for _, p := range m.headerGlob {
		if p.match(path) {
			return p.entry, true
		}
	}
	return Entry{}, false
}

// Entries returns every entry, exact ones sorted by kind and name, then the
// globs in the order they are tried.
func (m *Mapping) Entries() []Entry {
	var out []Entry
	for _, e := range m.headers {
		out = append(out, e)
	}
	for _, e := range m.idents {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Kind != out[j].Kind {
			return out[i].Kind < out[j].Kind
		}
		return out[i].CUDA < out[j].CUDA
	})
	for _, p := range m.headerGlob {
		out = append(out, p.entry)
	}
	for _, p := range m.idGlobs {
		out = append(out, p.entry)
	}
	return out
}

func isGlob(s string) bool { return strings.ContainsAny(s, "*?[") }

// globRegexp compiles a glob (* any run, ? one byte, [...] a class) that
// was validated by parseTable.
func globRegexp(g string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := strings.IndexByte(g[i:], ']')
			b.WriteString(g[i : i+j+1])
			i += j
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.MustCompile(b.String())
}

func validGlob(g string) error {
	for i := 0; i < len(g); i++ {
		if g[i] != '[' {
			continue
		}
		j := strings.IndexByte(g[i:], ']')
		if j < 2 {
			return fmt.Errorf("bad character class in %q", g)
		}
		for _, c := range g[i+1 : i+j] {
			if !(c == '-' || c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) {
				return fmt.Errorf("bad character class in %q", g)
			}
		}
		if _, err := regexp.Compile(g[i : i+j+1]); err != nil {
			return fmt.Errorf("bad character class in %q", g)
		}
		i += j
	}
	return nil
}

func validIdent(s string) bool {
	if s == "" || !isIdentStart(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !isIdentChar(s[i]) {
			return false
		}
	}
	return true
}

func validGlobIdent(s string) bool {
	return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_$*?[]-") == ""
}

// parseTable reads table text. Format, one entry per line ('#' starts a
// comment line, blank lines are ignored, fields are separated by blanks):
//
//	header              CUDA-PATH  HIP-PATH
//	unsupported-header  PATH-OR-GLOB  REASON...
//	api|type|enum|macro|intrinsic|driver|library|member  CUDA  HIP  [drop=N|wrap=N:FUNC]
//	defined             CUDA  HIP
//	unsupported         NAME-OR-GLOB  REASON...
//	unsupported-member  NAME  REASON...
//	unsupported-cg      NAME  REASON...
//	unsupported-scope   NAME  REASON...
//	unsupported-template NAME  REASON...
//	keep                NAME-OR-GLOB
func parseTable(r io.Reader) ([]Entry, error) {
	var out []Entry
	seen := map[string]int{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseEntry(line)
		if err != nil {
			return nil, fmt.Errorf("hipify: table line %d: %w", n, err)
		}
		e.Line = n
		key := e.CUDA
		if e.Kind == KindHeader || e.Kind == KindUnsupportedHeader {
			key = "#include " + e.CUDA
		}
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("hipify: table line %d: %s already defined on line %d", n, e.CUDA, prev)
		}
		seen[key] = n
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("hipify: read table: %w", err)
	}
	return out, nil
}

func parseEntry(line string) (Entry, error) {
	f := strings.Fields(line)
	e := Entry{Kind: Kind(f[0])}
	if !e.Kind.valid() {
		return e, fmt.Errorf("unknown kind %q", f[0])
	}
	if len(f) < 2 {
		return e, fmt.Errorf("%s: missing name", e.Kind)
	}
	e.CUDA = f[1]
	rest := f[2:]
	// reason joins the remaining fields of the line.
	reason := func() (string, error) {
		if len(rest) == 0 {
			return "", fmt.Errorf("%s %s: missing reason", e.Kind, e.CUDA)
		}
		return strings.Join(rest, " "), nil
	}
	var err error
	switch {
	case e.Kind == KindHeader:
		if len(rest) != 1 || isGlob(e.CUDA) {
			return e, fmt.Errorf("header wants exactly: header CUDA-PATH HIP-PATH")
		}
		e.HIP = rest[0]
	case e.Kind == KindUnsupportedHeader:
		if err := validGlob(e.CUDA); err != nil {
			return e, err
		}
		e.Reason, err = reason()
	case e.Kind == KindUnsupported || e.Kind == KindKeep:
		if !validGlobIdent(e.CUDA) {
			return e, fmt.Errorf("%q is not an identifier or glob", e.CUDA)
		}
		if err := validGlob(e.CUDA); err != nil {
			return e, err
		}
		if e.Kind == KindKeep {
			if len(rest) != 0 {
				return e, fmt.Errorf("keep takes one name")
			}
			break
		}
		e.Reason, err = reason()
	case e.Kind == KindUnsupportedTemplate || e.Kind == KindUnsupportedMember ||
		e.Kind == KindUnsupportedCG || e.Kind == KindUnsupportedScope:
		if !validIdent(e.CUDA) {
			return e, fmt.Errorf("%q is not an identifier", e.CUDA)
		}
		e.Reason, err = reason()
	default: // renaming kinds and defined
		if !validIdent(e.CUDA) {
			return e, fmt.Errorf("%q is not an identifier", e.CUDA)
		}
		if len(rest) == 0 || !validIdent(rest[0]) {
			return e, fmt.Errorf("%s %s: missing or bad HIP identifier", e.Kind, e.CUDA)
		}
		e.HIP = rest[0]
		if len(rest) == 1 {
			break
		}
		if e.Kind == KindDefined {
			return e, fmt.Errorf("defined takes no actions")
		}
		// One action: the rest of the line, so that a wrap function may
		// hold blanks (reinterpret_cast<const void*>).
		act := strings.Join(rest[1:], " ")
		if strings.Contains(act, "=") && strings.Count(act, "=") > 1 {
			return e, fmt.Errorf("at most one action per entry")
		}
		a, err := parseAction(act)
		if err != nil {
			return e, err
		}
		e.Actions = []Action{a}
	}
	return e, err
}

func parseAction(s string) (Action, error) {
	op, arg, ok := strings.Cut(s, "=")
	if !ok {
		return Action{}, fmt.Errorf("bad action %q (want drop=N or wrap=N:FUNC)", s)
	}
	var a Action
	switch op {
	case "drop":
		a.Op = op
	case "wrap":
		a.Op = op
		var fn string
		arg, fn, ok = strings.Cut(arg, ":")
		if !ok || fn == "" {
			return a, fmt.Errorf("bad action %q (want wrap=N:FUNC)", s)
		}
		a.Func = fn
	default:
		return a, fmt.Errorf("unknown action %q", op)
	}
	n, err := strconv.Atoi(arg)
	if err != nil || n < 1 {
		return a, fmt.Errorf("bad argument number in %q", s)
	}
	a.Arg = n
	return a, nil
}
