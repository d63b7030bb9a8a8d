package compare

import (
	"encoding/binary"
	"runtime"
	"strconv"
	"syscall"
	"time"

	minhashlsh "github.com/ekzhu/minhash-lsh"
	"github.com/kiln-dev/kiln/runs/curate"
)

// Found is a pair of documents reported as near-duplicates, A < B, with
// the implementation's estimated Jaccard similarity.
type Found struct {
	A, B int32
	Est  float64
}

// Result is one implementation's run over a corpus.
type Result struct {
	Mode        string
	N           int
	Bands, Rows int // LSH configuration actually used
	// Stage times, wall clock. Kiln's Sign shingles internally, so
	// Shingle is zero for kiln and its Sign includes shingling.
	Normalise, Shingle, Sign, LSH time.Duration
	// CPU is the same stages in CPU time of the process (user + system,
	// all threads: with GOMAXPROCS=1 one core's worth): unlike the wall
	// clock it leaves out time the process waited while other work on
	// the machine ran.
	CPU Stages
	// Memory: sampled peak of the live heap above the baseline before
	// the run, the heap retained at the end (index and signatures,
	// after a GC) above the baseline, and bytes allocated in all.
	PeakHeap, Retained, Allocated uint64
	Found                         []Found
	Sigs                          [][]uint64 // every document's signature, until Finish
	// PlantedEst is the estimated similarity of each of the corpus's
	// planted pairs (Corpus.Pairs order), set by Finish.
	PlantedEst []float64
}

// Finish records the estimates of c's planted pairs and drops the
// signatures, so that a later run does not find a larger live heap (and
// fewer garbage collections) than this one did.
func (r *Result) Finish(c *Corpus) {
	r.PlantedEst = make([]float64, len(c.Pairs))
	for i, p := range c.Pairs {
		r.PlantedEst[i] = estimate(r.Sigs[p.A], r.Sigs[p.B])
	}
	r.Sigs = nil
}

// Total is the end-to-end time, text to near-duplicate pairs.
func (r *Result) Total() time.Duration { return r.Normalise + r.Shingle + r.Sign + r.LSH }

// Stages are times of the stages of a run.
type Stages struct{ Normalise, Shingle, Sign, LSH time.Duration }

// Total is the sum of the stages.
func (s Stages) Total() time.Duration { return s.Normalise + s.Shingle + s.Sign + s.LSH }

// stamp is a reading of both clocks.
type stamp struct {
	wall time.Time
	cpu  time.Duration
}

func now() stamp {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return stamp{time.Now(), time.Duration(ru.Utime.Nano() + ru.Stime.Nano())}
}

// add adds the time from a to b to a stage's wall and CPU times.
func add(wall, cpu *time.Duration, a, b stamp) {
	*wall += b.wall.Sub(a.wall)
	*cpu += b.cpu - a.cpu
}

// batch is how many documents go through a stage before the next stage:
// timers are read once per stage and batch, not per document.
const batch = 1024

type memTracker struct {
	base, peak uint64
	allocBase  uint64
	ms         runtime.MemStats
}

func newMemTracker() *memTracker {
	runtime.GC()
	m := &memTracker{}
	runtime.ReadMemStats(&m.ms)
	m.base, m.allocBase = m.ms.HeapAlloc, m.ms.TotalAlloc
	return m
}

func (m *memTracker) sample() {
	runtime.ReadMemStats(&m.ms)
	m.peak = max(m.peak, m.ms.HeapAlloc)
}

// finish fills r's memory figures; keep is what must stay alive.
func (m *memTracker) finish(r *Result, keep ...any) {
	m.sample()
	r.Allocated = m.ms.TotalAlloc - m.allocBase
	r.PeakHeap = sub(m.peak, m.base)
	runtime.GC()
	runtime.ReadMemStats(&m.ms)
	r.Retained = sub(m.ms.HeapAlloc, m.base)
	runtime.KeepAlive(keep)
}

func sub(a, b uint64) uint64 {
	if a < b {
		return 0
	}
	return a - b
}

// Signer makes a signature from normalised tokens (curate.Hasher.Sign or
// a proposed replacement).
type Signer func(tokens []string) (curate.Signature, error)

// RunKiln streams the documents through curate: Normalise, sign (nil:
// curate.Hasher.Sign), then Index.Query (near-duplicates among the
// documents before) and Index.Add for every document, as curate.Deduper
// does, but adding every document so that all pairs are found.
func RunKiln(docs, ids []string, p curate.Params, sign Signer) (*Result, error) {
	var err error
	if sign == nil {
		h, err := curate.NewHasher(p)
		if err != nil {
			return nil, err
		}
		sign = h.Sign
	}
	ix, err := curate.NewIndex(p)
	if err != nil {
		return nil, err
	}
	r := &Result{Mode: "kiln", N: len(docs), Bands: p.Bands, Rows: p.Rows, Sigs: make([][]uint64, len(docs))}
	mt := newMemTracker()
	toks := make([][]string, batch)
	sigs := make([]curate.Signature, batch)
	for lo := 0; lo < len(docs); lo += batch {
		hi := min(lo+batch, len(docs))
		t0 := now()
		for i := lo; i < hi; i++ {
			toks[i-lo] = curate.Normalise(docs[i])
		}
		t1 := now()
		for i := lo; i < hi; i++ {
			sigs[i-lo], err = sign(toks[i-lo])
			if err != nil {
				return nil, err
			}
		}
		t2 := now()
		for i := lo; i < hi; i++ {
			sig := sigs[i-lo]
			for _, m := range ix.Query(sig) {
				j, _ := strconv.Atoi(m.ID)
				r.Found = append(r.Found, Found{A: int32(j), B: int32(i), Est: m.Similarity})
			}
			if err := ix.Add(ids[i], sig); err != nil {
				return nil, err
			}
			r.Sigs[i] = sig
		}
		t3 := now()
		add(&r.Normalise, &r.CPU.Normalise, t0, t1)
		add(&r.Sign, &r.CPU.Sign, t1, t2)
		add(&r.LSH, &r.CPU.LSH, t2, t3)
		clear(toks)
		mt.sample()
	}
	mt.finish(r, ix)
	return r, nil
}

// RunEkzhu runs github.com/ekzhu/minhash-lsh the way its own all-pairs
// command does: a new Minhash per document fed the shingles (here the same
// 64-bit shingle hashes kiln computes, 8 bytes each), MinhashLSH.Add for
// every document, Index, then Query for every document. seed is its
// MinHash seed (1 in the benchmark, as kiln's default). Its LSH is built
// with NewMinhashLSH (32-bit band keys) for numHash hashes at lshThreshold,
// from which it picks its own bands and rows; candidates are then checked
// against threshold with the estimated Jaccard similarity (fraction of
// equal minima), as kiln does.
func RunEkzhu(docs, ids []string, numHash, shingle int, lshThreshold, threshold float64, seed int64) *Result {
	lsh := minhashlsh.NewMinhashLSH(numHash, lshThreshold)
	k, l := lsh.Params()
	r := &Result{Mode: "ekzhu", N: len(docs), Bands: l, Rows: k, Sigs: make([][]uint64, len(docs))}
	mt := newMemTracker()
	toks := make([][]string, batch)
	shs := make([][]uint64, batch)
	for lo := 0; lo < len(docs); lo += batch {
		hi := min(lo+batch, len(docs))
		t0 := now()
		for i := lo; i < hi; i++ {
			toks[i-lo] = curate.Normalise(docs[i])
		}
		t1 := now()
		for i := lo; i < hi; i++ {
			shs[i-lo] = curate.Shingles(toks[i-lo], shingle)
		}
		t2 := now()
		for i := lo; i < hi; i++ {
			r.Sigs[i] = EkzhuSign(seed, numHash, shs[i-lo])
		}
		t3 := now()
		for i := lo; i < hi; i++ {
			lsh.Add(ids[i], r.Sigs[i])
		}
		t4 := now()
		add(&r.Normalise, &r.CPU.Normalise, t0, t1)
		add(&r.Shingle, &r.CPU.Shingle, t1, t2)
		add(&r.Sign, &r.CPU.Sign, t2, t3)
		add(&r.LSH, &r.CPU.LSH, t3, t4)
		clear(toks)
		clear(shs)
		mt.sample()
	}
	t0 := now()
	lsh.Index()
	mt.sample()
	for lo := 0; lo < len(docs); lo += batch {
		hi := min(lo+batch, len(docs))
		for i := lo; i < hi; i++ {
			for _, c := range lsh.Query(r.Sigs[i]) {
				j, _ := strconv.Atoi(c.(string))
				if j <= i {
					continue // the pair is checked from the other side
				}
				if s := estimate(r.Sigs[i], r.Sigs[j]); s >= threshold {
					r.Found = append(r.Found, Found{A: int32(i), B: int32(j), Est: s})
				}
			}
		}
		mt.sample()
	}
	add(&r.LSH, &r.CPU.LSH, t0, now())
	mt.finish(r, lsh)
	return r
}

// estimate is the fraction of equal minima (curate.Similarity's rule).
func estimate(a, b []uint64) float64 {
	eq := 0
	for i := range a {
		if a[i] == b[i] {
			eq++
		}
	}
	return float64(eq) / float64(len(a))
}

// Step is one implementation's work on a document's tokens (tokens) and,
// for those that take them, its shingle hashes (sh, computed untimed).
type Step struct {
	Name string
	Run  func(tokens []string, sh []uint64)
}

// Interleaved times steps over the same documents, batch by batch, each
// batch going through every step in turn (the order rotating from batch
// to batch), so that a slow spell of a shared machine slows every step
// alike and their ratios hold. Normalising and the shingle hashes given to
// the steps are not timed.
func Interleaved(docs []string, shingle int, steps []Step) (wall, cpu []time.Duration) {
	wall, cpu = make([]time.Duration, len(steps)), make([]time.Duration, len(steps))
	toks := make([][]string, batch)
	shs := make([][]uint64, batch)
	for b, lo := 0, 0; lo < len(docs); b, lo = b+1, lo+batch {
		hi := min(lo+batch, len(docs))
		for i := lo; i < hi; i++ {
			toks[i-lo] = curate.Normalise(docs[i])
			shs[i-lo] = curate.Shingles(toks[i-lo], shingle)
		}
		for k := range steps {
			s := (b + k) % len(steps)
			t0 := now()
			for i := range hi - lo {
				steps[s].Run(toks[i], shs[i])
			}
			add(&wall[s], &cpu[s], t0, now())
		}
	}
	return wall, cpu
}

// EkzhuSign is ekzhu's signing of shingle hashes as RunEkzhu does it.
func EkzhuSign(seed int64, numHash int, sh []uint64) []uint64 {
	var buf [8]byte
	mh := minhashlsh.NewMinhash(seed, numHash)
	for _, x := range sh {
		binary.LittleEndian.PutUint64(buf[:], x)
		mh.Push(buf[:])
	}
	return mh.Signature()
}
