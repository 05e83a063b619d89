package handlers

import "sync"

// maxPooledBody is the largest buffer bodies keeps: a larger page is encoded into a buffer of
// its own, which the collector takes back, so that one large answer does not stay resident.
const maxPooledBody = 256 << 10

// bodies recycles the buffers that JSON answers are encoded into. A page of 20 comments grew
// its buffer by doubling from a guess, a third of the bytes a list allocated; with the pool a
// list or a get encodes into a buffer that an earlier answer left, and allocates none.
var bodies = sync.Pool{New: func() any { b := make([]byte, 0, 4<<10); return &b }}

// poisonReleased makes releaseBody overwrite every buffer it is given. The package's tests set
// it (poison_test.go): an answer that still reads its buffer after releasing it then fails
// every test that makes it, not only when another request happens to take the buffer first.
var poisonReleased bool

// bodyBuffer returns an empty buffer from the pool; releaseBody gives it back once written.
func bodyBuffer() *[]byte {
	b := bodies.Get().(*[]byte)
	*b = (*b)[:0]
	return b
}

// releaseBody returns b, grown to hold grown, to the pool unless it outgrew maxPooledBody. The
// answer must have been written: net/http's HTTP/1.1 writer has copied or sent the bytes when
// Write returns (credo serves no HTTP/2, whose writer could still read them).
func releaseBody(b *[]byte, grown []byte) {
	if poisonReleased {
		g := grown[:cap(grown)]
		for i := range g {
			g[i] = 0xff // never valid UTF-8, so never a valid answer
		}
	}
	if cap(grown) > maxPooledBody {
		return
	}
	*b = grown
	bodies.Put(b)
}
