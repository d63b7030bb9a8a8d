// Package persona is the persona template library of the cuda-synth lane:
// the natural-language task templates of CASS appendix A.8 (ten categories
// of five templates), the placeholder pools they are filled from (Table 5
// and the further placeholders the templates use), the lane's system
// prompt, and the keyword table of appendix A.4 that labels a CUDA source
// with a domain.
//
// Everything is data, embedded with embed.FS (see [Builtin]); a user folder
// with the same layout can replace or extend it ([Load], [Overlay]):
//
//	templates/<category>/<name>.txt                 one template; the category is the folder name
//	templates/<category>/<name>.pools/<ph>.txt      optional pools local to that template
//	pools/<ph>.txt                                  the pool of placeholder {ph}, one value a line
//	system.txt                                      the lane's system prompt
//	domains.json                                    domain keywords for [Classifier]
//
// A template is plain text in which {name} (a lower-case identifier) marks
// a placeholder. [Library.Sample] instantiates templates reproducibly from
// a seed, balanced across categories, never giving the same prompt twice.
//
// The package imports only the standard library and holds no mutable
// package state.
package persona
