package engine

import (
	"context"
	"fmt"
	"strings"
)

// OpenPlaced opens the partitions like Open, with the default Limits (see Limits.OpenPlaced).
func OpenPlaced(ctx context.Context, url string, placed map[string]string, partitions []string, reg *Registry) (*Database, error) {
	return Limits{}.OpenPlaced(ctx, url, placed, partitions, reg)
}

// OpenPlaced opens the partitions like Limits.Open, each on the database that placed names for it
// and the others on url: one Database (its own pool, its own migrations) per distinct
// database, combined into one. A partition of placed that is not among partitions is an
// error, and so is a mix of SQLite and PostgreSQL. Every database must answer: start-up
// migrates each partition where it lives.
func (l Limits) OpenPlaced(ctx context.Context, url string, placed map[string]string, partitions []string, reg *Registry) (*Database, error) {
	configured := map[string]bool{}
	for _, p := range partitions {
		configured[p] = true
	}
	for p := range placed {
		if !configured[p] {
			return nil, fmt.Errorf("engine: partition %s is placed on a database but not configured", p)
		}
	}
	var urls []string
	groups := map[string][]string{}
	kinds := map[bool]bool{} // PostgreSQL or not
	for _, p := range partitions {
		u := url
		if v, ok := placed[p]; ok {
			u = v
		}
		if _, seen := groups[u]; !seen {
			urls = append(urls, u)
			kinds[!strings.HasPrefix(u, "sqlite:")] = true
		}
		groups[u] = append(groups[u], p)
	}
	if len(kinds) > 1 {
		return nil, fmt.Errorf("engine: partitions are placed on SQLite and PostgreSQL at once; use one kind of database")
	}
	if len(urls) == 1 {
		return l.Open(ctx, urls[0], partitions, reg)
	}
	d := &Database{stores: map[string]*Store{}, order: partitions}
	for _, u := range urls {
		sub, err := l.Open(ctx, u, groups[u], reg)
		if err != nil {
			d.Close()
			return nil, fmt.Errorf("engine: partitions %s: %w", strings.Join(groups[u], ", "), err)
		}
		if d.Dialect == "" {
			d.Dialect, d.limits = sub.Dialect, sub.limits
		}
		d.subs = append(d.subs, sub)
		d.closers = append(d.closers, sub.Close)
		for p, s := range sub.stores {
			d.stores[p] = s
		}
	}
	return d, nil
}
