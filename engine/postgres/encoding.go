package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// serverEncoding is the only PostgreSQL database encoding credo serves: contains filters
// compare code points (credo/engine's fold.go), and text beyond ASCII is stored as sent only
// in UTF8.
const serverEncoding = "UTF8"

// checkEncoding refuses every connection of the request pool to a database whose encoding is
// not UTF8 (PostgreSQL reports it when a connection starts, so this costs no statement), so
// that start-up fails with the reason rather than filters missing and text mangled later.
func checkEncoding(_ context.Context, c *pgx.Conn) error {
	if enc := c.PgConn().ParameterStatus("server_encoding"); enc != serverEncoding {
		return fmt.Errorf("the database's encoding is %s; credo needs %s (CREATE DATABASE … ENCODING '%s')", enc, serverEncoding, serverEncoding)
	}
	return nil
}
