package torch2cuda

import (
	"regexp"
	"strings"

	"github.com/kiln-dev/kiln/refinement"
)

// The lane's construct features: what a problem's reference (reference.py)
// asks of a kernel beyond its family. Reports break pass rates down by
// them, and a refinement round may target one (refinement.categories):
// the synthesiser's briefs then draw the operators of every family that
// show it (featureOps).
var problemFeatures = []struct {
	name, pattern, ops, doc string
}{
	{"conv_transpose", `ConvTranspose[123]d|conv_transpose[123]d`, `(?i)transpose`,
		"transposed convolutions (nn.ConvTranspose1d/2d/3d)"},
	{"volumetric", `(?:Conv|ConvTranspose|MaxPool|AvgPool|BatchNorm|InstanceNorm)3d|conv3d|max_pool3d|avg_pool3d`, `3d|5-D`,
		"3-D (volumetric) convolutions, pooling or norms over 5-D tensors"},
	{"grouped_conv", `\bgroups\s*=`, `(?i)grouped|depthwise`,
		"grouped or depthwise convolutions (groups=)"},
	{"normalization", `(?:Layer|Batch|Group|Instance|RMS)Norm\w*\s*\(|\b(?:layer|batch|group|instance)_norm\s*\(|F\.normalize\s*\(`, `(?i)norm`,
		"normalisation layers (layer, batch, group, instance, RMS, L2)"},
	{"softmax", `\b(?:log_)?softmax\b|Softmax\s*\(`, `(?i)softmax|attention`,
		"softmax or log-softmax (a row reduction and a rescale)"},
	{"reduction", `\.(?:sum|mean|amax|amin|prod|logsumexp|var|std|argmax|argmin|cumsum|cumprod|norm)\s*\(|torch\.(?:sum|mean|amax|amin|max|min|prod|logsumexp|var|std|argmax|argmin|cumsum|cumprod)\s*\(`,
		`(?i)reduction|sum|mean|max|min|argm|prod|logsumexp|var|global average`,
		"reductions over a dimension (sum, mean, max, argmin, cumsum, logsumexp, ...)"},
	{"gemm", `\bmatmul\s*\(|\bbmm\s*\(|\beinsum\s*\(|nn\.Linear\s*\(|F\.linear\s*\(|\baddmm\s*\(|[\w)\]]\s*@\s*[\w(]`, `(?i)matmul|gemm|linear|einsum|@|matrix`,
		"matrix products (matmul, bmm, nn.Linear, einsum, @)"},
	{"non_contiguous", `\.(?:transpose|permute|t)\s*\(|channels_last|\[[^\]]*::\s*\d`, `(?i)transposed operand|permute|channels-last|strided`,
		"non-contiguous operands: transposes, permutes, strided slices, channels-last"},
	{"reduced_precision", `float16|bfloat16|\.half\s*\(\)|\.bfloat16\s*\(\)`, ``,
		"half or bfloat16 tensors"},
	{"integer_inputs", `\brandint\s*\(|long\s*\(\)|int64`, `(?i)int64|index`,
		"integer inputs (class targets, indices)"},
	{"recurrent", `\b(?:LSTM|GRU|RNN)\s*\(`, `(?i)GRU|LSTM|recurrent`,
		"recurrent layers (LSTM, GRU)"},
}

// featureTable is the lane's refinement.FeatureTable over reference.py.
func featureTable() *refinement.FeatureTable {
	ft := &refinement.FeatureTable{Files: func(n string) bool { return n == ReferenceFile }, Prepare: pythonCode}
	for _, f := range problemFeatures {
		ft.Rules = append(ft.Rules, refinement.FeatureRule{Name: f.name, Pattern: f.pattern, Doc: f.doc})
	}
	return ft
}

// featureOps returns the operators of every family whose brief text
// matches feature's operator pattern (nil for no feature, or none).
func (p synthPools) featureOps(feature string) (ops, fams []string) {
	for _, f := range problemFeatures {
		if f.name != feature || f.ops == "" {
			continue
		}
		re := regexp.MustCompile(f.ops)
		for _, fam := range Families {
			for _, op := range p.Operators[fam] {
				if re.MatchString(op) {
					ops, fams = append(ops, op), append(fams, fam)
				}
			}
		}
	}
	return ops, fams
}

// pythonCode prepares a Python source for the C-family lexer: comments
// dropped, string literals emptied (their quotes kept), and the floor
// division // spaced (/ /), which the lexer would take for a comment.
func pythonCode(_ string, src string) string {
	var b strings.Builder
	for i := 0; i < len(src); {
		switch c := src[i]; {
		case c == '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'':
			i = skipPyString(src, i)
			b.WriteString(`""`)
		case c == '/' && i+1 < len(src) && (src[i+1] == '/' || src[i+1] == '*'):
			b.WriteString("/ ")
			i++
		default:
			b.WriteByte(c)
			i++
		}
	}
	return b.String()
}
