package main

import (
	"fmt"
	"sort"
	"strings"

	"credo/engine"
)

// placements maps a partition to the database that holds it, overriding --database for it
// (--partition-database, repeatable; CREDO_PARTITION_DATABASES). It is a flag.Value.
type placements map[string]string

// Set adds one `PARTITION=DATABASE` placement. A partition placed twice is an error: the second
// would silently win.
func (p placements) Set(v string) error {
	slug, url, ok := strings.Cut(strings.TrimSpace(v), "=")
	slug, url = strings.TrimSpace(slug), strings.TrimSpace(url)
	switch {
	case !ok || slug == "" || url == "":
		return fmt.Errorf("%q is not PARTITION=DATABASE, e.g. e02=postgres://host/db", hidePassword(v))
	case !engine.ValidPartition(slug):
		return fmt.Errorf("partition %q must be lower-case letters and digits, starting with a letter", slug)
	case !strings.HasPrefix(url, "sqlite:") && !strings.HasPrefix(url, "postgres://") && !strings.HasPrefix(url, "postgresql://"):
		return fmt.Errorf("partition %s: the database must start with sqlite: or postgres://", slug)
	}
	if _, dup := p[slug]; dup {
		return fmt.Errorf("partition %s is placed twice", slug)
	}
	p[slug] = url
	return nil
}

// String lists the placements, passwords hidden, in partition order.
func (p placements) String() string {
	out := make([]string, 0, len(p))
	for slug, url := range p {
		out = append(out, slug+"="+engine.Redact(url))
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// parsePlacements reads CREDO_PARTITION_DATABASES: placements separated by commas or white
// space. A comma inside a URL (a PostgreSQL URL may list several hosts, host1,host2) stays in
// it: a new placement starts only where a piece begins with PARTITION=.
func parsePlacements(env string) (placements, error) {
	p := placements{}
	var items []string
	for _, piece := range strings.FieldsFunc(env, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		slug, _, ok := strings.Cut(piece, "=")
		if ok && engine.ValidPartition(slug) || len(items) == 0 {
			items = append(items, piece)
			continue
		}
		items[len(items)-1] += "," + piece
	}
	for _, item := range items {
		if err := p.Set(item); err != nil {
			return nil, fmt.Errorf("CREDO_PARTITION_DATABASES: %w", err)
		}
	}
	return p, nil
}

// placementFlag is --partition-database: repeatable, and when given at all, the flags replace
// CREDO_PARTITION_DATABASES as a whole (as any flag replaces its environment twin).
type placementFlag struct {
	p   *placements
	set bool
}

func (f *placementFlag) String() string {
	if f.p == nil {
		return ""
	}
	return f.p.String()
}

func (f *placementFlag) Set(v string) error {
	if !f.set {
		*f.p, f.set = placements{}, true
	}
	return f.p.Set(v)
}

// placed returns the placements of the partitions the command opens. A placement must name a
// partition the configuration knows — one of --partitions (CREDO_PARTITIONS) or the command's
// own --partition — so that a mistyped name is a usage error rather than a partition quietly
// opened on --database; those of other configured partitions are left out, so that one
// CREDO_PARTITION_DATABASES serves every command.
func (c *config) placed() (map[string]string, error) {
	known := map[string]bool{}
	for _, p := range c.configured {
		known[p] = true
	}
	opened := map[string]bool{}
	for _, p := range c.Partitions {
		known[p], opened[p] = true, true
	}
	out := map[string]string{}
	var unknown []string
	for p, url := range c.Placed {
		switch {
		case opened[p]:
			out[p] = url
		case !known[p]:
			unknown = append(unknown, p)
		}
	}
	if len(unknown) > 0 {
		names := make([]string, 0, len(known))
		for p := range known {
			names = append(names, p)
		}
		sort.Strings(unknown)
		sort.Strings(names)
		return nil, usageErrorf("--partition-database places %s, not among the partitions (%s)",
			strings.Join(unknown, ", "), strings.Join(names, ", "))
	}
	sqlite := strings.HasPrefix(c.Database, "sqlite:")
	for p, url := range out {
		if strings.HasPrefix(url, "sqlite:") != sqlite {
			return nil, usageErrorf("--partition-database %s=%s: partitions cannot be on SQLite and PostgreSQL at once (--database is %s)",
				p, engine.Redact(url), engine.Redact(c.Database))
		}
	}
	return out, nil
}
