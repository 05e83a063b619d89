package request_test

import (
	"bytes"
	"net/url"
	"os"
	"testing"

	"credo/engine"
	"credo/handlers/request"
)

// BenchmarkContinuationToken signs the token of a page's next page, as every list answer with
// another page does: two filters, a sort and its key position. Run with
//
//	go test -run '^$' -bench . -benchmem ./handlers/request/
func BenchmarkContinuationToken(b *testing.B) {
	reg, err := engine.Load(os.DirFS("../../testdata/descriptors/fixture"))
	if err != nil {
		b.Fatal(err)
	}
	w := reg.MustByName("Widget")
	v, _ := url.ParseQuery("WidgetCode=A&WidgetSize=3&Sort=WidgetSize desc&Take=20")
	q, err := request.ListQuery(w, v, request.KindList)
	if err != nil {
		b.Fatal(err)
	}
	c := request.Continuation{Key: bytes.Repeat([]byte{7}, 32), Partition: "e01", Resource: w, Kind: request.KindList, Scope: engine.Organization("org-a")}
	at := engine.Cursor{int64(4), "0190a6f0-0000-7000-8000-00000000000a"}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Token(q, 2, at); err != nil {
			b.Fatal(err)
		}
	}
}
