package curate

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestParamsValidate(t *testing.T) {
	if err := DefaultParams().Validate(); err != nil {
		t.Fatal(err)
	}
	bad := DefaultParams()
	bad.Bands = 10
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "bands 10 x rows 8") {
		t.Errorf("bands x rows != perms: %v", err)
	}
	bad = DefaultParams()
	bad.Threshold = 0
	if bad.Validate() == nil {
		t.Error("threshold 0 accepted")
	}
}

func TestMulAddMod61(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	p := new(big61)
	for range 10000 {
		a, x, b := r.Uint64N(mersenne61), r.Uint64N(mersenne61), r.Uint64N(mersenne61)
		if got, want := mulAddMod61(a, x, b), p.mulAdd(a, x, b); got != want {
			t.Fatalf("(%d*%d+%d) mod p = %d, want %d", a, x, b, got, want)
		}
	}
}

// big61 computes (a*x+b) mod 2^61-1 by schoolbook long division on 32-bit
// halves: an independent check of mulAddMod61.
type big61 struct{}

func (big61) mulAdd(a, x, b uint64) uint64 {
	var acc uint64
	// Horner over x's bits: acc = acc*2 + a*bit, all mod p.
	for i := 63; i >= 0; i-- {
		acc = (acc * 2) % mersenne61
		if x>>uint(i)&1 == 1 {
			acc = (acc + a) % mersenne61
		}
	}
	return (acc + b) % mersenne61
}

// The estimate of the Jaccard similarity is unbiased with standard error
// sqrt(J(1-J)/perms): over many random set pairs its mean error is near 0
// and no error is far beyond 4 standard errors.
func TestSimilarityEstimatesJaccard(t *testing.T) {
	h, err := NewHasher(DefaultParams())
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	var sumErr float64
	const pairs = 200
	for n := range pairs {
		shared := 20 + r.IntN(200)
		onlyA, onlyB := r.IntN(200), r.IntN(200)
		var a, b []string
		for i := range shared {
			w := fmt.Sprintf("s%d_%d", n, i)
			a, b = append(a, w), append(b, w)
		}
		for i := range onlyA {
			a = append(a, fmt.Sprintf("a%d_%d", n, i))
		}
		for i := range onlyB {
			b = append(b, fmt.Sprintf("b%d_%d", n, i))
		}
		// Shingles of 1 token: the sets are the tokens.
		sa, _ := h.signSet(a)
		sb, _ := h.signSet(b)
		j := float64(shared) / float64(shared+onlyA+onlyB)
		est := Similarity(sa, sb)
		se := math.Sqrt(j*(1-j)/float64(len(sa))) + 1e-9
		if math.Abs(est-j) > 4.5*se+1.0/float64(len(sa)) {
			t.Errorf("pair %d: J %.3f estimated %.3f (se %.3f)", n, j, est, se)
		}
		sumErr += est - j
	}
	if mean := sumErr / pairs; math.Abs(mean) > 0.01 {
		t.Errorf("mean error %.4f: biased", mean)
	}
}

// signSet signs tokens as a set (shingles of one token).
func (h *Hasher) signSet(tokens []string) (Signature, error) {
	p := h.p
	p.Shingle = 1
	hh := &Hasher{p: p, a: h.a, b: h.b}
	return hh.Sign(tokens)
}

const kernelA = `// Scale a vector.
#include <cuda_runtime.h>
__global__ void scale(float *out, const float *in, float k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;   /* one element per thread */
    if (i < n) out[i] = in[i] * k;
}
int main() { float *d; cudaMalloc(&d, 1024 * sizeof(float)); scale<<<4, 256>>>(d, d, 2.0f, 1024); return 0; }
`

// kernelA with other names, comments and layout: the same tokens.
const kernelARenamed = `#include <cuda_runtime.h>
// multiplies every element by a factor
__global__ void mul_by(float *dst,
                       const float *src, float factor, int count)
{
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < count) dst[idx] = src[idx] * factor;
}
int main() { float *buf; cudaMalloc(&buf, 1024 * sizeof(float)); mul_by<<<4, 256>>>(buf, buf, 2.0f, 1024); return 0; }
`

// kernelA with one more statement: near, not equal.
const kernelAEdited = `#include <cuda_runtime.h>
__global__ void scale(float *out, const float *in, float k, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] * k;
}
int main() { float *d; cudaMalloc(&d, 1024 * sizeof(float)); scale<<<4, 256>>>(d, d, 2.0f, 1024); cudaDeviceSynchronize(); return 0; }
`

const kernelB = `#include <cuda_runtime.h>
__global__ void reduce_sum(const float *in, float *out, int n) {
    __shared__ float buf[256];
    int t = threadIdx.x;
    float acc = 0.0f;
    for (int i = blockIdx.x * blockDim.x + t; i < n; i += gridDim.x * blockDim.x) acc += in[i];
    buf[t] = acc;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) { if (t < s) buf[t] += buf[t + s]; __syncthreads(); }
    if (t == 0) atomicAdd(out, buf[0]);
}
`

func TestNormaliseIgnoresNamesAndComments(t *testing.T) {
	a, b := Normalise(kernelA), Normalise(kernelARenamed)
	if !slices.Equal(a, b) {
		t.Errorf("renamed kernel normalises differently:\n%v\n%v", a, b)
	}
	if slices.Contains(a, "scale") || !slices.Contains(a, "__global__") || !slices.Contains(a, "threadIdx") || !slices.Contains(a, "#") {
		t.Errorf("tokens %v: want keywords and built-ins kept, names replaced, directives kept", a)
	}
}

func TestIndexFindsPlantedNearDuplicates(t *testing.T) {
	p := DefaultParams()
	h, err := NewHasher(p)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := NewIndex(p)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(code string) Signature {
		s, err := h.Sign(Normalise(code))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	// Streaming: each document is checked against those kept before it.
	docs := []struct{ id, code, dupOf string }{
		{"a", kernelA, ""},
		{"b", kernelB, ""},
		{"a-renamed", kernelARenamed, "a"},
		{"a-edited", kernelAEdited, "a"},
	}
	for _, d := range docs {
		sig := sign(d.code)
		m := ix.Query(sig)
		switch {
		case d.dupOf == "" && len(m) > 0:
			t.Errorf("%s: distinct program matched %v", d.id, m)
		case d.dupOf != "" && (len(m) == 0 || m[0].ID != d.dupOf):
			t.Errorf("%s: matches %v, want %s", d.id, m, d.dupOf)
		}
		if len(m) == 0 {
			if err := ix.Add(d.id, sig); err != nil {
				t.Fatal(err)
			}
		}
	}
	if ix.Len() != 2 {
		t.Errorf("kept %d, want the 2 distinct programs", ix.Len())
	}
	if _, err := h.Sign(Normalise("// only a comment\n")); err != ErrEmpty {
		t.Errorf("empty document: %v", err)
	}
}

func TestNormaliseAsm(t *testing.T) {
	ptxA := "ld.global.f32 %f1, [%rd4]; // load\nmul.f32 %f2, %f1, 0f40000000;\nst.global.f32 [%rd5], %f2;\n@%p1 bra $L__BB0_2;"
	ptxB := "ld.global.f32 %f7, [%rd9];\nmul.f32 %f8, %f7, 0f40000000; # times two\nst.global.f32 [%rd2], %f8;\n@%p3 bra $L__BB0_9;"
	a, b := NormaliseAsm(ptxA), NormaliseAsm(ptxB)
	if !slices.Equal(a, b) {
		t.Errorf("register renaming changed the tokens:\n%v\n%v", a, b)
	}
	if !slices.Contains(a, "ld.global.f32") || !slices.Contains(a, "REG") || slices.Contains(a, "%f1") {
		t.Errorf("tokens %v", a)
	}
	sass := "IMAD R2, R3, c[0x0][0x0], R0 ;\nISETP.GE.AND P0, PT, R2, UR4, PT ;"
	if toks := NormaliseAsm(sass); !slices.Contains(toks, "IMAD") || !slices.Contains(toks, "ISETP.GE.AND") || slices.Contains(toks, "R2") {
		t.Errorf("sass tokens %v", toks)
	}
}

// BenchmarkSignAndQuery signs synthetic 60-line programs and streams them
// through the index: ns/op is one document.
func BenchmarkSignAndQuery(b *testing.B) {
	p := DefaultParams()
	h, _ := NewHasher(p)
	ix, _ := NewIndex(p)
	r := rand.New(rand.NewPCG(7, 8))
	docs := make([][]string, 1000)
	for i := range docs {
		var sb strings.Builder
		for l := range 60 {
			fmt.Fprintf(&sb, "x%d = y%d * %d + z[%d];\n", r.IntN(50), l, r.IntN(1000), r.IntN(64))
		}
		docs[i] = Normalise(sb.String())
	}
	b.ResetTimer()
	for i := range b.N {
		sig, err := h.Sign(docs[i%len(docs)])
		if err != nil {
			b.Fatal(err)
		}
		if len(ix.Query(sig)) == 0 {
			_ = ix.Add(fmt.Sprint(i), sig)
		}
	}
}
