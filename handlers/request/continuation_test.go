package request_test

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"credo/engine"
	_ "credo/engine/validator" // the descriptors' validate tags
	"credo/handlers/request"
)

// TestContinuationBindsItsQuery: a token reads back with the query, partition, group, kind and
// scope it was issued for, and with any one of them changed, or one byte of it altered, it is
// a 400 naming Continue.
func TestContinuationBindsItsQuery(t *testing.T) {
	reg, err := engine.Load(os.DirFS("../../testdata/descriptors/fixture"))
	if err != nil {
		t.Fatal(err)
	}
	w := reg.MustByName("Widget")
	key := bytes.Repeat([]byte{7}, 32)
	const base = "WidgetCode=A&Sort=WidgetSize desc&Take=5&Includes=WidgetCode,WidgetSize"
	parse := func(raw string) engine.Query {
		v, err := url.ParseQuery(raw)
		if err != nil {
			t.Fatal(err)
		}
		q, err := request.ListQuery(w, v, request.KindList)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	c := request.Continuation{Key: key, Partition: "e01", Resource: w, Kind: request.KindList, Scope: engine.Organization("org-a")}
	q := parse(base)
	at := engine.Cursor{nil, "0190a6f0-0000-7000-8000-00000000000a"}
	tok, err := c.Token(q, 3, at)
	if err != nil {
		t.Fatal(err)
	}
	page, after, err := c.Read(parse(base), tok)
	if err != nil || page != 3 || len(after) != 2 || after[0] != nil || after[1] != at[1] {
		t.Fatalf("Read = %d %v %v, want page 3 at %v", page, after, err, at)
	}
	csv := parse(base)
	csv.Format = engine.FormatCSV
	other := map[string]struct {
		c request.Continuation
		q engine.Query
	}{
		"partition": {withC(c, func(c *request.Continuation) { c.Partition = "e02" }), q},
		"key":       {withC(c, func(c *request.Continuation) { c.Key = bytes.Repeat([]byte{8}, 32) }), q},
		"kind":      {withC(c, func(c *request.Continuation) { c.Kind = request.KindSearch }), q},
		"scope":     {withC(c, func(c *request.Continuation) { c.Scope = engine.Organization("org-b") }), q},
		"all orgs":  {withC(c, func(c *request.Continuation) { c.Scope = engine.AllOrganizations() }), q},
		"group":     {withC(c, func(c *request.Continuation) { c.Resource = reg.MustByName("WidgetPart") }), q},
		"filter":    {c, parse("WidgetCode=B&Sort=WidgetSize desc&Take=5&Includes=WidgetCode,WidgetSize")},
		"no filter": {c, parse("Sort=WidgetSize desc&Take=5&Includes=WidgetCode,WidgetSize")},
		"sort":      {c, parse("WidgetCode=A&Sort=WidgetSize&Take=5&Includes=WidgetCode,WidgetSize")},
		"take":      {c, parse("WidgetCode=A&Sort=WidgetSize desc&Take=6&Includes=WidgetCode,WidgetSize")},
		"includes":  {c, parse("WidgetCode=A&Sort=WidgetSize desc&Take=5&Includes=WidgetSize,WidgetCode")},
		"format":    {c, csv},
	}
	for what, o := range other {
		if _, _, err := o.c.Read(o.q, tok); !namesContinue(err) {
			t.Errorf("another %s: %v, want a problem naming Continue", what, err)
		}
	}
	for i := range len(tok) {
		b := []byte(tok)
		b[i] ^= 1
		if _, _, err := c.Read(q, string(b)); !namesContinue(err) {
			t.Errorf("token altered at %d: %v, want a problem naming Continue", i, err)
		}
	}
	// encoding/base64 skips CR and LF even in Strict mode: a token with a line break in it is
	// another text for the same token, which Read must refuse as it refuses any other.
	for _, bad := range []string{"", "AQ", "!!!", tok[:len(tok)-1], tok + "\n", tok + "\r\n", "\n" + tok, tok[:9] + "\r" + tok[9:]} {
		if _, _, err := c.Read(q, bad); !namesContinue(err) {
			t.Errorf("token %q: %v, want a problem naming Continue", bad, err)
		}
	}
	if _, err := (request.Continuation{Partition: "e01", Resource: w}).Token(q, 2, at); err == nil {
		t.Error("a token signed without a key")
	}
}

// TestTakeContinue: Continue is taken out of the query, once, not empty, not with Page.
func TestTakeContinue(t *testing.T) {
	for raw, ok := range map[string]bool{
		"Take=5":                     true,
		"Take=5&Continue=abc":        true,
		"Continue=abc&Continue=abc":  false,
		"Continue=":                  false,
		"Continue=abc&Page=2":        false,
		"Continue=abc&Filter.Page=2": false,
		"Continue=" + string(make([]byte, request.MaxContinueLength+1)): false,
	} {
		v, _ := url.ParseQuery(raw)
		tok, err := request.TakeContinue(v)
		if ok != (err == nil) || (err != nil && !namesContinue(err)) {
			t.Errorf("TakeContinue(%.40q) = %q, %v", raw, tok, err)
		}
		if v.Has("Continue") {
			t.Errorf("TakeContinue(%.40q) left Continue in the query", raw)
		}
	}
}

func withC(c request.Continuation, f func(*request.Continuation)) request.Continuation {
	f(&c)
	return c
}

func namesContinue(err error) bool {
	var verr *engine.ValidationError
	return errors.As(err, &verr) && len(verr.Fields["Continue"]) > 0
}

// TestContinuationTokenIsStable pins one token byte for byte: a client walking a list holds
// tokens across a rolling upgrade, so the MAC's input and the token's encoding must not change
// between releases unless continueVersion does.
func TestContinuationTokenIsStable(t *testing.T) {
	reg, err := engine.Load(os.DirFS("../../testdata/descriptors/fixture"))
	if err != nil {
		t.Fatal(err)
	}
	w := reg.MustByName("Widget")
	v, _ := url.ParseQuery("WidgetCode=A&WidgetSize=3&Sort=WidgetSize desc&Take=5&Includes=WidgetCode,WidgetSize")
	q, err := request.ListQuery(w, v, request.KindList)
	if err != nil {
		t.Fatal(err)
	}
	c := request.Continuation{Key: bytes.Repeat([]byte{7}, 32), Partition: "e01", Resource: w, Kind: request.KindList, Scope: engine.Organization("org-a")}
	tok, err := c.Token(q, 3, engine.Cursor{int64(4), "0190a6f0-0000-7000-8000-00000000000a"})
	if err != nil {
		t.Fatal(err)
	}
	const want = "AXsiUGFnZSI6MywiQWZ0ZXIiOls0LCIwMTkwYTZmMC0wMDAwLTcwMDAtODAwMC0wMDAwMDAwMDAwMGEiXX0vkqWoxGziIJcQoaYvCz8z0eGR8OmDo2zv2wMcLvd-0g"
	if tok != want {
		t.Errorf("token\n got %s\nwant %s", tok, want)
	}
}

// TestContinuationUnderConcurrency: tokens signed and read by many goroutines at once, with
// two partitions' keys, are each the token signed alone and read back (the signers are pooled
// per key; run with -race).
func TestContinuationUnderConcurrency(t *testing.T) {
	reg, err := engine.Load(os.DirFS("../../testdata/descriptors/fixture"))
	if err != nil {
		t.Fatal(err)
	}
	w := reg.MustByName("Widget")
	v, _ := url.ParseQuery("WidgetCode=A&Sort=WidgetSize desc&Take=5")
	q, err := request.ListQuery(w, v, request.KindList)
	if err != nil {
		t.Fatal(err)
	}
	conts := []request.Continuation{
		{Key: bytes.Repeat([]byte{7}, 32), Partition: "e01", Resource: w, Kind: request.KindList, Scope: engine.Organization("org-a")},
		{Key: bytes.Repeat([]byte{9}, 40), Partition: "e02", Resource: w, Kind: request.KindList, Scope: engine.Organization("org-a")},
	}
	at := func(i int) engine.Cursor {
		return engine.Cursor{int64(i), fmt.Sprintf("0190a6f0-0000-7000-8000-%012d", i)}
	}
	want := make([][]string, len(conts))
	for k, c := range conts {
		for i := range 50 {
			tok, err := c.Token(q, i+2, at(i))
			if err != nil {
				t.Fatal(err)
			}
			want[k] = append(want[k], tok)
		}
	}
	var wg sync.WaitGroup
	var bad atomic.Int64
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := range 400 {
				k, i := (g+n)%2, n%50
				tok, err := conts[k].Token(q, i+2, at(i))
				if err != nil || tok != want[k][i] {
					bad.Add(1)
					continue
				}
				page, after, err := conts[k].Read(q, tok)
				if err != nil || page != i+2 || after[1] != at(i)[1] {
					bad.Add(1)
				}
				if _, _, err := conts[1-k].Read(q, tok); err == nil {
					bad.Add(1) // the other partition's key must refuse it
				}
			}
		}()
	}
	wg.Wait()
	if n := bad.Load(); n != 0 {
		t.Errorf("%d of 3,200 concurrent signings or readings went wrong", n)
	}
}
