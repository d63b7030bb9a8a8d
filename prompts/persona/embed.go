package persona

import (
	"embed"
	"fmt"
	"io/fs"
)

// builtin holds the embedded library. An embed.FS is read-only, so this is
// not mutable package state.
//
//go:embed data
var builtin embed.FS

// Builtin returns the embedded library tree (templates/, pools/,
// system.txt, domains.json) as a read-only file system rooted at the
// library root, ready for [Load] or as the base of an [Overlay].
func Builtin() fs.FS {
	sub, err := fs.Sub(builtin, "data")
	if err != nil { // only on an invalid literal path
		panic(fmt.Sprintf("persona: builtin: %v", err))
	}
	return sub
}

// LoadBuiltin loads the embedded library.
func LoadBuiltin() (*Library, error) { return Load(Builtin()) }

// LoadWithUser loads the embedded library with a user folder laid over it
// (see [Overlay]): the user's files add to the builtin ones, and a user
// file with the same path as a builtin one replaces it.
func LoadWithUser(user fs.FS) (*Library, error) { return Load(Overlay(Builtin(), user)) }
