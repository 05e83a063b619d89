package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"credo/bench/load"
)

// target is a server the cases run against.
type target struct {
	addr   string
	header []string
}

// commentsPath is the users-comments group under a partition.
func commentsPath(partition string) string { return "/v2/" + partition + "/security/users-comments" }

// loadCase builds one of W1–W4 against t for partition p, picking from w.
func loadCase(name string, t target, p string, w *workload, cfg *config) load.Case {
	c := load.Case{Name: name, Addr: t.addr, Conns: cfg.conns, Warmup: cfg.warmup, Duration: cfg.duration, Want: http.StatusOK}
	base := commentsPath(p)
	switch name {
	case "W1":
		c.Next = func(rng *rand.Rand) load.Request {
			return load.Request{Method: "GET", Target: base + "/" + w.IDs[rng.IntN(len(w.IDs))], Header: t.header}
		}
	case "W2":
		c.Next = func(rng *rand.Rand) load.Request {
			pair := w.Pairs[rng.IntN(len(w.Pairs))]
			return load.Request{Method: "GET", Target: base + "?OrganizationIdentifier=" + pair[0] + "&UserIdentifier=" + pair[1] +
				"&Take=20&Sort=" + url.QueryEscape("CommentCreated desc"), Header: t.header}
		}
	case "W3":
		c.Next = func(rng *rand.Rand) load.Request {
			return load.Request{Method: "GET", Target: base + "/count?OrganizationIdentifier=" + w.Orgs[rng.IntN(len(w.Orgs))], Header: t.header}
		}
	case "W4":
		c.Want = http.StatusCreated
		header := append(append([]string{}, t.header...), "Content-Type: application/json")
		c.Next = func(rng *rand.Rand) load.Request {
			pair := w.Pairs[rng.IntN(len(w.Pairs))]
			body := fmt.Appendf(nil, `{"CommentCreatedBy":%q,"OrganizationIdentifier":%q,"UserIdentifier":%q,"CommentText":"bench create %d"}`,
				w4Author, pair[0], pair[1], rng.IntN(1_000_000))
			return load.Request{Method: "POST", Target: base, Header: header, Body: body}
		}
	default:
		panic("bench: unknown case " + name)
	}
	return c
}

// exportResult is W5: the time to export every gradebook as CSV and download it.
type exportResult struct {
	Mode    string
	Runs    int
	Median  time.Duration
	Bytes   int64
	PeakRSS int64
}

// exportTimeout bounds one export or download.
const exportTimeout = 2 * time.Minute

// runExport times runs exports of every gradebook of p on t. credo answers the export with a
// DownloadUrl that is then fetched (both timed); the reference server streams the file at
// once. Without gradebook export routes (mode "list"), the rows are read as CSV list pages of
// Take=1000 from both servers instead.
func runExport(t target, p string, runs int, mode string, rows int) (exportResult, error) {
	res := exportResult{Mode: mode, Runs: runs}
	var times []time.Duration
	for i := 0; i < runs; i++ {
		t0 := time.Now()
		var n int64
		var err error
		switch mode {
		case "export":
			n, err = exportOnce(t, p)
		case "list":
			n, err = listPages(t, p, rows)
		default:
			return res, fmt.Errorf("bench: unknown export mode %q", mode)
		}
		if err != nil {
			return res, err
		}
		times = append(times, time.Since(t0))
		res.Bytes = n
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	res.Median = times[len(times)/2]
	return res, nil
}

func exportOnce(t target, p string) (int64, error) {
	status, body, err := load.Once(t.addr, load.Request{Method: "GET", Target: "/v2/" + p + "/progress/gradebooks/export?Format=csv", Header: t.header}, exportTimeout)
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("export answered %d: %s", status, body)
	}
	if !bytes.HasPrefix(body, []byte("{")) { // the reference server streams the file itself
		return int64(len(body)), nil
	}
	var ex struct{ DownloadUrl string }
	if err := json.Unmarshal(body, &ex); err != nil || ex.DownloadUrl == "" {
		return 0, fmt.Errorf("export answered %s, want a DownloadUrl", body)
	}
	// The download is the CSV file itself: ask for it rather than for JSON.
	header := []string{"Accept: text/csv"}
	for _, h := range t.header {
		if !strings.HasPrefix(h, "Accept:") {
			header = append(header, h)
		}
	}
	status, n, err := load.Fetch(t.addr, load.Request{Method: "GET", Target: ex.DownloadUrl, Header: header}, exportTimeout)
	if err != nil {
		return 0, err
	}
	if status != http.StatusOK {
		return 0, fmt.Errorf("download answered %d", status)
	}
	return n, nil
}

// listPages reads rows gradebooks as CSV pages of 1000.
func listPages(t target, p string, rows int) (int64, error) {
	var total int64
	for page := 1; (page-1)*1000 < rows; page++ {
		status, n, err := load.Fetch(t.addr, load.Request{Method: "GET",
			Target: fmt.Sprintf("/v2/%s/progress/gradebooks?Format=csv&Take=1000&Page=%d", p, page), Header: t.header}, exportTimeout)
		if err != nil {
			return 0, err
		}
		if status != http.StatusOK {
			return 0, fmt.Errorf("gradebooks page %d answered %d", page, status)
		}
		total += n
	}
	return total, nil
}

// exportMode tells whether credo offers gradebook export ("export") or not ("list").
func exportMode(t target, p string) (string, error) {
	status, _, err := load.Once(t.addr, load.Request{Method: "GET", Target: "/v2/" + p + "/progress/gradebooks/export?Format=csv&Take=1", Header: t.header}, exportTimeout)
	if err != nil {
		return "", err
	}
	if status == http.StatusOK {
		return "export", nil
	}
	return "list", nil
}
