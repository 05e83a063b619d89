package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// dropSchemas drops the PostgreSQL schemas of the bench partitions (names are constants).
func dropSchemas(ctx context.Context, dbURL string, schemas []string) error {
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, s := range schemas {
		if _, err := conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{s}.Sanitize()+" CASCADE"); err != nil {
			return fmt.Errorf("drop schema %s: %w", s, err)
		}
	}
	return nil
}
