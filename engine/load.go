package engine

import (
	"bytes"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Registry is the immutable set of compiled resources, shared by every partition.
type Registry struct {
	resources []*Resource
	byName    map[string]*Resource
	byPath    map[string]*Resource
	// columns are the stored columns the resources need, as "table.column" (see
	// requiredColumns), for Store.Ready.
	columns []string
}

// Resources returns every resource in load order (sorted by file name).
func (g *Registry) Resources() []*Resource { return g.resources }

// Public returns the resources the API routes, sorted by path.
func (g *Registry) Public() []*Resource {
	var out []*Resource
	for _, r := range g.resources {
		if !r.Internal() {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// ByName returns the resource with this record name (as `credo load --resource` takes it);
// the API path and the table name are accepted too.
func (g *Registry) ByName(name string) (*Resource, bool) {
	if r, ok := g.byName[name]; ok {
		return r, true
	}
	if r, ok := g.byPath[name]; ok {
		return r, true
	}
	for _, r := range g.resources {
		if r.Table == name {
			return r, true
		}
	}
	return nil, false
}

// MustByName is ByName for the tools and tests whose descriptors are fixed (seed, the bench
// harness); it panics when missing. A module resolves what it uses with ByName once at
// start-up, and a missing descriptor is its error (route.Route.Needs).
func (g *Registry) MustByName(name string) *Resource {
	r, ok := g.ByName(name)
	if !ok {
		panic("engine: no resource " + name)
	}
	return r
}

// Load reads every *.yaml file below each root of each file system, strictly, and compiles
// them into a Registry. Any problem stops loading with an error naming the file and line.
func Load(fsys ...fs.FS) (*Registry, error) {
	type source struct {
		file string
		data []byte
	}
	var sources []source
	for _, f := range fsys {
		err := fs.WalkDir(f, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() || path.Ext(p) != ".yaml" {
				return nil
			}
			data, err := fs.ReadFile(f, p)
			if err != nil {
				return err
			}
			sources = append(sources, source{file: p, data: data})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("engine: read descriptors: %w", err)
		}
	}
	sort.SliceStable(sources, func(i, j int) bool { return sources[i].file < sources[j].file })

	var docs []*parsed
	for _, s := range sources {
		p, err := parse(s.file, s.data)
		if err != nil {
			return nil, err
		}
		docs = append(docs, p)
	}
	return compile(docs)
}

// parsed is a strictly decoded descriptor with its YAML tree, kept to report line numbers.
type parsed struct {
	file string
	d    Descriptor
	root *yaml.Node
}

func parse(file string, data []byte) (*parsed, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	p := &parsed{file: file}
	if err := dec.Decode(&p.d); err != nil {
		if m := yamlLineRe.FindStringSubmatch(err.Error()); m != nil {
			return nil, fmt.Errorf("descriptor %s:%s: %s", file, m[1], m[2])
		}
		return nil, fmt.Errorf("descriptor %s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fmt.Errorf("descriptor %s: %w", file, err)
	}
	p.root = &root
	return p, nil
}

// errAt reports a problem at the first line where the scalar value appears (the key otherwise).
func (p *parsed) errAt(value, format string, args ...any) error {
	line := findLine(p.root, value)
	msg := fmt.Sprintf(format, args...)
	if line > 0 {
		return fmt.Errorf("descriptor %s:%d: %s", p.file, line, msg)
	}
	return fmt.Errorf("descriptor %s: %s", p.file, msg)
}

// errIn reports a problem at the line of the node that path leads to from the document: a
// string is a mapping's key, an int a sequence's position (scope, 1, any, 0: the second scope
// entry's first entry of any). It names the file alone when there is no such node.
func (p *parsed) errIn(path []any, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if n := nodeAt(p.root, path); n != nil {
		return fmt.Errorf("descriptor %s:%d: %s", p.file, n.Line, msg)
	}
	return fmt.Errorf("descriptor %s: %s", p.file, msg)
}

func nodeAt(n *yaml.Node, path []any) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode && len(n.Content) == 1 {
		n = n.Content[0]
	}
	for _, step := range path {
		if n == nil {
			return nil
		}
		var next *yaml.Node
		switch step := step.(type) {
		case string:
			for i := 0; n.Kind == yaml.MappingNode && i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == step {
					next = n.Content[i+1]
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && step < len(n.Content) {
				next = n.Content[step]
			}
		}
		n = next
	}
	return n
}

func findLine(n *yaml.Node, value string) int {
	if n == nil || value == "" {
		return 0
	}
	if n.Kind == yaml.ScalarNode && n.Value == value {
		return n.Line
	}
	for _, c := range n.Content {
		if l := findLine(c, value); l > 0 {
			return l
		}
	}
	return 0
}

var (
	// yamlLineRe picks the first "line N: message" of a yaml.v3 error.
	yamlLineRe = regexp.MustCompile(`line (\d+): ([^\n]*)`)
	identRe    = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
	nameRe     = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	pathRe     = regexp.MustCompile(`^[a-z]+(/[a-z][a-z-]*)+$`)
	hookNameRe = regexp.MustCompile(`^[a-z][a-z0-9]*(-[a-z0-9]+)*$`)
)
