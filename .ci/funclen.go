//go:build ignore

// Command funclen lists the functions of the repository's product code
// (Go files that are not tests, testdata and hidden folders left out)
// longer than -warn lines, longest first, and fails when one is longer than
// -max (issue 24: no function over 100 lines without named parts).
//
//	go run .ci/funclen.go [-warn 80] [-max 100] [root]
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type fn struct {
	name  string
	lines int
}

func main() {
	warn := flag.Int("warn", 80, "list the functions longer than this")
	limit := flag.Int("max", 100, "fail when a function is longer than this")
	flag.Parse()
	root := "."
	if flag.NArg() > 0 {
		root = flag.Arg(0)
	}
	fns, err := functions(root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "funclen:", err)
		os.Exit(2)
	}
	sort.Slice(fns, func(i, j int) bool {
		return fns[i].lines > fns[j].lines || (fns[i].lines == fns[j].lines && fns[i].name < fns[j].name)
	})
	over := 0
	for _, f := range fns {
		if f.lines > *warn {
			fmt.Printf("%4d %s\n", f.lines, f.name)
		}
		if f.lines > *limit {
			over++
		}
	}
	fmt.Printf("funclen: %d functions, %d over %d lines, %d over %d\n", len(fns), countOver(fns, *warn), *warn, over, *limit)
	if over > 0 {
		os.Exit(1)
	}
}

func countOver(fns []fn, n int) int {
	c := 0
	for _, f := range fns {
		if f.lines > n {
			c++
		}
	}
	return c
}

// functions parses every product Go file under root and returns its
// functions and methods with their length in lines.
func functions(root string) ([]fn, error) {
	var out []fn
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Body != nil {
				n := fset.Position(fd.End()).Line - fset.Position(fd.Pos()).Line + 1
				out = append(out, fn{name: p + ":" + funcName(fd), lines: n})
			}
		}
		return nil
	})
	return out, err
}

// funcName is fd's name, with its receiver's type for a method.
func funcName(fd *ast.FuncDecl) string {
	if fd.Recv == nil || len(fd.Recv.List) == 0 {
		return fd.Name.Name
	}
	t := fd.Recv.List[0].Type
	if s, ok := t.(*ast.StarExpr); ok {
		t = s.X
	}
	if ix, ok := t.(*ast.IndexExpr); ok {
		t = ix.X
	}
	if id, ok := t.(*ast.Ident); ok {
		return id.Name + "." + fd.Name.Name
	}
	return fd.Name.Name
}
