// Package prompts is kiln's template library as data: the lane prompts
// (system, user and repair templates per lane) and the starter corpora of
// input items, embedded in the binary with embed.FS, plus a deterministic,
// weighted sampler over corpus items.
//
// Layout of the embedded tree (a user folder with the same layout can be
// used instead, through os.DirFS):
//
//	lanes/<lane>/<prompt>.tmpl          text/template sources (system, user, repair)
//	corpus/<lane>/<id>/meta.json        {"function", "categories", "description"}
//	corpus/<lane>/<id>/function.c       the C translation unit under test (c2x86)
//	corpus/<lane>/<id>/driver.c         main() printing results for test inputs (c2x86)
//
// The package imports only the standard library and holds no mutable
// package state: a [Library] is built by the caller ([BuiltinLibrary] or
// [NewLibrary]) and corpora are loaded on demand ([LoadCorpus]).
package prompts
