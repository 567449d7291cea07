package apicheck

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// excluded lists the package directories and files (relative to the module
// root, slash-separated) that the checks skip for now. They are being edited
// elsewhere and will be brought in line afterwards; delete an entry once its
// package or file passes.
var excluded = map[string]bool{}

// wrapsPrefixed lists, by file, the error formats that need no prefix of
// their own: each starts with %w and wraps an error of the same package that
// already starts with the package's name, adding context after it (a
// prefix would say the name twice); package run's wrap the error that
// stopped the calling training package's run (its own, prefixed, or the
// context's). The test fails for an entry that no longer matches a call,
// so that the list stays short and true.
var wrapsPrefixed = map[string]map[string]string{
	"biochem/biochem.go": {
		"%w (row %d)": "Task.check's errors start with biochem:",
	},
	"run/failure.go": {
		"%w (and the checkpoint failed: %v)":     "the error that stopped a run of diffusion or seqtrain, which starts with that package's name, or train's cancelled context",
		"%w (checkpoint of %s %d written to %s)": "the error that stopped a run of diffusion or seqtrain, which starts with that package's name",
	},
	"metrics/metrics.go": {
		"%w: %v terminal states (limit %d states)": "ErrTooLarge starts with metrics:",
	},
}

// skippedDirs are directories (relative to the module root) whose packages
// are programs, not library API.
var skippedDirs = map[string]bool{
	"cmd":      true,
	"examples": true,
	"docs":     true,
}

func TestPublicSurface(t *testing.T) {
	root := moduleRoot(t)
	var findings []string
	files := 0
	wrapsUsed := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			name := d.Name()
			if path != root && (name == "testdata" || name == "vendor" ||
				strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") ||
				skippedDirs[rel] || excluded[rel]) {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir // another module
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || excluded[rel] {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if f.Name.Name == "main" {
			return nil
		}
		files++
		c := &checker{fset: fset, root: root, rel: rel, pkg: f.Name.Name, wrapsUsed: wrapsUsed}
		c.file(f)
		findings = append(findings, c.findings...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatalf("no library files found under %s", root)
	}
	for file, formats := range wrapsPrefixed {
		for format := range formats {
			if !wrapsUsed[file+"\x00"+format] {
				findings = append(findings, fmt.Sprintf("%s: wrapsPrefixed lists %q, which no errors call uses: remove it", file, format))
			}
		}
	}
	sort.Strings(findings)
	for _, f := range findings {
		t.Error(f)
	}
}

// moduleRoot is the nearest directory above the test's working directory
// that holds a go.mod.
func moduleRoot(t *testing.T) string {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

type checker struct {
	fset      *token.FileSet
	root      string
	rel       string // the file, relative to root, slash-separated
	pkg       string
	wrapsUsed map[string]bool
	findings  []string
}

func (c *checker) report(pos token.Pos, format string, args ...any) {
	p := c.fset.Position(pos)
	rel, err := filepath.Rel(c.root, p.Filename)
	if err != nil {
		rel = p.Filename
	}
	c.findings = append(c.findings, fmt.Sprintf("%s:%d: %s", filepath.ToSlash(rel), p.Line, fmt.Sprintf(format, args...)))
}

func (c *checker) file(f *ast.File) {
	c.docs(f)
	c.errorPrefixes(f)
	c.anonymousInterfaces(f)
}

// docs reports exported top-level identifiers without a doc comment.
func (c *checker) docs(f *ast.File) {
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv == nil {
				c.report(d.Name.Pos(), "undocumented exported function %s", d.Name.Name)
				continue
			}
			recv := receiverName(d.Recv.List[0].Type)
			if ast.IsExported(recv) {
				c.report(d.Name.Pos(), "undocumented exported method %s.%s", recv, d.Name.Name)
			}
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			grouped := d.Lparen.IsValid()
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
						c.report(s.Name.Pos(), "undocumented exported type %s", s.Name.Name)
					}
				case *ast.ValueSpec:
					if s.Doc != nil || (d.Doc != nil && (grouped || len(d.Specs) == 1)) {
						continue
					}
					for _, n := range s.Names {
						if n.IsExported() {
							c.report(n.Pos(), "undocumented exported %s %s", d.Tok, n.Name)
						}
					}
				}
			}
		}
	}
}

// receiverName is the base type name of a method receiver.
func receiverName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// errorPrefixes reports errors.New and fmt.Errorf calls whose literal
// message does not start with the package's name.
func (c *checker) errorPrefixes(f *ast.File) {
	errorsName, fmtName := importName(f, "errors"), importName(f, "fmt")
	prefix := c.pkg + ": "
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) == 0 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		var fn string
		switch {
		case errorsName != "" && x.Name == errorsName && sel.Sel.Name == "New":
			fn = "errors.New"
		case fmtName != "" && x.Name == fmtName && sel.Sel.Name == "Errorf":
			fn = "fmt.Errorf"
		default:
			return true
		}
		lit := leftmostLiteral(call.Args[0])
		if lit == nil {
			return true // not a literal: nothing to check here
		}
		s, err := strconv.Unquote(lit.Value)
		if err != nil {
			return true
		}
		if _, ok := wrapsPrefixed[c.rel][s]; ok && strings.HasPrefix(s, "%w") {
			c.wrapsUsed[c.rel+"\x00"+s] = true
			return true
		}
		if !strings.HasPrefix(s, prefix) {
			c.report(lit.Pos(), "%s message %q does not start with %q", fn, truncate(s), prefix)
		}
		return true
	})
}

// leftmostLiteral is the string literal an expression starts with: the
// expression itself or the first operand of a chain of + concatenations.
func leftmostLiteral(e ast.Expr) *ast.BasicLit {
	for {
		switch x := e.(type) {
		case *ast.BasicLit:
			if x.Kind == token.STRING {
				return x
			}
			return nil
		case *ast.BinaryExpr:
			if x.Op != token.ADD {
				return nil
			}
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return nil
		}
	}
}

func truncate(s string) string {
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// importName is the name under which f imports path, or "" if it does not.
func importName(f *ast.File, path string) string {
	for _, imp := range f.Imports {
		p, err := strconv.Unquote(imp.Path.Value)
		if err != nil || p != path {
			continue
		}
		if imp.Name != nil {
			if imp.Name.Name == "_" || imp.Name.Name == "." {
				return ""
			}
			return imp.Name.Name
		}
		return path[strings.LastIndex(path, "/")+1:]
	}
	return ""
}

// anonymousInterfaces reports interface type literals that are not the
// definition of a named type or a type-parameter constraint.
func (c *checker) anonymousInterfaces(f *ast.File) {
	allowed := map[*ast.InterfaceType]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.TypeSpec:
			if it, ok := x.Type.(*ast.InterfaceType); ok {
				allowed[it] = true
			}
			markConstraints(x.TypeParams, allowed)
		case *ast.FuncType:
			markConstraints(x.TypeParams, allowed)
		case *ast.InterfaceType:
			if !allowed[x] {
				if x.Methods == nil || len(x.Methods.List) == 0 {
					c.report(x.Pos(), "anonymous empty interface: write any")
				} else {
					c.report(x.Pos(), "anonymous interface type: name and document it")
				}
			}
		}
		return true
	})
}

// markConstraints allows interface literals used as type-parameter
// constraints.
func markConstraints(params *ast.FieldList, allowed map[*ast.InterfaceType]bool) {
	if params == nil {
		return
	}
	for _, p := range params.List {
		ast.Inspect(p.Type, func(n ast.Node) bool {
			if it, ok := n.(*ast.InterfaceType); ok {
				allowed[it] = true
			}
			return true
		})
	}
}

// TestCheckerFindings runs the checks on a file with one fault of each
// kind, and none in what the rules allow.
func TestCheckerFindings(t *testing.T) {
	const src = `package demo

import (
	"errors"
	"fmt"
)

// Documented is fine.
type Documented int

type Bare int

func (Bare) Method() {}

// Fine is documented.
func (d Documented) Fine() {}

func (d Documented) Undocumented() {}

func (d hidden) Exported() {}

type hidden int

// The group's doc covers its members.
const (
	A = 1
	B = 2
)

const (
	// C has its own doc.
	C = 3
	D = 4
)

var V = 1

// F is documented.
func F(x interface{ Len() int }, y interface{}) error {
	if _, ok := any(x).(interface{ Cap() int }); ok {
		return errors.New("no prefix")
	}
	if x == nil {
		return fmt.Errorf("demo: fine %d", 1)
	}
	return fmt.Errorf("%w (wrapped)", errors.New("demo: " + "fine"))
}

// Named is a named interface: fine.
type Named interface{ Len() int }

// G has a constraint: fine.
func G[T interface{ ~int | ~float64 }](t T) T { return t }
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "/m/demo/demo.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	c := &checker{fset: fset, root: "/m", rel: "demo/demo.go", pkg: "demo", wrapsUsed: map[string]bool{}}
	c.file(f)
	want := []string{
		"demo/demo.go:11: undocumented exported type Bare",
		"demo/demo.go:13: undocumented exported method Bare.Method",
		"demo/demo.go:18: undocumented exported method Documented.Undocumented",
		"demo/demo.go:33: undocumented exported const D",
		"demo/demo.go:36: undocumented exported var V",
		"demo/demo.go:39: anonymous interface type: name and document it",
		"demo/demo.go:39: anonymous empty interface: write any",
		"demo/demo.go:40: anonymous interface type: name and document it",
		`demo/demo.go:41: errors.New message "no prefix" does not start with "demo: "`,
		`demo/demo.go:46: fmt.Errorf message "%w (wrapped)" does not start with "demo: "`,
	}
	got := c.findings
	sort.Strings(got)
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("findings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
