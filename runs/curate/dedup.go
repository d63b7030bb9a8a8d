package curate

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Doc is a document ready for deduplication: the hash of its normalised
// tokens (exact duplicates) and its MinHash signature (near ones).
type Doc struct {
	ID     string
	Tokens int
	Exact  [sha256.Size]byte
	Sig    Signature // nil when the document has no tokens
}

// Doc prepares a document from its normalised tokens.
func (h *Hasher) Doc(id string, tokens []string) Doc {
	d := Doc{ID: id, Tokens: len(tokens)}
	sum := sha256.New()
	for _, t := range tokens {
		sum.Write([]byte(t))
		sum.Write([]byte{0})
	}
	sum.Sum(d.Exact[:0])
	d.Sig, _ = h.Sign(tokens) // ErrEmpty leaves Sig nil
	return d
}

// Deduper keeps one document per near-duplicate cluster, streaming: each
// document is checked against every one kept before it, so the caller
// offers documents best first (Better) and, round after round, a new
// round's samples are checked against everything already kept.
type Deduper struct {
	idx   *Index
	exact map[[sha256.Size]byte]string
}

// NewDeduper returns an empty Deduper for documents signed with p.
func NewDeduper(p Params) (*Deduper, error) {
	idx, err := NewIndex(p)
	if err != nil {
		return nil, err
	}
	return &Deduper{idx: idx, exact: map[[sha256.Size]byte]string{}}, nil
}

// Offer keeps d unless it duplicates a kept document: it returns that
// document's id and the estimated similarity (1 for an exact duplicate),
// or "" when d is kept. An empty document is kept (nothing to compare).
func (dd *Deduper) Offer(d Doc) (dupOf string, sim float64) {
	if d.Sig == nil {
		return "", 0
	}
	if id, ok := dd.exact[d.Exact]; ok {
		return id, 1
	}
	if m := dd.idx.Query(d.Sig); len(m) > 0 {
		return m[0].ID, m[0].Similarity
	}
	dd.exact[d.Exact] = d.ID
	if err := dd.idx.Add(d.ID, d.Sig); err != nil {
		// Sign made the signature with the same Params: cannot happen.
		panic(err)
	}
	return "", 0
}

// Kept is the number of documents kept.
func (dd *Deduper) Kept() int { return dd.idx.Len() }

// MinReferenceTokens: shorter documents are neither benchmark references
// nor checked against them (a one-line file matches too much).
const MinReferenceTokens = 16

// MaxReferenceFile bounds a benchmark file read by LoadReference.
const MaxReferenceFile = 1 << 20

// Reference is a set of benchmark documents (KernelBench problems, a
// lane's bench set, a user's eval set) that exported samples must not
// contain: exact or near duplicates of a task input or an answer.
type Reference struct {
	h     *Hasher
	idx   *Index
	exact map[[sha256.Size]byte]string
	Files int // documents loaded
}

// NewReference returns an empty reference set; documents are compared
// with h's parameters and threshold.
func NewReference(h *Hasher) *Reference {
	idx, err := NewIndex(h.Params())
	if err != nil {
		panic(err) // h's Params were validated by NewHasher
	}
	return &Reference{h: h, idx: idx, exact: map[[sha256.Size]byte]string{}}
}

// IsAsmFile reports whether a file name is assembly (normalised by
// NormaliseAsm): .s, .S, .asm, .ptx, .sass, .rdna, .gcn, .isa.
func IsAsmFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".s", ".asm", ".ptx", ".sass", ".rdna", ".gcn", ".isa":
		return true
	}
	return false
}

// NormaliseFile normalises a file's text by its name: assembly through
// NormaliseAsm, anything else through Normalise.
func NormaliseFile(name, text string) []string {
	if IsAsmFile(name) {
		return NormaliseAsm(text)
	}
	return Normalise(text)
}

// Add puts one benchmark document into the set; name is how matches
// report it. Documents under MinReferenceTokens are skipped.
func (r *Reference) Add(name string, tokens []string) {
	if len(tokens) < MinReferenceTokens {
		return
	}
	d := r.h.Doc(name, tokens)
	if _, ok := r.exact[d.Exact]; ok {
		return
	}
	r.exact[d.Exact] = name
	if err := r.idx.Add(name, d.Sig); err != nil {
		panic(err)
	}
	r.Files++
}

// LoadDir adds every text file under dir (hidden folders skipped; files
// over MaxReferenceFile, with NUL bytes or not UTF-8 skipped), named by
// dir's base name and the path inside it.
func (r *Reference) LoadDir(dir string) error {
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("benchmark folder: %w", err)
	}
	if !st.IsDir() {
		return fmt.Errorf("benchmark folder %s: not a folder", dir)
	}
	if err := r.LoadFS(os.DirFS(dir), ".", filepath.Base(dir)); err != nil {
		return fmt.Errorf("benchmark folder %s: %w", dir, err)
	}
	return nil
}

// LoadFS adds every text file under root in fsys, as LoadDir does, each
// named name/<path inside root>. It is how a lane's embedded benchmark set
// joins the references.
func (r *Reference) LoadFS(fsys fs.FS, root, name string) error {
	usable := 0 // documents long enough: a set loaded twice adds nothing new but is no error
	err := fs.WalkDir(fsys, root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != root && strings.HasPrefix(e.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		info, err := e.Info()
		if err != nil || info.Size() > MaxReferenceFile {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		if bytes.IndexByte(b, 0) >= 0 || !utf8.Valid(b) {
			return nil
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		if root == "." {
			rel = p
		}
		tokens := NormaliseFile(p, string(b))
		if len(tokens) >= MinReferenceTokens {
			usable++
		}
		r.Add(path.Join(name, rel), tokens)
		return nil
	})
	if err != nil {
		return err
	}
	if usable == 0 {
		return fmt.Errorf("no text file of %d tokens or more", MinReferenceTokens)
	}
	return nil
}

// Match returns the benchmark document that tokens duplicate, exactly
// (similarity 1) or nearly (estimated Jaccard similarity at least the
// threshold), or "" when none does.
func (r *Reference) Match(tokens []string) (name string, sim float64) {
	if len(tokens) < MinReferenceTokens || r.Files == 0 {
		return "", 0
	}
	d := r.h.Doc("", tokens)
	if n, ok := r.exact[d.Exact]; ok {
		return n, 1
	}
	if m := r.idx.Query(d.Sig); len(m) > 0 {
		return m[0].ID, m[0].Similarity
	}
	return "", 0
}
