package persona

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"unicode"
)

// ErrBadDomains is wrapped by errors in a domain keyword table.
var ErrBadDomains = errors.New("bad domain keyword table")

// Classifier labels a source text with a domain by keyword counts (CASS
// appendix A.4): the text is split into lower-case words (at
// non-alphanumerics, camelCase humps and letter/digit boundaries, so
// "computeGradient", "compute_gradient" and "COMPUTE-GRADIENT" all give
// "compute", "gradient"); every occurrence of a domain's keyword counts one
// for that domain; the domain with the highest count wins, ties going to
// the domain listed first, and a text with no match gets the default.
//
// A keyword of several words matches consecutive words. A word ending in *
// matches any word with that prefix ("encrypt*" matches "encrypt",
// "encryption", "encrypted"); other words must match whole.
type Classifier struct {
	def     string
	domains []domain
}

type domain struct {
	name     string
	keywords []keyword
}

type keyword struct {
	words  []string
	prefix []bool
}

// domainsJSON is the file format of domains.json.
type domainsJSON struct {
	Comment string `json:"comment,omitempty"`
	Default string `json:"default"`
	Domains []struct {
		Name     string   `json:"name"`
		Keywords []string `json:"keywords"`
	} `json:"domains"`
}

// LoadClassifier reads domains.json at the root of fsys.
func LoadClassifier(fsys fs.FS) (*Classifier, error) {
	b, err := readFile(fsys, domainsFile)
	if err != nil {
		return nil, &FileError{Path: domainsFile, Err: err}
	}
	c, err := parseClassifier(b)
	if err != nil {
		return nil, &FileError{Path: domainsFile, Err: err}
	}
	return c, nil
}

// BuiltinClassifier returns the classifier of the embedded domains.json.
func BuiltinClassifier() (*Classifier, error) { return LoadClassifier(Builtin()) }

// Classify labels source with the builtin keyword table; see [Classifier].
// It parses the table on every call: to classify many sources, get a
// classifier once with [BuiltinClassifier] or [Library.Classifier].
func Classify(source string) string {
	c, err := BuiltinClassifier()
	if err != nil { // the embedded table is checked by the tests
		panic(err)
	}
	return c.Classify(source)
}

func parseClassifier(b []byte) (*Classifier, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var raw domainsJSON
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadDomains, err)
	}
	if strings.TrimSpace(raw.Default) == "" {
		return nil, fmt.Errorf("%w: no default domain", ErrBadDomains)
	}
	if len(raw.Domains) == 0 {
		return nil, fmt.Errorf("%w: no domains", ErrBadDomains)
	}
	c := &Classifier{def: raw.Default}
	names := map[string]bool{}
	for i, d := range raw.Domains {
		if strings.TrimSpace(d.Name) == "" {
			return nil, fmt.Errorf("%w: domain %d has no name", ErrBadDomains, i+1)
		}
		if names[d.Name] {
			return nil, fmt.Errorf("%w: domain %q listed twice", ErrBadDomains, d.Name)
		}
		names[d.Name] = true
		if len(d.Keywords) == 0 {
			return nil, fmt.Errorf("%w: domain %q has no keywords", ErrBadDomains, d.Name)
		}
		dom := domain{name: d.Name}
		seen := map[string]bool{}
		for _, k := range d.Keywords {
			kw, err := parseKeyword(k)
			if err != nil {
				return nil, fmt.Errorf("%w: domain %q: %v", ErrBadDomains, d.Name, err)
			}
			norm := fmt.Sprint(kw.words, kw.prefix)
			if seen[norm] {
				return nil, fmt.Errorf("%w: domain %q: keyword %q listed twice", ErrBadDomains, d.Name, k)
			}
			seen[norm] = true
			dom.keywords = append(dom.keywords, kw)
		}
		c.domains = append(c.domains, dom)
	}
	return c, nil
}

func parseKeyword(k string) (keyword, error) {
	var kw keyword
	for _, part := range strings.Fields(k) {
		prefix := strings.HasSuffix(part, "*")
		part = strings.TrimSuffix(part, "*")
		if strings.Contains(part, "*") {
			return kw, fmt.Errorf("keyword %q: * only at the end of a word", k)
		}
		ws := words(part)
		if len(ws) == 0 {
			return kw, fmt.Errorf("keyword %q: a part has no letters or digits", k)
		}
		for i, w := range ws {
			kw.words = append(kw.words, w)
			kw.prefix = append(kw.prefix, prefix && i == len(ws)-1)
		}
	}
	if len(kw.words) == 0 {
		return kw, fmt.Errorf("empty keyword")
	}
	return kw, nil
}

// Default returns the label of a text without any keyword match.
func (c *Classifier) Default() string { return c.def }

// Domains returns the domain names in table order.
func (c *Classifier) Domains() []string {
	out := make([]string, len(c.domains))
	for i, d := range c.domains {
		out[i] = d.name
	}
	return out
}

// Scores returns the keyword match count of every domain for source.
func (c *Classifier) Scores(source string) map[string]int {
	ws := words(source)
	out := make(map[string]int, len(c.domains))
	for _, d := range c.domains {
		out[d.name] = d.score(ws)
	}
	return out
}

// Classify returns the domain of source: the one with the most keyword
// matches, the first listed on a tie, the default when nothing matches.
func (c *Classifier) Classify(source string) string {
	ws := words(source)
	best, bestScore := c.def, 0
	for _, d := range c.domains {
		if s := d.score(ws); s > bestScore {
			best, bestScore = d.name, s
		}
	}
	return best
}

func (d domain) score(ws []string) int {
	n := 0
	for i := range ws {
		for _, k := range d.keywords {
			if k.matchAt(ws, i) {
				n++
			}
		}
	}
	return n
}

func (k keyword) matchAt(ws []string, i int) bool {
	if i+len(k.words) > len(ws) {
		return false
	}
	for j, w := range k.words {
		if k.prefix[j] {
			if !strings.HasPrefix(ws[i+j], w) {
				return false
			}
		} else if ws[i+j] != w {
			return false
		}
	}
	return true
}

// words splits s into lower-case words: runs of letters or digits, split
// further at letter/digit boundaries and camelCase humps ("parseHTTPRequest2"
// gives "parse", "http", "request", "2").
func words(s string) []string {
	var out []string
	rs := []rune(s)
	start := -1
	flush := func(end int) {
		if start >= 0 && end > start {
			out = append(out, strings.ToLower(string(rs[start:end])))
		}
		start = -1
	}
	for i, r := range rs {
		alnum := unicode.IsLetter(r) || unicode.IsDigit(r)
		if !alnum {
			flush(i)
			continue
		}
		if start < 0 {
			start = i
			continue
		}
		prev := rs[i-1]
		switch {
		case unicode.IsDigit(r) != unicode.IsDigit(prev):
			flush(i)
			start = i
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush(i)
			start = i
		case unicode.IsUpper(r) && unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			flush(i)
			start = i
		}
	}
	flush(len(rs))
	return out
}
