package engine

import (
	"context"
	"database/sql"

	"gorm.io/gorm"
)

// pgConnPool is GORM's connection pool on PostgreSQL: database/sql over the pgx pool, whose
// transactions keep their connection at hand (pgTx), so that a bulk load in a transaction
// can COPY on it.
type pgConnPool struct{ *sql.DB }

var (
	_ gorm.ConnPoolBeginner = pgConnPool{}
	_ gorm.GetDBConnector   = pgConnPool{}
	_ gorm.TxCommitter      = (*pgTx)(nil)
)

// GetDBConn gives GORM's DB() the database/sql pool.
func (p pgConnPool) GetDBConn() (*sql.DB, error) { return p.DB, nil }

// BeginTx begins a transaction on a connection of its own.
func (p pgConnPool) BeginTx(ctx context.Context, opts *sql.TxOptions) (gorm.ConnPool, error) {
	conn, err := p.DB.Conn(ctx)
	if err != nil {
		return nil, err
	}
	tx, err := conn.BeginTx(ctx, opts)
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &pgTx{Tx: tx, conn: conn}, nil
}

// pgTx is a transaction with its connection (for Raw access to pgx).
type pgTx struct {
	*sql.Tx
	conn *sql.Conn
}

func (t *pgTx) Commit() error {
	err := t.Tx.Commit()
	t.conn.Close()
	return err
}

func (t *pgTx) Rollback() error {
	err := t.Tx.Rollback()
	t.conn.Close()
	return err
}
