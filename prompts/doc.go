// Package prompts is kiln's template machinery as data: prompt libraries
// (system, user and repair templates per lane, text/template), a loader
// for corpora of input items with per-item meta.json, persona templates
// and placeholder pools (prompts/persona), and a deterministic, weighted
// sampler over corpus items.
//
// The lanes' own prompts and starter corpora live in their kits
// (tools/<lane>), embedded there; a lane passes its CorpusSpec to
// [LoadCorpus] and its template folder to [NewLaneLibrary]. A corpus
// folder (embedded or a user's, through os.DirFS) looks like:
//
//	<id>/meta.json        {"function", "categories", "description"}
//	<id>/function.c       the C translation unit under test (c2x86)
//	<id>/driver.c         main() printing results for test inputs (c2x86)
//
// The package imports only the standard library and holds no mutable
// package state: a [Library] is built by the caller and corpora are
// loaded on demand.
package prompts
