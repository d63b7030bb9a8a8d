package persona

import (
	"errors"
	"slices"
	"testing"
	"testing/fstest"
)

func TestWords(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"computeGradient(d_weights)": {"compute", "gradient", "d", "weights"},
		"SHA256_Transform":           {"sha", "256", "transform"},
		"parseHTTPRequest2":          {"parse", "http", "request", "2"},
		"k-means  KMeans kmeans":     {"k", "means", "k", "means", "kmeans"},
		"__shared__ float4 tile[32]": {"shared", "float", "4", "tile", "32"},
		"":                           nil,
	}
	for in, want := range cases {
		if got := words(in); !slices.Equal(got, want) {
			t.Errorf("words(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestClassifyBuiltin(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, src, want string }{
		{"machine learning", `
__global__ void dense_relu_forward(const float* weights, const float* bias, float* activations, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) activations[i] = fmaxf(0.f, weights[i] + bias[i]);
}
__global__ void sgd_step(float* w, const float* gradient, float learning_rate, int n) { /* backprop update */ }`,
			"machine learning"},
		{"cryptography", `
__device__ uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
__global__ void sha256_hash_kernel(const uint8_t* msg, uint32_t* digest) { /* SHA-256 compression, nonce search */ }
// encrypt the block with the round keys (AES)`,
			"cryptography"},
		{"simulation", `
__global__ void integrate(float3* pos, float3* velocity, const float3* force, float dt, int nParticles) {
    // leapfrog step for every particle under gravity
}`,
			"simulation"},
		{"graphics", `
__global__ void toGrayscale(const uchar4* rgba, unsigned char* gray, int width, int height) {
    // luminance of every pixel of the image
}`,
			"graphics"},
		{"data structure", `
struct Node { int key; int next; };
__global__ void insert_hash_table(int* buckets, Node* nodes, const int* keys, int n) {
    // cuckoo insertion into the hash table; linear probing fallback on the bucket array
}`,
			"data structure"},
		{"scientific computing", `
// Jacobi solver for the 2D Poisson equation (finite difference stencil)
__global__ void jacobi_step(const double* u, double* unew, const double* f, int n) { /* residual */ }`,
			"scientific computing"},
		{"general compute by keyword", `
__global__ void block_reduce(const float* in, float* out, int n) { /* tree-free reduction then prefix sum scan */ }`,
			"general compute"},
		{"no keyword: default", `__global__ void k(int* a) { a[threadIdx.x] += 1; }`, "general compute"},
		{"empty", "", "general compute"},
	}
	c, err := BuiltinClassifier()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := Classify(tc.src); got != tc.want {
				t.Errorf("Classify = %q, want %q (scores %v)", got, tc.want, c.Scores(tc.src))
			}
		})
	}
	if want := []string{"general compute", "simulation", "data structure", "machine learning", "graphics", "cryptography", "scientific computing"}; !slices.Equal(c.Domains(), want) {
		t.Errorf("domains = %v, want the seven of appendix A.4 %v", c.Domains(), want)
	}
}

func TestClassifierRules(t *testing.T) {
	t.Parallel()
	c, err := LoadClassifier(fstest.MapFS{"domains.json": {Data: []byte(`{
		"default": "other",
		"domains": [
			{"name": "a", "keywords": ["alpha", "beta*"]},
			{"name": "b", "keywords": ["gamma ray", "alpha"]}
		]}`)}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ src, want string }{
		{"nothing here", "other"},
		{"alpha", "a"},                         // tie 1:1, first listed wins
		{"gammaRay alpha", "b"},                // b: 2, a: 1
		{"gamma rays", "other"},                // "ray" must match whole
		{"betamax betas alphabet", "a"},        // beta* is a prefix, alpha is not
		{"gamma_ray gamma ray GAMMA-RAY", "b"}, // separators and case do not matter
	}
	for _, tc := range tests {
		if got := c.Classify(tc.src); got != tc.want {
			t.Errorf("Classify(%q) = %q, want %q (scores %v)", tc.src, got, tc.want, c.Scores(tc.src))
		}
	}
	if s := c.Scores("betamax betas alphabet"); s["a"] != 2 || s["b"] != 0 {
		t.Errorf("scores = %v", s)
	}
}

func TestClassifierErrors(t *testing.T) {
	t.Parallel()
	bad := []string{
		`not json`,
		`{"default": "", "domains": [{"name": "a", "keywords": ["x"]}]}`,
		`{"default": "d", "domains": []}`,
		`{"default": "d", "domains": [{"name": "a", "keywords": []}]}`,
		`{"default": "d", "domains": [{"name": "a", "keywords": ["x"]}, {"name": "a", "keywords": ["y"]}]}`,
		`{"default": "d", "domains": [{"name": "a", "keywords": ["x", "X"]}]}`,
		`{"default": "d", "domains": [{"name": "a", "keywords": ["a*b"]}]}`,
		`{"default": "d", "domains": [{"name": "a", "keywords": ["--"]}]}`,
		`{"default": "d", "domain": []}`,
	}
	for _, s := range bad {
		_, err := LoadClassifier(fstest.MapFS{"domains.json": {Data: []byte(s)}})
		var fe *FileError
		if !errors.Is(err, ErrBadDomains) || !errors.As(err, &fe) || fe.Path != "domains.json" {
			t.Errorf("%s: err = %v, want ErrBadDomains naming domains.json", s, err)
		}
	}
	if _, err := LoadClassifier(fstest.MapFS{}); err == nil {
		t.Error("missing domains.json: no error")
	}
}
