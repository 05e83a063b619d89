package load

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"time"
)

// conn is one keep-alive HTTP/1.1 connection. It writes pre-rendered requests and reads just
// enough of each response (status, framing headers, body) to reuse the connection: far less
// client work per request than net/http's Transport, so that the client takes little of the
// CPU that the server and the database need on a small machine.
type conn struct {
	addr string
	c    net.Conn
	br   *bufio.Reader
}

// dialTimeout bounds connecting to the server under test.
const dialTimeout = 5 * time.Second

func (c *conn) dial() error {
	nc, err := net.DialTimeout("tcp", c.addr, dialTimeout)
	if err != nil {
		return err
	}
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c.c = nc
	if c.br == nil {
		c.br = bufio.NewReaderSize(nc, 64<<10)
	} else {
		c.br.Reset(nc)
	}
	return nil
}

func (c *conn) close() {
	if c.c != nil {
		_ = c.c.Close()
		c.c = nil
	}
}

// response is what the driver keeps of a response.
type response struct {
	status int
	bytes  int64
	// body holds the body only when asked for (keepBody).
	body []byte
}

// do sends req and reads its response; head says the request was a HEAD (no body follows).
// A connection the server closes, or a broken one, is redialled once per request.
func (c *conn) do(req []byte, head, keepBody bool, deadline time.Time) (response, error) {
	for attempt := 0; ; attempt++ {
		if c.c == nil {
			if err := c.dial(); err != nil {
				return response{}, err
			}
		}
		_ = c.c.SetDeadline(deadline)
		resp, reuse, err := c.roundTrip(req, head, keepBody)
		if err == nil {
			if !reuse {
				c.close()
			}
			return resp, nil
		}
		c.close()
		// A keep-alive connection the server timed out fails on its first read: retry once.
		if attempt > 0 || !errors.Is(err, io.EOF) {
			return response{}, err
		}
	}
}

func (c *conn) roundTrip(req []byte, head, keepBody bool) (response, bool, error) {
	if _, err := c.c.Write(req); err != nil {
		return response{}, false, err
	}
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		return response{}, false, err
	}
	// "HTTP/1.1 200 OK\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return response{}, false, fmt.Errorf("load: malformed status line %q", line)
	}
	status, err := strconv.Atoi(string(line[9:12]))
	if err != nil {
		return response{}, false, fmt.Errorf("load: malformed status line %q", line)
	}
	length, chunked, reuse := int64(-1), false, line[7] == '1'
	for {
		h, err := c.br.ReadSlice('\n')
		if err != nil {
			return response{}, false, err
		}
		if len(h) <= 2 {
			break
		}
		name, value, ok := bytes.Cut(h, []byte(":"))
		if !ok {
			return response{}, false, fmt.Errorf("load: malformed header %q", h)
		}
		value = bytes.TrimSpace(value)
		switch {
		case asciiEqualFold(name, "content-length"):
			n, err := strconv.ParseInt(string(value), 10, 64)
			if err != nil || n < 0 {
				return response{}, false, fmt.Errorf("load: bad Content-Length %q", value)
			}
			length = n
		case asciiEqualFold(name, "transfer-encoding"):
			chunked = asciiEqualFold(value, "chunked")
		case asciiEqualFold(name, "connection"):
			if asciiEqualFold(value, "close") {
				reuse = false
			}
		}
	}
	resp := response{status: status}
	if head || status == 204 || status == 304 || status/100 == 1 {
		return resp, reuse, nil
	}
	var sink io.Writer = io.Discard
	var buf *bytes.Buffer
	if keepBody {
		buf = &bytes.Buffer{}
		sink = buf
	}
	switch {
	case chunked:
		for {
			sz, err := c.br.ReadSlice('\n')
			if err != nil {
				return response{}, false, err
			}
			sz, _, _ = bytes.Cut(bytes.TrimSpace(sz), []byte(";"))
			n, err := strconv.ParseInt(string(sz), 16, 64)
			if err != nil || n < 0 {
				return response{}, false, fmt.Errorf("load: bad chunk size %q", sz)
			}
			if n == 0 {
				for { // trailers up to the blank line
					t, err := c.br.ReadSlice('\n')
					if err != nil {
						return response{}, false, err
					}
					if len(t) <= 2 {
						break
					}
				}
				break
			}
			if _, err := io.CopyN(sink, c.br, n); err != nil {
				return response{}, false, err
			}
			resp.bytes += n
			if _, err := c.br.Discard(2); err != nil {
				return response{}, false, err
			}
		}
	case length >= 0:
		if _, err := io.CopyN(sink, c.br, length); err != nil {
			return response{}, false, err
		}
		resp.bytes = length
	default: // the body runs to the end of the connection
		n, err := io.Copy(sink, c.br)
		if err != nil {
			return response{}, false, err
		}
		resp.bytes, reuse = n, false
	}
	if buf != nil {
		resp.body = buf.Bytes()
	}
	return resp, reuse, nil
}

func asciiEqualFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := 0; i < len(b); i++ {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
