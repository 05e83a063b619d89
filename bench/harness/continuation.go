package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"credo/bench/load"
)

// W6 compares reading page 4,000 of the comments (Take=20, the default sort: rows 79,981 to
// 80,000 of 100,000) by its continuation token with reading page 1, and with reading the same
// page by Page= (OFFSET 79,980). Issue 16 wants the continued page within 1.2× of page 1.
// Only credo serves it: the reference server has no continuation tokens.
const (
	w6Page = 4000
	w6Take = 20
	// w6Max is issue 16's bound on the continued page: its p50 and its throughput within this
	// factor of page 1's.
	w6Max = 1.2
)

// w6Cases are W6's three requests, measured in alternating rounds.
var w6Cases = []string{"W6 page 1", fmt.Sprintf("W6 Page=%d", w6Page), fmt.Sprintf("W6 Continue (page %d)", w6Page)}

// w6Result is one W6 request measured on credo.
type w6Result struct {
	Case string
	Res  load.Result
}

// w6Token returns the Continuation that page w6Page-1 of the comments carries: the token of
// page w6Page.
func w6Token(t target, p string) (string, error) {
	req, err := http.NewRequest("GET", fmt.Sprintf("http://%s%s?Take=%d&Page=%d", t.addr, commentsPath(p), w6Take, w6Page-1), nil)
	if err != nil {
		return "", err
	}
	for _, h := range t.header {
		name, value, _ := strings.Cut(h, ":")
		req.Header.Set(name, strings.TrimSpace(value))
	}
	c := &http.Client{Timeout: time.Minute}
	res, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, res.Body)
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("W6: page %d answered %d", w6Page-1, res.StatusCode)
	}
	var pg struct{ Continuation string }
	if err := json.Unmarshal([]byte(res.Header.Get("X-Query-Pagination")), &pg); err != nil || pg.Continuation == "" {
		return "", fmt.Errorf("W6: page %d has no Continuation: %q", w6Page-1, res.Header.Get("X-Query-Pagination"))
	}
	return pg.Continuation, nil
}

// w6Case builds one of W6's requests against t.
func w6Case(i int, t target, p, token string, cfg *config) load.Case {
	target := fmt.Sprintf("%s?Take=%d", commentsPath(p), w6Take)
	switch i {
	case 1:
		target += fmt.Sprintf("&Page=%d", w6Page)
	case 2:
		target += "&Continue=" + token
	}
	return load.Case{Name: w6Cases[i], Addr: t.addr, Conns: cfg.conns, Warmup: cfg.warmup, Duration: cfg.duration, Want: http.StatusOK,
		Next: func(*rand.Rand) load.Request { return load.Request{Method: "GET", Target: target, Header: t.header} }}
}

// writeW6 renders W6: each request's throughput and latency, and the continued page against
// page 1 (the target) and against Page=.
func writeW6(w io.Writer, rs []w6Result) {
	if len(rs) != len(w6Cases) {
		return
	}
	fmt.Fprintf(w, "\nW6, page %d of 100,000 comments (Take=%d) by continuation token, by Page= and page 1 (credo only; every answer also counts the 100,000 rows for TotalCount):\n\n", w6Page, w6Take)
	fmt.Fprintf(w, "| request | req/s | p50 ms | p99 ms | p50 / page 1 | req/s page 1 / this |\n|---|---:|---:|---:|---:|---:|\n")
	first := rs[0].Res
	for _, r := range rs {
		fmt.Fprintf(w, "| %s | %.0f | %s | %s | %.2f | %.2f |\n", r.Case, r.Res.RPS, ms(r.Res.P50), ms(r.Res.P99),
			ratio(float64(r.Res.P50), float64(first.P50)), ratio(first.RPS, r.Res.RPS))
	}
	c := rs[2].Res
	ok := ratio(float64(c.P50), float64(first.P50)) <= w6Max && ratio(first.RPS, c.RPS) <= w6Max
	fmt.Fprintf(w, "\nTarget: the continued page within %.1f× of page 1 (p50 and req/s): %s.\n", w6Max, verdict(ok))
}
