package prompts

import (
	"embed"
	"fmt"
	"io/fs"
)

// builtin holds the embedded lane prompts and corpora. An embed.FS is
// read-only, so this is not mutable package state.
//
//go:embed lanes corpus
var builtin embed.FS

// Builtin returns the embedded tree (lanes/..., corpus/...) as a read-only
// file system.
func Builtin() fs.FS { return builtin }

// BuiltinCorpus returns the file system and root folder of the embedded
// starter corpus of lane, ready for [LoadCorpus].
func BuiltinCorpus(lane string) (fs.FS, string, error) {
	if _, err := laneSpecOf(lane); err != nil {
		return nil, "", err
	}
	root := "corpus/" + lane
	if _, err := fs.Stat(builtin, root); err != nil {
		return nil, "", fmt.Errorf("prompts: no builtin corpus for lane %q: %w", lane, err)
	}
	return builtin, root, nil
}

// LoadBuiltinCorpus loads the embedded starter corpus of lane.
func LoadBuiltinCorpus(lane string) ([]CorpusItem, error) {
	fsys, root, err := BuiltinCorpus(lane)
	if err != nil {
		return nil, err
	}
	return LoadCorpus(fsys, root, lane)
}
