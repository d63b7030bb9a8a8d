package sass2rdna

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/kiln-dev/kiln/tools/kit"
)

// AnswersFile is the script model's answers for the builtin set: one
// JSONL rule per program, {"match": "\(task <id>\)", "response": "...
// ```asm ...```"}, the response being hipcc's gfx1100 assembly of the
// program's HIP translation passed through LegaliseMad64.
const AnswersFile = "corpus/answers.jsonl"

// answerRule is one line of AnswersFile.
type answerRule struct {
	Match    string `json:"match"`
	Response string `json:"response"`
}

var taskMatchRE = regexp.MustCompile(`^\\\(task (\S+)\\\)$`)

// BuiltinAnswer returns the script answer's assembly for a builtin
// program (the right answer the lane's tests use).
func BuiltinAnswer(id string) (string, error) {
	b, err := laneFS.ReadFile(AnswersFile)
	if err != nil {
		return "", err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var r answerRule
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return "", fmt.Errorf("%s: %w", AnswersFile, err)
		}
		if m := taskMatchRE.FindStringSubmatch(r.Match); m != nil && m[1] == id {
			a, ok := Extract(r.Response)
			if !ok {
				return "", fmt.Errorf("%s: the answer of %s has no asm block", AnswersFile, id)
			}
			return a, nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("%s: %w", AnswersFile, err)
	}
	return "", fmt.Errorf("%s: no answer for %s", AnswersFile, id)
}

// exampleID is the worked example's program: two small kernels whose
// hipcc assembly llvm-mc accepts as printed.
const exampleID = "sci_05_jacobi_poisson_streams"

// WithoutDescriptor removes the first kernel's .amdhsa_kernel block from
// assembly (a wrong answer: the kernel has no descriptor).
func WithoutDescriptor(asm string) (string, error) {
	start := strings.Index(asm, ".amdhsa_kernel ")
	if start < 0 {
		return "", fmt.Errorf("no .amdhsa_kernel block")
	}
	start = strings.LastIndex(asm[:start], "\n") + 1
	end := strings.Index(asm[start:], ".end_amdhsa_kernel")
	if end < 0 {
		return "", fmt.Errorf("an unterminated .amdhsa_kernel block")
	}
	end += start + len(".end_amdhsa_kernel")
	return asm[:start] + strings.TrimLeft(asm[end:], "\n"), nil
}

// example is the lane's worked example: sci_05_jacobi_poisson_streams
// answered with hipcc's assembly (right: every CPU stage passes, the AMD
// run is pending), the same without its first kernel descriptor (wrong:
// descriptor_error), and a kernel written as .long machine words (a
// cheat); and a synthesised task.
func example() (kit.Example, error) {
	right, err := BuiltinAnswer(exampleID)
	if err != nil {
		return kit.Example{}, err
	}
	wrong, err := WithoutDescriptor(right)
	if err != nil {
		return kit.Example{}, fmt.Errorf("sass2rdna example: %w", err)
	}
	cheat := ".amdgcn_target \"" + Target + "\"\n\t.text\n\t.globl\t_Z6jacobiPKfPfi\n\t.p2align\t8\n_Z6jacobiPKfPfi:\n" +
		"\t.long 0x7e000280, 0xbfb00000\n"
	synth := "Kernels with shared-memory tiles and barriers are translated wrong.\n\n### TASK 1\ncategory: shared_memory\n" +
		"description: block sums through a shared tile\n```cuda program.cu\n" + exampleSynthProgram + "```\n"
	return kit.Example{
		Tasks:   kit.Tasks{Corpus: SetBuiltin, Categories: []string{"scientific_computing"}, Seed: 1, SamplesPerTask: 1},
		TaskKey: "r0/" + exampleID + "#0",
		Right:   "```asm\n" + right + "```", Wrong: "```asm\n" + wrong + "```", WrongClass: ClassDescriptor,
		Cheat: "```asm\n" + cheat + "```", Synth: synth, SynthCategory: "shared_memory",
	}, nil
}

// exampleSynthProgram is the example synthesiser's program.
const exampleSynthProgram = `#include <cstdio>
#include <cuda_runtime.h>

__global__ void blockSums(const float *in, float *out, int n)
{
    __shared__ float tile[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = i < n ? in[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            tile[threadIdx.x] += tile[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        out[blockIdx.x] = tile[0];
}

int main()
{
    const int n = 4096, blocks = n / 256;
    float h[n], sums[blocks];
    for (int i = 0; i < n; i++)
        h[i] = (float)(i % 7) * 0.5f;
    float *d_in, *d_out;
    if (cudaMalloc(&d_in, sizeof(h)) != cudaSuccess || cudaMalloc(&d_out, sizeof(sums)) != cudaSuccess)
        return 1;
    cudaMemcpy(d_in, h, sizeof(h), cudaMemcpyHostToDevice);
    blockSums<<<blocks, 256>>>(d_in, d_out, n);
    if (cudaMemcpy(sums, d_out, sizeof(sums), cudaMemcpyDeviceToHost) != cudaSuccess)
        return 1;
    double total = 0;
    for (int b = 0; b < blocks; b++)
        total += sums[b];
    printf("first %.2f last %.2f total %.2f\n", sums[0], sums[blocks - 1], total);
    cudaFree(d_in);
    cudaFree(d_out);
    return 0;
}
`
